package paylink

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"
)

// Webhook retry policy, used when a merchant (Settings.Webhook.Retries)
// or the operator (Config.WebhookRetries) enables automatic retries: the
// n-th retry waits RetryBase * 2^(n-1), at most RetryMaxDelay, and no
// retry is scheduled later than RetryWindow after the outcome (Stripe's
// three days).
const (
	RetryBase     = time.Minute
	RetryMaxDelay = 12 * time.Hour
	RetryWindow   = 72 * time.Hour
)

// webhookSecretPrefix marks a Standard Webhooks signing secret.
const webhookSecretPrefix = "whsec_"

// webhookSecretBytes is the size of a signing key.
const webhookSecretBytes = 32

// WebhookJob is a delivery leased to a dispatcher, with what it needs to
// send it: the merchant's whitelist and signing keys (newest first; two
// during a rotation's overlap).
type WebhookJob struct {
	Delivery   *WebhookDelivery
	LeaseToken string
	Domains    []string
	Keys       [][]byte
	Retries    bool
}

// newWebhookSecret returns a signing secret of merchant mid as shown to
// the merchant ("whsec_" + base64 key) and sealed for storage.
func (s *Service) newWebhookSecret(mid string) (string, SealedSecret, error) {
	key := make([]byte, webhookSecretBytes)
	if _, err := io.ReadFull(s.random, key); err != nil {
		return "", SealedSecret{}, fmt.Errorf("webhook secret: %w", err)
	}
	sealed, err := s.vault.Seal(key, webhookSecretBinding(mid))
	if err != nil {
		return "", SealedSecret{}, fmt.Errorf("seal webhook secret: %w", err)
	}
	return webhookSecretPrefix + base64.StdEncoding.EncodeToString(key), sealed, nil
}

// MaxWebhookSecretOverlap bounds how long the previous signing secret
// still signs after a rotation: a week, like an API key's overlap.
const MaxWebhookSecretOverlap = 7 * 24 * time.Hour

// RotateWebhookSecret gives merchant mid a new signing secret and returns
// it (shown once). Until overlap has passed, webhooks carry signatures
// under both the new and the previous secret. A caller that showed its
// user the current secret (the dashboard), or read it (the CLI), passes
// its version (WebhookConfig.CurrentSecret) as from: when another
// rotation has replaced that secret meanwhile, this one is refused (a
// conflict) rather than dropping the secret receivers verify with. A
// merchant with no secret yet has version "": from "" expects none, so
// of two racing first rotations one is refused too, rather than the
// second keeping the first's new secret only as the previous one.
func (s *Service) RotateWebhookSecret(ctx context.Context, mid, from string, overlap time.Duration) (string, error) {
	if err := checkStaff(ctx, mid, PermWebhooks); err != nil {
		return "", err
	}
	if overlap < 0 || overlap > MaxWebhookSecretOverlap || overlap%time.Second != 0 { // stored in seconds, as an API key's
		return "", &Error{Kind: KindInvalid, Code: CodeInvalidRequest, Message: "the overlap must be whole seconds between 0 and 168h",
			Fields: map[string]string{"overlap": "must be whole seconds between 0 and 168h"}}
	}
	secret, sealed, err := s.newWebhookSecret(mid)
	if err != nil {
		return "", Internal("rotate webhook secret", err)
	}
	err = s.store.Update(ctx, func(tx Tx) error {
		if err := tx.LockMerchantSettings(mid); err != nil {
			return err
		}
		m, err := tx.Merchant(mid)
		if err != nil {
			return err
		}
		w := &m.Settings.Webhook
		if w.CurrentSecret() != from {
			return Errorf(KindConflict, CodeInvalidState,
				"the signing secret was rotated meanwhile (or first given, or sealed again by a master key rotation): nothing was changed; look at the webhook settings again before rotating")
		}
		w.Secrets = append([]SealedSecret{sealed}, w.Secrets[:min(len(w.Secrets), 1)]...)
		w.PreviousUntil = s.now().Add(overlap).Unix()
		if err := tx.UpdateMerchantSettings(mid, m.Settings); err != nil {
			return err
		}
		return s.audit(ctx, tx, AuditEvent{MerchantID: mid, Action: AuditWebhookSecretRotate, ObjectType: ObjectWebhookSecret,
			ObjectID: mid, Outcome: OutcomeSuccess, Detail: fmt.Sprintf("overlap=%ds", int64(overlap/time.Second))})
	})
	if errors.Is(err, ErrNotFound) {
		return "", Errorf(KindNotFound, CodeNotFound, "no merchant %s", mid)
	}
	if err != nil {
		return "", asServiceError("rotate webhook secret", err)
	}
	return secret, nil
}

