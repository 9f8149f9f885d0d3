package paylink

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"
)

// TokenLength is the length of company, transaction and card tokens.
const TokenLength = 128

// Vault seals secrets (PANs, account numbers, webhook secrets) and
// fingerprints PANs. It is implemented by internal/vault.
type Vault interface {
	// Seal seals plaintext bound to binding (SecretBinding): it opens
	// only with the same binding.
	Seal(plaintext []byte, binding string) (SealedSecret, error)
	// Open opens s, sealed with binding (or before bindings were).
	Open(s SealedSecret, binding string) ([]byte, error)
	// Fingerprint is a keyed, irreversible identifier of a PAN within one
	// merchant (two merchants get unrelated fingerprints for one card),
	// with the id of the master key it was made under.
	Fingerprint(merchantID, pan string) (fingerprint, keyID string)
	// KeyID is the id of the key Seal uses now; key rotation re-seals
	// whatever names another.
	KeyID() string
	// MAC authenticates msg (a stateless transaction token, a sign-in
	// failure record's key) under the active master key; CheckMAC accepts a MAC made under any key the
	// vault holds, so tokens issued before a key rotation stay valid.
	MAC(msg []byte) []byte
	CheckMAC(msg, mac []byte) bool
	// MACs is msg's MAC under every key the vault holds, the active one's
	// first.
	MACs(msg []byte) [][]byte
}

// Deps are the service's collaborators. Clock and Random default to the
// real ones; tests pass their own.
type Deps struct {
	Store     Store
	Vault     Vault
	Processor Processor
	Bank      BankProcessor // direct debits
	Logger    *slog.Logger
	Clock     func() time.Time
	Random    io.Reader
	// Observer, when set, is told of every committed payment outcome
	// (metrics); nil observes nothing.
	Observer Observer
	// Passwords hashes dashboard users' passwords (internal/passwords);
	// without it the user operations answer an internal error.
	Passwords PasswordHasher
}

// Observer is told what the Service decided once it is committed, so
// that an adapter can count it (Prometheus, internal/metrics) without the
// domain knowing how. Calls come from request goroutines and jobs at
// once, and must not block.
type Observer interface {
	// PaymentOutcome reports a transaction's new status, with its payment
	// type (CreditCard, BankAccount, ApplePay, ...) and the step of the
	// payment it answers: a payment held then captured reports twice,
	// StepAuthorisation then StepCapture.
	PaymentOutcome(paymentType string, step Step, status Status)
	// RefundOutcome reports a refund's new status (APPROVED, FAILED,
	// UNKNOWN), with its payment's type.
	RefundOutcome(paymentType string, status Status)
}

// nopObserver observes nothing.
type nopObserver struct{}

func (nopObserver) PaymentOutcome(string, Step, Status) {}

func (nopObserver) RefundOutcome(string, Status) {}

// Service implements every operation of the API; it is where the business
// rules live.
type Service struct {
	cfg       Config
	store     Store
	vault     Vault
	processor Processor
	inProcess InProcessProcessor // processor, when it can answer in process; else nil
	bank      BankProcessor
	log       *slog.Logger
	clock     func() time.Time
	random    io.Reader
	observer  Observer
	passwords PasswordHasher
	auth      *authCache // authenticated merchants, briefly
	// authFailures bounds the audit rows written for failed
	// authentications (audit.go).
	authFailures *authFailureLimiter
	// lockouts bounds the audit rows of sign-ins refused by the throttle
	// to one per lock-out (user_attempt.go).
	lockouts *lockoutLog
	// review is where the recovery job goes on through UNKNOWN items
	// (recovery.go).
	review *reviewCursor
	// webhookWake wakes this process's webhook dispatcher after outbox
	// rows commit (webhook_delivery.go).
	webhookWake chan struct{}
	// bg owns the goroutines the Service starts itself; Close stops them.
	bg *background
}

