package paylink

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// LinkStatus is the state of a payment link. Only unpaid, paid and
// cancelled are stored; expired is an unpaid link past its expiry.
type LinkStatus string

// Payment link states.
const (
	LinkUnpaid    LinkStatus = "unpaid"
	LinkPaid      LinkStatus = "paid"
	LinkCancelled LinkStatus = "cancelled"
	LinkExpired   LinkStatus = "expired"
)

// Payment link limits.
const (
	// LinkAttemptLimit is how many payment attempts a link accepts in one
	// LinkAttemptWindow, so that a link cannot be used for card testing.
	LinkAttemptLimit  = 5
	LinkAttemptWindow = 15 * time.Minute
	// MaxLinkLifetime bounds an explicit expiry.
	MaxLinkLifetime = 366 * 24 * time.Hour
	// linkTokenLength gives each page URL about 190 bits of entropy.
	linkTokenLength = 32
)

// PaymentLink is a request for payment that a customer pays on the hosted
// page (url) or staff take by phone in the virtual terminal.
type PaymentLink struct {
	ID                string
	MerchantID        string
	Status            LinkStatus // stored state: unpaid, paid or cancelled
	Version           int64      // compare-and-set guard, incremented by every update
	Amount            int64
	Currency          string
	MerchantReference string
	ApplySurcharge    bool
	Customer          Customer
	WebhookURL        string
	PageTokenHash     []byte       // SHA-256 of the hosted page token
	VTTokenHash       []byte       // SHA-256 of the virtual terminal token
	Tokens            SealedSecret // both page tokens, sealed, to show the URLs again
	CSRFSecret        string       // per-link key of the pages' CSRF tokens
	Attempts          int          // payment attempts ever started
	WindowStart       time.Time    // start of the current rate-limit window
	WindowAttempts    int          // attempts started in that window
	ClaimedAt         time.Time    // an attempt is in progress since; zero when free
	// ClaimReference is the transaction of the attempt holding the claim:
	// only that attempt may complete on the link or release it.
	ClaimReference string
	PaidReference  string // the APPROVED transaction
	CreatedAt      time.Time
	UpdatedAt      time.Time
	ExpiresAt      time.Time // zero: never expires
	PaidAt         time.Time
	CancelledAt    time.Time
}

// State is the link's status at now, expired included.
func (l *PaymentLink) State(now time.Time) LinkStatus {
	if l.Status == LinkUnpaid && !l.ExpiresAt.IsZero() && !now.Before(l.ExpiresAt) {
		return LinkExpired
	}
	return l.Status
}

// busy reports whether an unexpired attempt holds the link at now; a
// claim lasts timeout (the authentication timeout), so a crashed or
// abandoned attempt frees the link after it.
func (l *PaymentLink) busy(now time.Time, timeout time.Duration) bool {
	return !l.ClaimedAt.IsZero() && now.Sub(l.ClaimedAt) < timeout
}

// heldBy reports whether the attempt of transaction ref holds the link at now.
func (l *PaymentLink) heldBy(ref string, now time.Time, timeout time.Duration) bool {
	return ref != "" && l.ClaimReference == ref && l.busy(now, timeout)
}

// release frees the link's claim.
func (l *PaymentLink) release() {
	l.ClaimedAt, l.ClaimReference = time.Time{}, ""
}

// LinkURLs are the two addresses of a link.
type LinkURLs struct {
	Page            string // url: the hosted payment page
	VirtualTerminal string // virtual_terminal_url
}

// linkTokens is the sealed form of the page tokens.
type linkTokens struct {
	Page string `json:"page"`
	VT   string `json:"vt"`
}

// NewLink is a payment link to create, as decoded by an adapter.
type NewLink struct {
	CompanyToken      string // optional; checked when sent
	Amount            int64
	Currency          string
	MerchantReference string
	Customer          Customer
	WebhookURL        string
	ExpiresAt         time.Time // zero: never
	NoSurcharge       bool      // true: the page adds no surcharge
}

