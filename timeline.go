package paylink

import (
	"context"
	"errors"
	"slices"
	"time"
)

// Timeline entry kinds, one per source of the payment's history.
const (
	TimelineEvent          = "event"           // a step of the payment's or a refund's state history (Event)
	TimelineRefund         = "refund"          // a refund was asked for (Refund)
	TimelinePosting        = "posting"         // a ledger posting (Posting)
	TimelineWebhook        = "webhook"         // a webhook delivery was queued (Delivery)
	TimelineWebhookAttempt = "webhook_attempt" // an attempt to deliver it, with the status code (Delivery, Attempt)
	TimelineAudit          = "audit"           // an audit row about the payment or a refund (Audit)
)

// TimelineEntry is one thing that happened to a payment. Exactly the
// fields its Kind names are set.
type TimelineEntry struct {
	At       time.Time
	Kind     string
	Event    *Event
	Refund   *Refund
	Posting  *Posting
	Delivery *WebhookDelivery
	Attempt  *WebhookAttempt
	Audit    *AuditEvent
}

// Timeline is a payment and everything that happened to it, oldest
// first: the dashboard's payment page.
type Timeline struct {
	Transaction *Transaction
	Refunds     []*Refund
	Entries     []TimelineEntry
	// Staff are the emails, by user id, of the staff users who acted on
	// the payment (audit rows); a user removed since is missing.
	Staff map[string]string
}

// PaymentTimeline gathers, in one consistent read, the history of m's
// payment ref: its history events and its refunds' (the events table),
// its refunds, its ledger postings, its webhook deliveries with every
// attempt, and the audit rows about it and its refunds, ordered by time
// (ties keep that order). Another merchant's reference is not found.
func (s *Service) PaymentTimeline(ctx context.Context, m *Merchant, ref string) (*Timeline, error) {
	tl := &Timeline{}
	err := s.store.Snapshot(ctx, func(tx Tx) error {
		var err error
		if tl.Transaction, err = tx.Transaction(m.ID, ref); err != nil {
			return err
		}
		if tl.Refunds, err = tx.RefundsOf(m.ID, ref); err != nil {
			return err
		}
		refs := []string{ref}
		for _, r := range tl.Refunds {
			refs = append(refs, r.Reference)
			tl.add(TimelineEntry{At: r.CreatedAt, Kind: TimelineRefund, Refund: r})
		}
		return tl.gather(tx, m.ID, refs)
	})
	if errors.Is(err, ErrNotFound) {
		return nil, Errorf(KindNotFound, CodeNotFound, "no payment with reference %q", MaskCardNumbers(ref))
	}
	if err != nil {
		return nil, Internal("payment timeline", err)
	}
	slices.SortStableFunc(tl.Entries, func(a, b TimelineEntry) int { return a.At.Compare(b.At) })
	return tl, nil
}

func (tl *Timeline) add(e TimelineEntry) { tl.Entries = append(tl.Entries, e) }

// gather adds the events, postings, webhooks and audit rows of the
// payment and its refunds (refs).
func (tl *Timeline) gather(tx Tx, merchantID string, refs []string) error {
	events, err := tx.Events(merchantID, refs)
	if err != nil {
		return err
	}
	for _, e := range events {
		tl.add(TimelineEntry{At: e.CreatedAt, Kind: TimelineEvent, Event: e})
	}
	postings, err := tx.PostingsOf(refs[0])
	if err != nil {
		return err
	}
	for _, p := range postings {
		if p.MerchantID == merchantID {
			tl.add(TimelineEntry{At: p.CreatedAt, Kind: TimelinePosting, Posting: p})
		}
	}
	if err := tl.gatherWebhooks(tx, merchantID, refs[0]); err != nil {
		return err
	}
	audit, err := tx.AuditEventsAbout(merchantID, refs)
	if err != nil {
		return err
	}
	for _, a := range audit {
		tl.add(TimelineEntry{At: a.At, Kind: TimelineAudit, Audit: a})
	}
	return tl.nameStaff(tx, merchantID, audit)
}

// nameStaff fills Staff for the staff actors of audit, reading the team
// only when there is one.
func (tl *Timeline) nameStaff(tx Tx, merchantID string, audit []*AuditEvent) error {
	if !slices.ContainsFunc(audit, func(a *AuditEvent) bool { return a.ActorKind == ActorStaff }) {
		return nil
	}
	users, err := tx.Users(merchantID)
	if err != nil {
		return err
	}
	tl.Staff = make(map[string]string, len(users))
	for _, u := range users {
		tl.Staff[u.ID] = u.Email
	}
	return nil
}

// gatherWebhooks adds the payment's webhook deliveries and their attempts.
func (tl *Timeline) gatherWebhooks(tx Tx, merchantID, ref string) error {
	ds, err := tx.ListWebhookDeliveries(WebhookFilter{MerchantID: merchantID, Reference: ref, Limit: maxTimelineWebhooks})
	if err != nil {
		return err
	}
	attempts, err := deliveryAttempts(tx, ds)
	if err != nil {
		return err
	}
	for _, d := range ds {
		tl.add(TimelineEntry{At: d.CreatedAt, Kind: TimelineWebhook, Delivery: d})
		for _, a := range attempts[d.ID] {
			tl.add(TimelineEntry{At: a.StartedAt, Kind: TimelineWebhookAttempt, Delivery: d, Attempt: a})
		}
	}
	return nil
}

// maxTimelineWebhooks bounds the deliveries a timeline shows: a payment
// has a handful (one per status it reached and target).
const maxTimelineWebhooks = 100

// deliveryAttempts reads the attempts of ds in one query, by delivery id.
func deliveryAttempts(tx Tx, ds []*WebhookDelivery) (map[string][]*WebhookAttempt, error) {
	out := map[string][]*WebhookAttempt{}
	if len(ds) == 0 {
		return out, nil
	}
	ids := make([]string, len(ds))
	for i, d := range ds {
		ids[i] = d.ID
	}
	as, err := tx.WebhookAttempts(ids...)
	if err != nil {
		return nil, err
	}
	for _, a := range as {
		out[a.DeliveryID] = append(out[a.DeliveryID], a)
	}
	return out, nil
}