// NewService wires a Service, filling in defaults; it refuses a Config
// that Validate refuses. Its owner calls Close when done with it.
func NewService(cfg Config, d Deps) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("new service: %w", err)
	}
	cfg = cfg.withDefaults()
	if d.Clock == nil {
		d.Clock = time.Now
	}
	if d.Random == nil {
		d.Random = rand.Reader
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.Observer == nil {
		d.Observer = nopObserver{}
	}
	if d.Passwords != nil {
		d.Passwords = newBoundedHasher(d.Passwords)
	}
	s := &Service{cfg: cfg, vault: d.Vault, processor: d.Processor, bank: d.Bank,
		log: d.Logger, clock: d.Clock, random: d.Random, observer: d.Observer, passwords: d.Passwords,
		webhookWake: make(chan struct{}, 1), auth: newAuthCache(),
		authFailures: newAuthFailureLimiter(), lockouts: &lockoutLog{}, review: &reviewCursor{}, bg: newBackground()}
	s.store = wakingStore{Store: d.Store, wake: s.WakeWebhooks, forget: s.auth.forget}
	s.inProcess, _ = d.Processor.(InProcessProcessor)
	return s, nil
}

// Config returns the service's configuration.
func (s *Service) Config() Config { return s.cfg }

// now is the service clock in UTC, truncated to microseconds (the
// precision every store keeps).
func (s *Service) now() time.Time { return s.clock().UTC().Truncate(time.Microsecond) }

// Now exposes the service clock to adapters that render times.
func (s *Service) Now() time.Time { return s.now() }

// Ping reports whether the store is reachable.
func (s *Service) Ping(ctx context.Context) error { return s.store.Ping(ctx) }

const alphanumeric = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// randomToken returns n characters [A-Za-z0-9] from the random source, without
// modulo bias (bytes of 248 and above are rejected).
func (s *Service) randomToken(n int) (string, error) {
	return RandomToken(s.random, n)
}

// RandomToken returns n unbiased characters [A-Za-z0-9] read from r.
func RandomToken(r io.Reader, n int) (string, error) {
	out := make([]byte, 0, n)
	buf := make([]byte, n+n/4+8)
	for len(out) < n {
		if _, err := io.ReadFull(r, buf); err != nil {
			return "", fmt.Errorf("random token: %w", err)
		}
		for _, b := range buf {
			if b < 248 && len(out) < n {
				out = append(out, alphanumeric[int(b)%len(alphanumeric)])
			}
		}
	}
	return string(out), nil
}

// referenceLength is how many characters a reference has after its
// prefix: timeOrdered's nine, then referenceRandom random ones.
const (
	referenceRandom = 16
	referenceLength = 9 + referenceRandom
)

// reference returns an opaque reference with a readable prefix.
func (s *Service) reference(prefix string) (string, error) {
	t, err := s.randomToken(referenceRandom)
	if err != nil {
		return "", err
	}
	return prefix + timeOrdered(s.clock()) + t, nil
}

// isBase62 reports whether r is one of the letters and digits that
// references and tokens are made of.
func isBase62(r rune) bool {
	return r >= '0' && r <= '9' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z'
}

// cardToken returns a 128-character card token: time-ordered like a
// reference (the cards table is keyed by it), then 119 random characters.
func (s *Service) cardToken() (string, error) {
	t, err := s.randomToken(TokenLength - 9)
	if err != nil {
		return "", err
	}
	return timeOrdered(s.clock()) + t, nil
}

// timeOrdered is nine base62 digits of the time in microseconds, so that
// references sort by creation time. New rows then land at the end of their
// B-tree instead of on random pages, which keeps each commit's write-ahead
// log small; the 16 random characters that follow keep references
// unguessable (95 bits).
func timeOrdered(t time.Time) string {
	const digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	v := uint64(max(t.UnixMicro(), 0))
	var b [9]byte
	for i := len(b) - 1; i >= 0; i-- {
		b[i] = digits[v%62]
		v /= 62
	}
	return string(b[:])
}

// save writes t, which was in status from when loaded, with a
// compare-and-set on its version, and posts the move to the journal in
// the same database transaction. A status move the state machine does
// not allow is refused as a bug: every transition passes this one check.
func (s *Service) save(tx Tx, t *Transaction, from Status) error {
	return s.write(tx, t, from, newOutcomeMerchant(tx, t))
}