// validate checks a new link against the rules that need no database.
func (n *NewLink) validate(m *Merchant, now time.Time) error {
	f := FieldErrors{}
	checkMoney(f, "", n.Amount, n.Currency)
	if strings.TrimSpace(n.MerchantReference) == "" {
		f.Add("merchantReference", "is required")
	}
	checkField(f, "merchantReference", n.MerchantReference, MaxFieldLength)
	checkInvoice(f, "merchantReference", n.MerchantReference) // the payment's invoice number
	checkLinkCustomer(f, "customer.", n.Customer)
	if !n.ExpiresAt.IsZero() && !n.ExpiresAt.After(now) {
		f.Add("expires_at", "must be in the future")
	}
	if n.ExpiresAt.Sub(now) > MaxLinkLifetime {
		f.Add("expires_at", fmt.Sprintf("must be within %d days", int(MaxLinkLifetime.Hours()/24)))
	}
	if err := f.Err(); err != nil {
		return err
	}
	return checkWebhookURL(m, n.WebhookURL)
}

// CheckLinkCustomer checks customer details typed into a hosted page by
// the rules its payment applies: the page checks them before it offers a
// wallet's sheet or Zip's approval, so that a detail the payment would
// refuse is heard of before the customer approves, not after.
func CheckLinkCustomer(c Customer) error {
	f := FieldErrors{}
	checkLinkCustomer(f, "customer.", c)
	return f.Err()
}

// checkLinkCustomer validates the optional customer details of a link or
// of the hosted page's form.
func checkLinkCustomer(f FieldErrors, prefix string, c Customer) {
	checkCustomerFields(f, prefix, c)
	if c.CountryCode != "" && !IsCountryCode(c.CountryCode) {
		f.Add(prefix+"country_code", "must be an ISO 3166-1 alpha-2 code such as AU")
	}
}

// checkWebhookURL requires a dynamic webhook to be an absolute http(s)
// address whose host is on the merchant's webhook whitelist, by the same
// rule the dispatcher applies at delivery (CheckWebhookURL).
func checkWebhookURL(m *Merchant, raw string) error {
	if raw == "" {
		return nil
	}
	_, err := CheckWebhookURL(raw, m.Settings.Webhook.Domains)
	switch {
	case errors.Is(err, errNotWhitelisted):
		return &Error{Kind: KindInvalid, Code: CodeWebhookNotWhitelisted,
			Message: "the webhook_url's domain is not on this merchant's webhook whitelist: ask support to add it first",
			Fields:  map[string]string{"webhook_url": "domain is not whitelisted"}}
	case err != nil:
		return &Error{Kind: KindInvalid, Code: CodeInvalidRequest, Message: "webhook_url " + err.Error(),
			Fields: map[string]string{"webhook_url": err.Error()}}
	}
	return nil
}

// CreateLink creates a payment link and returns it with its two URLs.
func (s *Service) CreateLink(ctx context.Context, m *Merchant, n NewLink) (*PaymentLink, LinkURLs, error) {
	if n.CompanyToken != "" {
		if err := s.CheckCompanyToken(ctx, m, n.CompanyToken); err != nil {
			return nil, LinkURLs{}, err
		}
	}
	now := s.now()
	if err := n.validate(m, now); err != nil {
		return nil, LinkURLs{}, err
	}
	l, toks, err := s.newLink(m, n, now)
	if err != nil {
		return nil, LinkURLs{}, Internal("create payment link", err)
	}
	err = s.updateCreating(ctx, func(tx Tx) error {
		if err := tx.CreatePaymentLink(l); err != nil {
			return err
		}
		return s.audit(ctx, tx, AuditEvent{MerchantID: m.ID, Action: AuditLinkCreate, ObjectType: ObjectPaymentLink,
			ObjectID: l.ID, Outcome: OutcomeSuccess, Detail: auditMoney("", l.Amount, l.Currency)})
	}, func(tx Tx) (bool, error) { return found(tx.PaymentLink(m.ID, l.ID)) })
	if err != nil {
		return nil, LinkURLs{}, Internal("create payment link", err)
	}
	return l, s.linkURLs(toks), nil
}

