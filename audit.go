package paylink

import (
	"context"
	"encoding/hex"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"
)

// The audit log (PCI DSS 10.2) answers "who did what to which object,
// from where, and did it work" for security-relevant events: onboarding,
// credentials created or rotated, authentication failures, captures,
// cancels, refunds, payment links created and cancelled, settings and
// whitelist changes, settlement batches, payouts and reconciliation runs,
// and the dashboard's sign-ins and actions.
//
// It is not the events table (Event, Tx.AddEvent): that one is the state
// history of each transaction and refund, step by step, for support and
// recovery. An audit row is written by the Service in the same store
// transaction as the change it records, so a rolled-back change leaves
// none; only authentication failures, which change nothing, get a
// transaction of their own. Rows are append-only (the store offers no
// update or delete, and the schema refuses them) and never carry card data
// or secrets: objects are named by their ids and references only.

// AuditEvent is one row of the audit log.
type AuditEvent struct {
	ID         int64 // assigned by the store, increasing
	At         time.Time
	MerchantID string // "" when no merchant is known (an unknown API key)
	ActorKind  ActorKind
	ActorID    string // API key id, staff user id, job name or CLI command
	SourceIP   string
	RequestID  string
	Action     string // one of the Audit* actions
	ObjectType string // one of the Object* types
	ObjectID   string // the object's id or reference, "" when it has none
	Outcome    AuditOutcome
	// Detail is a short machine-readable reason (an error code, the names
	// of changed settings); never a value of a secret or card field. A
	// money action's row (a capture, cancel or expiry of a hold, a refund,
	// a payment link created, a settlement batch or a payout) ends it with
	// the amount and its currency
	// (auditMoney; Money reads them).
	Detail string
}

// auditMoney is the detail of a money action's row: what (its status or
// error code, "" for none) then the amount it moved in the currency's
// decimals and the currency, "APPROVED amount=12.34 currency=AUD".
func auditMoney(what string, minor int64, currency string) string {
	return strings.TrimSpace(fmt.Sprintf("%s amount=%s currency=%s", what, FormatIn(minor, currency), currency))
}

// Money is the amount and currency a money action's row names in its
// Detail, as "AUD 12.34"; "" for a row of any other action, or one
// written before money actions' rows named their amount.
func (e *AuditEvent) Money() string {
	switch e.Action {
	case AuditCapture, AuditCancel, AuditExpire, AuditRefund, AuditLinkCreate, AuditBatchCreate, AuditPayoutCreate:
	default:
		return ""
	}
	var amount, currency string
	for _, f := range strings.Fields(e.Detail) {
		if v, ok := strings.CutPrefix(f, "amount="); ok {
			amount = v
		} else if v, ok := strings.CutPrefix(f, "currency="); ok {
			currency = v
		}
	}
	if amount == "" || currency == "" {
		return ""
	}
	return currency + " " + amount
}

// AuditOutcome says whether the audited action took effect.
type AuditOutcome string

// Audit outcomes.
const (
	OutcomeSuccess AuditOutcome = "success" // the action took effect
	OutcomeFailure AuditOutcome = "failure" // attempted, did not take effect (processor error, rejected refund)
	OutcomeDenied  AuditOutcome = "denied"  // refused: authentication failed
)

// Audit actions: object, then verb.
const (
	AuditMerchantOnboard     = "merchant.onboard"
	AuditAPIKeyCreate        = "api_key.create"
	AuditAPIKeyRotate        = "api_key.rotate"
	AuditWebhookSecretCreate = "webhook_secret.create"
	AuditWebhookSecretRotate = "webhook_secret.rotate"
	AuditAuthenticate        = "auth.api_key"       // an API key was presented
	AuditCompanyToken        = "auth.company_token" // a company token was checked
	AuditCapture             = "transaction.capture"
	AuditCancel              = "transaction.cancel"
	AuditExpire              = "transaction.expire"
	AuditRefund              = "refund.create"
	AuditLinkCreate          = "payment_link.create"
	AuditLinkCancel          = "payment_link.cancel"
	AuditCardInvalidate      = "card.invalidate" // a card token invalidated, by the card's fingerprint
	AuditSettingsUpdate      = "merchant.settings.update"
	AuditWhitelistUpdate     = "merchant.whitelist.update"
	AuditWebhookResend       = "webhook_delivery.resend"
	AuditMasterKeyRotate     = "master_key.rotate"       // stored secrets re-sealed under the active master key
	AuditBatchCreate         = "settlement_batch.create" // a day of a merchant's balance settled
	AuditPayoutCreate        = "payout.create"           // a merchant's available balance paid out
	AuditReconcile           = "reconciliation.run"      // a settlement file matched against the ledger
)

// Audited object types.
const (
	ObjectMerchant      = "merchant"
	ObjectAPIKey        = "api_key"
	ObjectWebhookSecret = "webhook_secret"
	ObjectCompanyToken  = "company_token"
	ObjectTransaction   = "transaction"
	ObjectRefund        = "refund"
	ObjectPaymentLink   = "payment_link"
	ObjectCard          = "card" // by its fingerprint, never its token or number
	ObjectWebhook       = "webhook_delivery"
	ObjectMasterKey     = "master_key" // by its key id, never the key
	ObjectBatch         = "settlement_batch"
	ObjectPayout        = "payout"
	ObjectReconcile     = "reconciliation"
)

// AuditFilter selects audit rows for an export, oldest first.
type AuditFilter struct {
	Since      time.Time // rows at or after this time
	MerchantID string    // only this merchant's rows, when set
	AfterID    int64     // rows with a greater id (paging)
	Limit      int       // at most this many rows
	ActorID    string    // only this actor's rows, when set (the dashboard's filter)
	Action     string    // only rows of this action, when set
	// NewestFirst lists in descending id order, below BeforeID when set
	// (the dashboard shows the latest rows first).
	NewestFirst bool
	BeforeID    int64
}