// saveOutcome saves t (as save) and records its outcome (as outcome),
// reading t's merchant once for both; op is the hold operation it ends
// (opCapture, opCancel, opExpire), "" for none.
func (s *Service) saveOutcome(tx Tx, t *Transaction, from Status, op string) error {
	m := newOutcomeMerchant(tx, t)
	if err := s.write(tx, t, from, m); err != nil {
		return err
	}
	return s.outcome(tx, t, m, outcomeStep(op, from, t.Status))
}

// outcomeMerchant reads the merchant of one transaction at most once
// within one function given to Store.Update: a status change's posting
// needs its pricing and its webhooks its URLs and secret. It is made
// afresh in every such function, so it never outlives the database
// transaction it was read in.
type outcomeMerchant struct {
	tx Tx
	id string
	m  *Merchant
}

func newOutcomeMerchant(tx Tx, t *Transaction) *outcomeMerchant {
	return &outcomeMerchant{tx: tx, id: t.MerchantID}
}

// checkTransition refuses to record t, which was in status from, unless
// the state machine allows the move (CanTransition): a bug, never a
// client's doing.
func checkTransition(t *Transaction, from Status) error {
	if t.Status != from && !CanTransition(from, t.Status) {
		return Internal("save transaction", fmt.Errorf("%s: %s -> %s is not a transition", t.Reference, from, t.Status))
	}
	return nil
}

// get reads the merchant on first use.
func (o *outcomeMerchant) get() (*Merchant, error) {
	if o.m != nil {
		return o.m, nil
	}
	m, err := o.tx.Merchant(o.id)
	if err != nil {
		return nil, err
	}
	o.m = m
	return m, nil
}

// write is save with the merchant read through m.
func (s *Service) write(tx Tx, t *Transaction, from Status, m *outcomeMerchant) error {
	if err := checkTransition(t, from); err != nil {
		return err
	}
	if err := tx.UpdateTransaction(t); err != nil {
		return err
	}
	return s.postTransaction(tx, t, from, m)
}

// recordEvent appends a step to the state history of a transaction or
// refund inside tx (the events table; the audit log is audit.go).
func (s *Service) recordEvent(tx Tx, merchantID, ref, typ string, data any) error {
	b, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("encode event: %w", err)
	}
	return tx.AddEvent(&Event{MerchantID: merchantID, Reference: ref, Type: typ, Data: string(b), CreatedAt: s.now()})
}

// outcome records a transaction's new state: its history event and its
// webhook outbox rows, in the same tx. m is the merchant as read by the
// write of that state; step is the step of the payment it answers.
func (s *Service) outcome(tx Tx, t *Transaction, m *outcomeMerchant, step Step) error {
	if err := s.linkOutcome(tx, t); err != nil {
		return err
	}
	err := s.recordEvent(tx, t.MerchantID, t.Reference, "transaction."+string(t.Status), outcomeEvent{
		Currency: t.Currency, Status: t.Status, Total: t.Total, Version: t.Version,
	})
	if err != nil {
		return err
	}
	s.observeOutcome(tx, t.PaymentType, step, t.Status)
	return s.enqueueWebhooks(tx, t, m)
}

// outcomeEvent is the data of a transaction's history event for a new
// state (fields in the order a map of them was once encoded in).
type outcomeEvent struct {
	Currency string `json:"currency"`
	Status   Status `json:"status"`
	Total    int64  `json:"total"`
	Version  int64  `json:"version"`
}

// observeOutcome tells the observer of a new status once tx commits (an
// outcome that rolls back was never decided).
func (s *Service) observeOutcome(tx Tx, paymentType string, step Step, status Status) {
	onCommit(tx, func() { s.observer.PaymentOutcome(paymentType, step, status) })
}

// Step names the step of a payment that a new status answers, so that a
// payment's answers are told apart from what happens to it afterwards: a
// rate of failed payments divides the failed authorisations by the
// authorisations, not by every status every payment reached.
type Step string