// newLink builds an unpaid link with fresh page tokens.
func (s *Service) newLink(m *Merchant, n NewLink, now time.Time) (*PaymentLink, linkTokens, error) {
	var toks linkTokens
	id, err := s.reference("lnk_")
	if err != nil {
		return nil, toks, err
	}
	if toks.Page, err = s.randomToken(linkTokenLength); err != nil {
		return nil, toks, err
	}
	if toks.VT, err = s.randomToken(linkTokenLength); err != nil {
		return nil, toks, err
	}
	csrf, err := s.randomToken(linkTokenLength)
	if err != nil {
		return nil, toks, err
	}
	plain, err := json.Marshal(toks)
	if err != nil {
		return nil, toks, err
	}
	sealed, err := s.vault.Seal(plain, SecretBinding(SecretLinkTokens, m.ID, id))
	if err != nil {
		return nil, toks, err
	}
	cur, _ := LookupCurrency(n.Currency)
	return &PaymentLink{
		ID: id, MerchantID: m.ID, Status: LinkUnpaid, Amount: n.Amount, Currency: cur.Code,
		MerchantReference: n.MerchantReference, ApplySurcharge: !n.NoSurcharge, Customer: n.Customer,
		WebhookURL: n.WebhookURL, PageTokenHash: HashSecret(toks.Page), VTTokenHash: HashSecret(toks.VT),
		Tokens: sealed, CSRFSecret: csrf, CreatedAt: now, UpdatedAt: now, ExpiresAt: n.ExpiresAt,
	}, toks, nil
}

// linkURLs are the page addresses of a link's tokens.
func (s *Service) linkURLs(t linkTokens) LinkURLs {
	base := strings.TrimRight(s.cfg.BaseURL, "/")
	return LinkURLs{Page: base + "/pay/" + t.Page, VirtualTerminal: base + "/vt/" + t.VT}
}

var errNoSuchLink = Errorf(KindNotFound, CodeNotFound, "no payment link with that id")

// Link returns a payment link of m and its URLs.
func (s *Service) Link(ctx context.Context, m *Merchant, id string) (*PaymentLink, LinkURLs, error) {
	var l *PaymentLink
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		l, err = tx.PaymentLink(m.ID, id)
		return err
	})
	if errors.Is(err, ErrNotFound) {
		return nil, LinkURLs{}, errNoSuchLink
	}
	if err != nil {
		return nil, LinkURLs{}, Internal("load payment link", err)
	}
	urls, err := s.openLinkURLs(l)
	return l, urls, err
}

// MaxLinkList bounds the links ListLinks returns: the dashboard shows
// the newest ones; older links are found by id.
const MaxLinkList = 100

// ListLinks returns m's newest links (at most MaxLinkList), for the
// dashboard's links page.
func (s *Service) ListLinks(ctx context.Context, m *Merchant, limit int) ([]*PaymentLink, error) {
	if limit <= 0 || limit > MaxLinkList {
		limit = MaxLinkList
	}
	var out []*PaymentLink
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		out, err = tx.PaymentLinks(m.ID, limit)
		return err
	})
	if err != nil {
		return nil, Internal("list payment links", err)
	}
	return out, nil
}

// openLinkURLs unseals a link's page tokens.
func (s *Service) openLinkURLs(l *PaymentLink) (LinkURLs, error) {
	plain, err := s.vault.Open(l.Tokens, SecretBinding(SecretLinkTokens, l.MerchantID, l.ID))
	if err != nil {
		return LinkURLs{}, Internal("open payment link tokens", err)
	}
	var toks linkTokens
	if err := json.Unmarshal(plain, &toks); err != nil {
		return LinkURLs{}, Internal("decode payment link tokens", err)
	}
	return s.linkURLs(toks), nil
}

// CancelLink cancels an unpaid link so that it takes no further payment.
// Cancelling a cancelled link changes nothing; a paid link, or one with a
// payment in progress, cannot be cancelled.
func (s *Service) CancelLink(ctx context.Context, m *Merchant, id string) (*PaymentLink, LinkURLs, error) {
	if err := checkStaff(ctx, m.ID, PermLinks); err != nil {
		return nil, LinkURLs{}, err
	}
	var l *PaymentLink
	err := s.store.Update(ctx, func(tx Tx) error {
		var cancelled bool
		var err error
		l, err = changeLink(tx, m.ID, id, func(l *PaymentLink) (bool, error) {
			now := s.now()
			switch {
			case l.Status == LinkCancelled:
				return false, nil
			case l.Status == LinkPaid:
				return false, errLinkPaid
			}
			if err := s.checkNotHeld(tx, l, now); err != nil {
				return false, err
			}
			l.Status, l.CancelledAt, l.UpdatedAt = LinkCancelled, now, now
			cancelled = true
			return true, nil
		})
		if err != nil || !cancelled {
			return err
		}
		return s.audit(ctx, tx, AuditEvent{MerchantID: m.ID, Action: AuditLinkCancel, ObjectType: ObjectPaymentLink,
			ObjectID: l.ID, Outcome: OutcomeSuccess})
	})
	switch {
	case errors.Is(err, ErrNotFound):
		return nil, LinkURLs{}, errNoSuchLink
	case err != nil:
		return nil, LinkURLs{}, asServiceError("cancel payment link", err)
	}
	urls, err := s.openLinkURLs(l)
	return l, urls, err
}