// APIKeyID is the stable, non-secret id of a merchant's API key: the
// first 8 bytes of its SHA-256 hash in hex. A hash prefix of a key with
// 238 random bits reveals nothing usable, and needs no schema change.
func APIKeyID(hash []byte) string {
	return "key_" + hex.EncodeToString(hash[:min(len(hash), 8)])
}

// APIKeyID is the id of the merchant's API key (see the function).
func (m *Merchant) APIKeyID() string { return APIKeyID(m.APIKeyHash) }

// SourceIP is the IP address of an HTTP request's remote address
// ("host:port"), for the actor and the customer's IP. paylink does not
// trust forwarding headers; a deployment behind a proxy terminates there.
// An IPv6 zone ("fe80::1%eth0") is dropped: it names the server's own
// interface, not the client, and an address with one is not an IP
// address to net.ParseIP (the customer's ip_address check).
func SourceIP(remoteAddr string) string {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	if strings.IndexByte(host, '%') < 0 {
		return host // every request's path: no parse, no copy
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return ip.WithZone("").String()
	}
	return host
}

// audit appends e to the audit log inside tx, filling in the time and the
// actor of ctx. Call it in the Update that makes the change it records.
func (s *Service) audit(ctx context.Context, tx Tx, e AuditEvent) error {
	a := ActorFrom(ctx)
	e.At, e.ActorKind, e.ActorID, e.SourceIP, e.RequestID = s.now(), a.Kind, a.ID, a.IP, a.RequestID
	if e.RequestID == "" {
		e.RequestID = RequestIDFrom(ctx)
	}
	if err := tx.AddAuditEvent(&e); err != nil {
		return fmt.Errorf("audit %s: %w", e.Action, err)
	}
	return nil
}

// auditDenied records a failed authentication in a transaction of its
// own: there is no change to share one with. Rows are rate-limited per
// source address (authFailureLimiter), so a flood of bad keys costs at
// most a bounded number of writes; an error writing the row is logged,
// never shown to the caller, whose answer stays the 401 or 403.
func (s *Service) auditDenied(ctx context.Context, e AuditEvent) {
	ip := ActorFrom(ctx).IP
	switch s.authFailures.allow(ip, s.now()) {
	case limitSuppress:
		return
	case limitFirstSuppressed:
		s.log.WarnContext(ctx, "authentication failures over the audit limit: not audited until the minute ends",
			"source_ip", ip, "per_ip_limit", AuthFailuresPerIP, "total_limit", AuthFailuresTotal)
		return
	}
	e.Outcome = OutcomeDenied
	err := s.store.Update(ctx, func(tx Tx) error { return s.audit(ctx, tx, e) })
	if err != nil {
		s.log.ErrorContext(ctx, "audit authentication failure", "action", e.Action, "err", err)
	}
}

// AuditLog returns audit rows matching f, oldest first (the export).
func (s *Service) AuditLog(ctx context.Context, f AuditFilter) ([]*AuditEvent, error) {
	var out []*AuditEvent
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		out, err = tx.AuditEvents(f)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read audit log: %w", err)
	}
	return out, nil
}

// Limits on audited authentication failures, per instance and per
// minute: beyond them failures are still refused, but only the first
// suppressed one of each address (past the total, the first of all) is
// logged. Sized so a client with a
// misconfigured key leaves a clear trail, while a flood of bad keys from
// many addresses costs at most AuthFailuresTotal writes a minute.
const (
	AuthFailuresPerIP = 20
	AuthFailuresTotal = 600
)

// limitVerdict is what the limiter says about one failure.
type limitVerdict int

const (
	limitRecord          limitVerdict = iota // write the row
	limitFirstSuppressed                     // over the limit: log once, write nothing
	limitSuppress                            // over the limit, already logged
)

// authFailureLimiter counts audited authentication failures in fixed
// one-minute windows, per source address (an IPv6 one by its /64) and in
// total; the total counts the rows written, so that one address over its
// own limit does not spend the others' (it hid every other address's
// failures: abuse sweep). It is safe for concurrent use.
type authFailureLimiter struct {
	mu     sync.Mutex
	window time.Time // start of the current minute
	byIP   map[string]int
	total  int
}

func newAuthFailureLimiter() *authFailureLimiter {
	return &authFailureLimiter{byIP: map[string]int{}}
}

// allow counts one failure from ip at now and says what to do with it.
func (l *authFailureLimiter) allow(ip string, now time.Time) limitVerdict {
	l.mu.Lock()
	defer l.mu.Unlock()
	if w := now.Truncate(time.Minute); !w.Equal(l.window) {
		l.window, l.total = w, 0
		clear(l.byIP)
	}
	key := throttleAddress(ip) // an IPv6 client by its /48, as the sign-in throttle counts it
	// An address whose own budget is spent uses no one else's.
	if n := l.byIP[key]; n >= AuthFailuresPerIP {
		l.byIP[key] = n + 1
		return verdict(n + 1 - AuthFailuresPerIP)
	}
	if l.total >= AuthFailuresTotal { // only recorded rows count towards it; byIP grows no more
		l.total++
		return verdict(l.total - AuthFailuresTotal)
	}
	l.byIP[key]++
	l.total++
	return limitRecord
}

// verdict maps how far a count is over its limit to a verdict.
func verdict(over int) limitVerdict {
	switch {
	case over <= 0:
		return limitRecord
	case over == 1:
		return limitFirstSuppressed
	}
	return limitSuppress
}