// WebhookResult is an attempt of a claimed delivery, made and waiting to
// be recorded; or, when DeferUntil is set, a claimed delivery the
// dispatcher did not try (its receiver hangs or is slow): it is released,
// pending and due at DeferUntil, with no attempt counted or logged, and
// held for the receiver HoldFor when that is set (ReleaseHeldWebhooks,
// ProbeHeldWebhook); otherwise it keeps its hold mark, if it had one.
type WebhookResult struct {
	Job        *WebhookJob
	Attempt    WebhookAttempt
	DeferUntil time.Time
	HoldFor    string
}

// ExchangeWebhooks records the finished attempts in done and leases up
// to limit due deliveries for lease (longer than the delivery timeout; an
// instance that dies holding a lease loses it when it runs out), all in
// one database transaction: a dispatcher's turn costs one commit however
// many attempts it settles and starts. It is all or nothing, but an error
// does not say which: the COMMIT may have reached the database and only
// its answer been lost. Either way done may be given again (with limit 0
// to record them alone): an attempt recorded before is not logged twice,
// and a deferral written before is left as it is. Each recorded job's
// Delivery is updated to its new state.
func (s *Service) ExchangeWebhooks(ctx context.Context, done []WebhookResult, limit int, lease time.Duration) ([]*WebhookJob, error) {
	token, err := s.randomToken(32)
	if err != nil {
		return nil, fmt.Errorf("exchange webhooks: %w", err)
	}
	now := s.now()
	finished, attempts := settle(done, now)
	var jobs []*WebhookJob
	err = s.store.Update(ctx, func(tx Tx) error {
		if err := s.recordAttempts(ctx, tx, finished, attempts); err != nil {
			return err
		}
		if limit <= 0 {
			return nil
		}
		var err error
		jobs, err = s.claimWebhooks(ctx, tx, token, limit, now, lease)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("exchange webhooks: %w", err)
	}
	for i, r := range done {
		*r.Job.Delivery = *finished[i].Delivery
	}
	return jobs, nil
}

// ReleaseHeldWebhooks makes up to limit deliveries held for receiver
// due at at, no longer held, and returns how many it released: the
// dispatcher releases a receiver's held deliveries in batches once it
// answers again.
func (s *Service) ReleaseHeldWebhooks(ctx context.Context, receiver string, limit int, at time.Time) (int, error) {
	var n int
	err := s.store.Update(ctx, func(tx Tx) error {
		var err error
		n, err = tx.ReleaseHeldWebhookDeliveries(receiver, limit, at)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("release held webhooks: %w", err)
	}
	return n, nil
}

// ProbeHeldWebhook makes one delivery held for receiver due at at, still
// held, so that whichever dispatcher claims it tries it as a probe of the
// receiver; it reports whether there was one.
func (s *Service) ProbeHeldWebhook(ctx context.Context, receiver string, at time.Time) (bool, error) {
	var found bool
	err := s.store.Update(ctx, func(tx Tx) error {
		var err error
		found, err = tx.ProbeHeldWebhookDelivery(receiver, at)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("probe held webhook: %w", err)
	}
	return found, nil
}

// HeldWebhookReceivers lists the receivers deliveries are held for.
func (s *Service) HeldWebhookReceivers(ctx context.Context) ([]string, error) {
	var rs []string
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		rs, err = tx.HeldWebhookReceivers()
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("held webhook receivers: %w", err)
	}
	return rs, nil
}

// claimWebhooks leases up to limit due deliveries under token and makes
// them ready to send, with their merchants' whitelists and signing keys.
// A merchant's deliveries that cannot be sent are settled here, in the
// claim's transaction, rather than failing every claim that leases them
// and so stopping every other merchant's webhooks:
//   - on PostgreSQL a delivery carries no foreign key to its merchant
//     (migration 0024): one naming a merchant that does not exist is
//     failed, with an attempt that says so;
//   - one whose merchant's signing secret cannot be opened (a key file
//     or vault fault an operator can mend) is put back, pending, for
//     unopenableSecretDelay, with no attempt counted, and the fault is
//     logged as an error.
func (s *Service) claimWebhooks(ctx context.Context, tx Tx, token string, limit int, now time.Time, lease time.Duration) ([]*WebhookJob, error) {
	ds, err := tx.ClaimWebhookDeliveries(now, now.Add(lease), token, limit)
	if err != nil {
		return nil, err
	}
	// One template per merchant: its settings are read and its secrets
	// opened once per claim, however many of its rows it leases.
	templates := map[string]jobTemplate{}
	jobs := make([]*WebhookJob, 0, len(ds))
	var unsent []WebhookResult
	for _, d := range ds {
		t, seen := templates[d.MerchantID]
		if !seen {
			if t, err = s.templateFor(ctx, tx, d.MerchantID, now); err != nil {
				return nil, err
			}
			templates[d.MerchantID] = t
		}
		if t.job == nil {
			unsent = append(unsent, WebhookResult{Job: &WebhookJob{Delivery: d, LeaseToken: token},
				Attempt: WebhookAttempt{StartedAt: now, Error: t.failure}, DeferUntil: t.deferUntil})
			continue
		}
		job := *t.job
		job.Delivery, job.LeaseToken = d, token
		jobs = append(jobs, &job)
	}
	if len(unsent) > 0 {
		finished, attempts := settle(unsent, now)
		return jobs, s.recordAttempts(ctx, tx, finished, attempts)
	}
	return jobs, nil
}

// unopenableSecretDelay is how long the deliveries of a merchant whose
// signing secret cannot be opened wait before they are claimed again.
const unopenableSecretDelay = time.Minute

// jobTemplate is what every leased delivery of one merchant is sent with
// (job), or why none can be sent: failed with failure, or put back until
// deferUntil.
type jobTemplate struct {
	job        *WebhookJob
	failure    string
	deferUntil time.Time
}

// templateFor reads merchant mid's whitelist, signing keys and retry
// setting. Only a database error is returned as an error.
func (s *Service) templateFor(ctx context.Context, tx Tx, mid string, now time.Time) (jobTemplate, error) {
	m, err := tx.Merchant(mid)
	if errors.Is(err, ErrNotFound) {
		s.log.WarnContext(ctx, "webhook deliveries naming a merchant that does not exist are failed", "merchant", mid)
		return jobTemplate{failure: fmt.Sprintf("merchant %s does not exist", mid)}, nil
	}
	if err != nil {
		return jobTemplate{}, fmt.Errorf("merchant %s: %w", mid, err)
	}
	keys, err := s.signingKeys(m.ID, m.Settings.Webhook, now)
	if err != nil {
		s.log.ErrorContext(ctx, "webhook deliveries put back: the merchant's signing secret cannot be opened",
			"merchant", mid, "retry_in", unopenableSecretDelay.String(), "err", err)
		return jobTemplate{deferUntil: now.Add(unopenableSecretDelay)}, nil
	}
	return jobTemplate{job: &WebhookJob{Domains: m.Settings.Webhook.Domains, Keys: keys,
		Retries: m.Settings.Webhook.Retries || s.cfg.WebhookRetries}}, nil
}

// webhookSecretBinding is what merchant mid's sealed webhook signing
// secrets are bound to (SecretBinding).
func webhookSecretBinding(mid string) string { return SecretBinding(SecretWebhookSecret, mid, mid) }

// signingKeys opens merchant mid's current secret and, during a
// rotation's overlap, the previous one.
func (s *Service) signingKeys(mid string, w WebhookConfig, now time.Time) ([][]byte, error) {
	n := min(len(w.Secrets), 1)
	if len(w.Secrets) > 1 && now.Unix() < w.PreviousUntil {
		n = 2
	}
	keys := make([][]byte, 0, n)
	for _, sealed := range w.Secrets[:n] {
		k, err := s.vault.Open(sealed, webhookSecretBinding(mid))
		if err != nil {
			return nil, fmt.Errorf("open webhook secret: %w", err)
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// settle decides what follows each attempt in done: delivered on HTTP
// 200; otherwise failed, or pending again after a backoff when retries
// are enabled and the retry window allows; a deferred delivery is
// pending again, due when it was deferred to. It returns the deliveries'
// new states, in done's order, and the attempts for the delivery log.
func settle(done []WebhookResult, now time.Time) ([]WebhookFinish, []*WebhookAttempt) {
	finished := make([]WebhookFinish, len(done))
	attempts := make([]*WebhookAttempt, 0, len(done))
	for i, r := range done {
		d, a := *r.Job.Delivery, r.Attempt
		if !r.DeferUntil.IsZero() {
			// A row put back keeps its hold mark (a probe put back for
			// another reason is still a probe) unless it is held anew.
			if r.HoldFor != "" {
				d.HeldFor = r.HoldFor
			}
			d.NextAttemptAt, d.UpdatedAt = r.DeferUntil, now
			finished[i] = WebhookFinish{Delivery: &d, LeaseToken: r.Job.LeaseToken}
			continue
		}
		d.Attempts++
		d.HeldFor = ""
		a.DeliveryID, a.Attempt, a.URL = d.ID, d.Attempts, d.URL
		a.ResponseExcerpt = ResponseExcerpt([]byte(a.ResponseExcerpt))
		d.LastStatusCode, d.LastError, d.UpdatedAt = a.StatusCode, a.Error, now
		switch next, retry := nextRetry(d.Attempts, d.CreatedAt, now); {
		case a.StatusCode == 200 && a.Error == "":
			d.State, d.DeliveredAt = DeliveryDelivered, now
		case r.Job.Retries && retry:
			d.State, d.NextAttemptAt = DeliveryPending, next
		default:
			d.State = DeliveryFailed
		}
		finished[i] = WebhookFinish{Delivery: &d, LeaseToken: r.Job.LeaseToken}
		attempts = append(attempts, &a)
	}
	return finished, attempts
}

// recordAttempts writes the deliveries' new states and their attempts to
// the delivery log. An attempt whose lease was lost (it outlived its
// lease) is logged, but its delivery is left as it is. A result this
// dispatcher gave before, in a turn whose COMMIT reached the database but
// whose answer was lost, finds its lease released too: recordedBefore
// tells it apart, and it is neither logged again nor warned about.
func (s *Service) recordAttempts(ctx context.Context, tx Tx, finished []WebhookFinish, attempts []*WebhookAttempt) error {
	if len(finished) == 0 {
		return nil
	}
	ids, err := tx.FinishWebhookAttempts(finished)
	if err != nil {
		return err
	}
	if len(ids) < len(finished) {
		if attempts, err = s.leaseLost(ctx, tx, finished, ids, attempts); err != nil {
			return err
		}
	}
	return tx.AddWebhookAttempts(attempts)
}

// leaseLost sorts out the finishes whose delivery was not written (ids
// are those written): it warns of each lost lease and returns the
// attempts to log, less those recorded before.
func (s *Service) leaseLost(ctx context.Context, tx Tx, finished []WebhookFinish, ids []string, attempts []*WebhookAttempt) ([]*WebhookAttempt, error) {
	var lost []string
	for _, f := range finished {
		if !slices.Contains(ids, f.Delivery.ID) {
			lost = append(lost, f.Delivery.ID)
		}
	}
	logged, err := tx.WebhookAttempts(lost...)
	if err != nil {
		return nil, err
	}
	keep := attempts[:0:0]
	for _, a := range attempts {
		if !slices.Contains(lost, a.DeliveryID) {
			keep = append(keep, a)
		} else if !recordedBefore(logged, a) {
			keep = append(keep, a)
			s.log.WarnContext(ctx, "webhook lease lost before the attempt was recorded", "delivery", a.DeliveryID)
		}
	}
	return keep, nil
}

// recordedBefore reports whether the log holds attempt a already: the
// same delivery, attempt number and start (to the microsecond the stores
// keep). An attempt of another dispatcher that took over the lease
// started later.
func recordedBefore(logged []*WebhookAttempt, a *WebhookAttempt) bool {
	return slices.ContainsFunc(logged, func(l *WebhookAttempt) bool {
		return l.DeliveryID == a.DeliveryID && l.Attempt == a.Attempt &&
			l.StartedAt.UnixMicro() == a.StartedAt.UnixMicro()
	})
}

// nextRetry is when retry number attempts is due, and whether it is
// still inside the retry window.
func nextRetry(attempts int, created, now time.Time) (time.Time, bool) {
	delay := RetryMaxDelay
	if attempts <= 10 {
		delay = min(RetryBase<<(attempts-1), RetryMaxDelay)
	}
	next := now.Add(delay)
	return next, !next.After(created.Add(RetryWindow))
}

// ResendWebhook queues a delivered or failed delivery again (manual
// redelivery, by an operator); it keeps its webhook-id and payload.
func (s *Service) ResendWebhook(ctx context.Context, id string) error {
	return s.resendWebhook(ctx, "", id)
}

// resendWebhook makes delivery id due again and audits it, refusing a
// delivery of another merchant than merchantID ("" for an operator) as
// not found.
func (s *Service) resendWebhook(ctx context.Context, merchantID, id string) error {
	err := s.store.Update(ctx, func(tx Tx) error {
		d, err := tx.WebhookDelivery(id)
		if err != nil {
			return err
		}
		if merchantID != "" && d.MerchantID != merchantID {
			return ErrNotFound
		}
		if err := tx.ResendWebhookDelivery(id, s.now()); err != nil {
			return err
		}
		return s.audit(ctx, tx, AuditEvent{MerchantID: d.MerchantID, Action: AuditWebhookResend, ObjectType: ObjectWebhook,
			ObjectID: id, Outcome: OutcomeSuccess, Detail: d.Reference})
	})
	switch {
	case errors.Is(err, ErrNotFound):
		return Errorf(KindNotFound, CodeNotFound, "no webhook delivery %s", id)
	case errors.Is(err, ErrConflict):
		return Errorf(KindConflict, CodeInvalidState, "webhook delivery %s is already pending", id)
	case err != nil:
		return Internal("resend webhook", err)
	}
	return nil
}

// ListWebhooks lists deliveries for operators, newest first.
func (s *Service) ListWebhooks(ctx context.Context, f WebhookFilter) ([]*WebhookDelivery, error) {
	var out []*WebhookDelivery
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		out, err = tx.ListWebhookDeliveries(f)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list webhooks: %w", err)
	}
	return out, nil
}

// WebhookAttempts returns a delivery's log, oldest first (operators).
func (s *Service) WebhookAttempts(ctx context.Context, id string) ([]*WebhookAttempt, error) {
	var out []*WebhookAttempt
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		out, err = tx.WebhookAttempts(id)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("webhook attempts: %w", err)
	}
	return out, nil
}

// DueWebhooks counts deliveries due now that are not finished, including
// those being sent.
func (s *Service) DueWebhooks(ctx context.Context) (int, error) {
	var n int
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		n, err = tx.CountDueWebhookDeliveries(s.now())
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("count due webhooks: %w", err)
	}
	return n, nil
}

// WebhookBacklog is the webhook outbox as an on-call engineer watches it:
// rows not yet delivered or given up, and how long the oldest has waited.
type WebhookBacklog struct {
	Pending int
	Held    int       // pending rows held for a receiver that hangs
	Oldest  time.Time // creation time of the oldest pending row; zero when none
	// FirstDue is the earliest next attempt of a pending row not held: past
	// it by more than a few seconds, the dispatchers are not keeping up
	// (or are down); zero when no such row is pending.
	FirstDue time.Time
}

// WebhookBacklog reads the outbox's depth and oldest pending row, for
// the metrics scrape.
func (s *Service) WebhookBacklog(ctx context.Context) (WebhookBacklog, error) {
	var b WebhookBacklog
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		b, err = tx.WebhookBacklog()
		return err
	})
	if err != nil {
		return WebhookBacklog{}, fmt.Errorf("webhook backlog: %w", err)
	}
	return b, nil
}