// linkChangeTries bounds how often changeLink reads a link again after
// losing its compare-and-set to another transaction.
const linkChangeTries = 4

// changeLink reads link id of the merchant, lets change decide (a
// refusal, or whether it changed the link) and writes a changed link by
// compare-and-set on its version. On PostgreSQL another transaction may
// change the link between the read and the write: the link is then read
// again and change decides afresh, so the answer follows the state that
// won (cancelled, paid, an attempt in progress) rather than a bare
// conflict. A link still changing after linkChangeTries reads is busy.
func changeLink(tx Tx, merchantID, id string, change func(*PaymentLink) (bool, error)) (*PaymentLink, error) {
	for range linkChangeTries {
		l, err := tx.PaymentLink(merchantID, id)
		if err != nil {
			return nil, err
		}
		write, err := change(l)
		if err != nil || !write {
			return l, err
		}
		if err := tx.UpdatePaymentLink(l); !errors.Is(err, ErrConflict) {
			return l, err
		}
	}
	return nil, errLinkBusy
}

var (
	errLinkPaid      = Errorf(KindConflict, CodeLinkPaid, "this payment link has already been paid")
	errLinkCancelled = Errorf(KindConflict, CodeLinkCancelled, "this payment link has been cancelled")
	errLinkExpired   = Errorf(KindConflict, CodeLinkExpired, "this payment link has expired")
	errLinkBusy      = Errorf(KindConflict, CodeLinkInProgress, "a payment on this link is already in progress")
	errLinkRate      = Errorf(KindRateLimited, CodeRateLimited,
		"too many payment attempts on this link: wait %d minutes before trying again", int(LinkAttemptWindow.Minutes()))
)

// claimLink starts the payment attempt of transaction ref on a link
// inside tx: the link must be unpaid, not cancelled or expired, free of
// another attempt and within its attempt rate limit. The claim is a
// compare-and-set on the link's version (changeLink), so of two tabs
// paying at once exactly one proceeds, and the other is told why.
func (s *Service) claimLink(tx Tx, merchantID, id, ref string) error {
	_, err := changeLink(tx, merchantID, id, func(l *PaymentLink) (bool, error) {
		now := s.now()
		if err := s.linkPayable(tx, l, now); err != nil {
			return false, err
		}
		if err := withinAttempts(l, now); err != nil {
			return false, err
		}
		if now.Sub(l.WindowStart) >= LinkAttemptWindow {
			l.WindowStart, l.WindowAttempts = now, 0
		}
		l.WindowAttempts++
		l.Attempts++
		l.ClaimedAt, l.ClaimReference, l.UpdatedAt = now, ref, now
		return true, nil
	})
	return err
}

// withinAttempts reports errLinkRate when l has used up its attempts in
// the window running at now (LinkAttemptLimit in LinkAttemptWindow).
func withinAttempts(l *PaymentLink, now time.Time) error {
	if now.Sub(l.WindowStart) < LinkAttemptWindow && l.WindowAttempts >= LinkAttemptLimit {
		return errLinkRate
	}
	return nil
}

// linkPayable reports why a link cannot take a new payment at now, or nil.
func (s *Service) linkPayable(tx Tx, l *PaymentLink, now time.Time) error {
	if err := linkOpen(l, now); err != nil {
		return err
	}
	return s.checkNotHeld(tx, l, now)
}