// The steps of a payment.
const (
	// StepAuthorisation: the answer to a payment attempt (a card's
	// authorisation or hold, a 3-D Secure attempt's completion or
	// failure, a wallet's or Zip's payment, a direct debit's submission):
	// once per payment, but for one answered UNKNOWN and resolved later.
	StepAuthorisation Step = "authorisation"
	// StepAuthentication: the issuer asked for a 3-D Secure challenge.
	StepAuthentication Step = "authentication"
	// StepCapture: a hold captured.
	StepCapture Step = "capture"
	// StepRelease: a hold cancelled or expired.
	StepRelease Step = "release"
	// StepClearing: a direct debit cleared or dishonoured by the bank.
	StepClearing Step = "clearing"
	// StepResolution: the answer to an operation left UNKNOWN, learnt by
	// an inquiry or from an operator.
	StepResolution Step = "resolution"
)

// outcomeStep is the step of a move from from to to that ends op, the
// hold operation it carries out ("" for none).
func outcomeStep(op string, from, to Status) Step {
	switch {
	case to == StatusRequiresAuthentication:
		return StepAuthentication
	case from == StatusUnknown:
		return StepResolution
	case from == StatusPending:
		return StepClearing
	case op == opCapture:
		return StepCapture
	case op == opCancel || op == opExpire:
		return StepRelease
	}
	return StepAuthorisation
}

// updateCreating is store.Update for fn, a write that spends no
// transaction token and creates what exists reports on (a payment link, a
// card token). A database whose answer to the COMMIT was lost (a cut
// connection, ErrCommitUnanswered) may have committed it, and a retry
// under the request's Idempotency-Key, released by the 503 of an
// unreachable database, would create a second one: a money call's spent
// token stops that retry, and nothing stops this one. So that error is
// checked by reading again, in a new transaction: what was made is
// there, and the write succeeded; it is not, and the 503 stands (nothing
// happened). When it cannot be read, the error is ErrCommitInDoubt, which
// keeps the key. Any other error, an outage before the COMMIT included,
// says that nothing happened.
func (s *Service) updateCreating(ctx context.Context, fn func(Tx) error, exists func(Tx) (bool, error)) error {
	ctx, cancel := claimContext(ctx) // a client hanging up mid-COMMIT must not make a creation look undone
	defer cancel()
	err := s.store.Update(ctx, fn)
	if !errors.Is(err, ErrCommitUnanswered) {
		return err
	}
	var found bool
	if rerr := s.store.View(ctx, func(tx Tx) error {
		var err error
		found, err = exists(tx)
		return err
	}); rerr != nil {
		return fmt.Errorf("%w: %w", ErrCommitInDoubt, err)
	}
	if found {
		s.log.WarnContext(ctx, "the database's answer to a commit was lost, and the transaction had committed", "err", err)
		return nil
	}
	return err
}

// found turns a store read into whether its row exists: ErrNotFound is
// false, any other error is returned.
func found[T any](_ T, err error) (bool, error) {
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// onCommit runs fn once tx commits, or at once for a store whose
// transactions cannot say.
func onCommit(tx Tx, fn func()) {
	if c, ok := tx.(interface{ afterCommit(func()) }); ok {
		c.afterCommit(fn)
		return
	}
	fn()
}

// drain runs pass, one pass of a job over at most size due rows that
// says how many it read and how many it moved, again and again while a
// pass reads a full batch and moves something: a backlog is worked
// through in one run of the job, not a batch a minute. It returns how
// many rows moved in all.
func drain(ctx context.Context, size int, pass func(context.Context) (read, moved int, err error)) (int, error) {
	return walk(ctx, size, func(ctx context.Context) (int, int, error) {
		read, moved, err := pass(ctx)
		if moved == 0 {
			read = 0 // nothing moved: the next pass would read the same rows
		}
		return read, moved, err
	})
}

// walk is drain for a pass that reads after a position it keeps and
// moves on: a pass that moves nothing (rows left for the next run, which
// the processor or the bank did not answer about) does not end the run,
// since the next pass starts after them; a pass that reads less than a
// full batch does.
func walk(ctx context.Context, size int, pass func(context.Context) (read, moved int, err error)) (int, error) {
	total := 0
	for {
		read, moved, err := pass(ctx)
		total += moved
		if err != nil || read < size || ctx.Err() != nil {
			return total, err
		}
	}
}