// checkNotHeld is errLinkBusy when an attempt holds link l at now: a
// claim made within the authentication timeout, or an older one whose
// payment's outcome is still in doubt (PROCESSING or UNKNOWN: the
// processor may have taken the money). Such a claim outlasts the timeout
// until recovery records the outcome (approved: the link is paid;
// declined or failed: it is free), so the link is neither paid twice nor
// cancelled under a payment that then turns out approved. Only an old
// claim costs a read.
func (s *Service) checkNotHeld(tx Tx, l *PaymentLink, now time.Time) error {
	switch {
	case l.busy(now, s.cfg.AuthenticationTimeout):
		return errLinkBusy
	case l.ClaimedAt.IsZero():
		return nil
	}
	t, err := claimant(tx, l)
	if err == nil && heldInDoubt(t, true) {
		return errLinkBusy
	}
	return err
}

// heldInDoubt reports whether t, a link's claimant (nil for none), holds
// the link because its outcome is in doubt: UNKNOWN, or PROCESSING once
// the claim is late (past the authentication timeout; within it, an
// attempt the processor may still answer holds the link anyway). Such a
// claim outlasts the timeout until recovery or an operator records the
// outcome.
func heldInDoubt(t *Transaction, late bool) bool {
	return t != nil && (t.Status == StatusUnknown || (t.Status == StatusProcessing && late))
}

// claimant is the transaction whose attempt claims l, nil when the link
// has no claim or its transaction is not stored.
func claimant(tx Tx, l *PaymentLink) (*Transaction, error) {
	if l.ClaimReference == "" {
		return nil, nil
	}
	t, err := tx.Transaction(l.MerchantID, l.ClaimReference)
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	return t, err
}

// linkOpen reports why a link's state refuses payments at now (paid,
// cancelled, expired), or nil.
func linkOpen(l *PaymentLink, now time.Time) error {
	switch l.State(now) {
	case LinkPaid:
		return errLinkPaid
	case LinkCancelled:
		return errLinkCancelled
	case LinkExpired:
		return errLinkExpired
	}
	return nil
}

// linkOutcome applies a link payment's new status to its link, in the
// same database transaction: APPROVED marks the link paid; DECLINED or
// FAILED releases the attempt's claim for another attempt. Other statuses
// (a 3-D Secure challenge) keep the attempt's claim.
func (s *Service) linkOutcome(tx Tx, t *Transaction) error {
	if t.PaymentLinkID == "" {
		return nil
	}
	var err error
	for range linkChangeTries { // re-read when a concurrent writer changed the link
		if err = s.applyLinkOutcome(tx, t); !errors.Is(err, ErrConflict) {
			return err
		}
	}
	return err
}

// applyLinkOutcome moves the link of t once. A link's state only ever
// goes from unpaid to paid or cancelled, never back and never from
// paid to cancelled or the reverse.
func (s *Service) applyLinkOutcome(tx Tx, t *Transaction) error {
	l, err := tx.PaymentLink(t.MerchantID, t.PaymentLinkID)
	if err != nil {
		return err
	}
	now := s.now()
	switch {
	case t.Status == StatusApproved && l.Status != LinkUnpaid:
		return s.approvalOnClosedLink(tx, l, t)
	case t.Status == StatusApproved:
		// Money was taken: the link is paid, even if it expired meanwhile.
		l.Status, l.PaidReference, l.PaidAt = LinkPaid, t.Reference, now
		l.release()
	case (t.Status == StatusDeclined || t.Status == StatusFailed) && l.ClaimReference == t.Reference:
		// Release only this attempt's claim, never a later one's.
		l.release()
	default:
		return nil
	}
	l.UpdatedAt = now
	return tx.UpdatePaymentLink(l)
}

// approvalOnClosedLink records an approval on a link that is already paid
// or cancelled. Every attempt re-checks its link in the database
// transaction that sends it to the processor, and holds the link's claim
// while the processor answers, so this cannot happen unless an
// authorisation outlived the claim. The approval is kept (money moved and
// hiding it would be worse), the link keeps its state, and the mismatch
// is logged as an error and written to the payment's history
// (payment_link.approval_on_closed_link) for someone to refund.
func (s *Service) approvalOnClosedLink(tx Tx, l *PaymentLink, t *Transaction) error {
	s.log.Error("payment approved on a payment link that no longer accepts payments: refund it",
		"reference", t.Reference, "payment_link", l.ID, "link_status", l.Status, "paid_reference", l.PaidReference)
	return s.recordEvent(tx, t.MerchantID, t.Reference, "payment_link.approval_on_closed_link", map[string]any{
		"payment_link": l.ID, "link_status": l.Status, "paid_reference": l.PaidReference, "version": t.Version,
	})
}
