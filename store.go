package paylink

import (
	"context"
	"time"
)

// Store is paylink's persistence. Stores persist; they do not decide: the
// business rules live in Service, and a Store only guarantees that each
// Update is atomic and that guarded writes are compare-and-set.
type Store interface {
	// View runs fn against a consistent read-only view.
	View(ctx context.Context, fn func(Tx) error) error
	// Update runs fn in one write transaction and commits it durably
	// before returning. fn must do no I/O other than through tx, and may
	// be run batched with other callers' functions (group commit); an
	// error from fn rolls back only fn's own writes.
	Update(ctx context.Context, fn func(Tx) error) error
	// Ping reports whether the database is reachable.
	Ping(ctx context.Context) error
	Close() error
}

// Tx is the set of operations available inside View and Update. Lookups
// return ErrNotFound for a missing row; guarded writes return ErrConflict
// when their guard does not hold.
type Tx interface {
	CreateMerchant(m *Merchant) error
	Merchant(id string) (*Merchant, error)
	MerchantByAPIKeyHash(hash []byte) (*Merchant, error)
	ListMerchants() ([]*Merchant, error)
	UpdateMerchantSettings(id string, s MerchantSettings) error

	CreateTransactionToken(t *TransactionToken) error
	// ConsumeTransactionToken marks the token used if it is the merchant's,
	// unused and unexpired at now, and returns it; otherwise it returns
	// the token as found (or ErrNotFound) with ErrConflict.
	ConsumeTransactionToken(hash []byte, merchantID string, now time.Time) (*TransactionToken, error)
	DeleteExpiredTransactionTokens(before time.Time) (int64, error)

	CreateCard(c *Card) error
	Card(merchantID, token string) (*Card, error)
	// MarkCardUsed sets used_at on an unused, valid card (single-use tokens).
	MarkCardUsed(token string, now time.Time) error
	// InvalidateCard sets invalidated_at on a valid card of the merchant.
	InvalidateCard(merchantID, token string, now time.Time) error
	// WipeSpentCards erases the sealed numbers of up to limit cards that
	// were spent (single-use) or invalidated before the cutoff.
	WipeSpentCards(before time.Time, limit int) (int64, error)

	CreateTransaction(t *Transaction) error
	Transaction(merchantID, reference string) (*Transaction, error)
	// TransactionByInvoice returns the merchant's newest transaction with
	// that invoice number.
	TransactionByInvoice(merchantID, invoice string) (*Transaction, error)
	// UpdateTransaction writes t if its stored version is still
	// t.Version, and increments t.Version.
	UpdateTransaction(t *Transaction) error
	// AddRefunded atomically adds a positive amount to the refunded total
	// of an APPROVED transaction if the new total stays within its total
	// (ReleaseRefunded gives a reservation back).
	AddRefunded(reference string, amount int64, now time.Time) error
	// TransactionsInStatus lists up to limit transactions in status whose
	// updated time is before the cutoff, oldest first (background jobs).
	TransactionsInStatus(status Status, updatedBefore time.Time, limit int) ([]*Transaction, error)

	CreateRefund(r *Refund) error
	Refund(merchantID, reference string) (*Refund, error)
	RefundByInvoice(merchantID, invoice string) (*Refund, error)
	// RefundsInStatus lists up to limit refunds in status created before
	// the cutoff, oldest first (the recovery job).
	RefundsInStatus(status Status, createdBefore time.Time, limit int) ([]*Refund, error)
	// UpdateRefund writes r's status and details if its stored status is
	// still from (a reserved refund settled after the processor answered).
	UpdateRefund(r *Refund, from Status) error

	// Card lifecycle.

	// TransactionByReference loads a transaction by reference alone, for
	// callers holding a capability of their own (the 3-D Secure challenge
	// page's one-time secret); every merchant-facing lookup is scoped.
	TransactionByReference(reference string) (*Transaction, error)

	// AddEvent appends to the audit log.
	AddEvent(e *Event) error

	// Idempotency keys.
	// ClaimIdempotencyKey inserts k, or takes over an unfinished key whose
	// lock expired before now; otherwise it returns the stored key with
	// ErrConflict.
	ClaimIdempotencyKey(k *IdempotencyKey, now time.Time) (*IdempotencyKey, error)
	FinishIdempotencyKey(merchantID, key string, status int, response []byte) error
	ReleaseIdempotencyKey(merchantID, key string) error
	DeleteIdempotencyKeys(createdBefore time.Time) (int64, error)

	// Direct debit refunds: a refund is reserved (AddRefunded, refund
	// PROCESSING) before the bank is asked, then settled.

	// ReleaseRefunded atomically subtracts amount from the refunded total
	// of a transaction (a reserved refund the bank rejected), never below 0.
	ReleaseRefunded(reference string, amount int64, now time.Time) error
	// Webhooks: the transactional outbox and its delivery log.

	// CreateWebhookDelivery inserts an outbox row.
	CreateWebhookDelivery(d *WebhookDelivery) error
	// ClaimWebhookDeliveries leases up to limit pending rows due at now
	// whose lease is free or expired, setting lease token and until with a
	// compare-and-set, so concurrent claimers never get the same row.
	ClaimWebhookDeliveries(now, leaseUntil time.Time, token string, limit int) ([]*WebhookDelivery, error)
	// FinishWebhookAttempt writes d's state, attempts, next attempt time
	// and last result and releases its lease, if the row is still leased
	// with token; otherwise it returns ErrConflict.
	FinishWebhookAttempt(d *WebhookDelivery, token string) error
	// AddWebhookAttempt appends to the delivery log.
	AddWebhookAttempt(a *WebhookAttempt) error
	// ResendWebhookDelivery makes a delivered or failed row pending again,
	// due at now; ErrConflict when it is pending already.
	ResendWebhookDelivery(id string, now time.Time) error
	WebhookDelivery(id string) (*WebhookDelivery, error)
	// ListWebhookDeliveries lists deliveries newest first.
	ListWebhookDeliveries(f WebhookFilter) ([]*WebhookDelivery, error)
	// WebhookAttempts lists a delivery's attempts, oldest first.
	WebhookAttempts(deliveryID string) ([]*WebhookAttempt, error)
	// CountDueWebhookDeliveries counts pending rows due at now, leased or not.
	CountDueWebhookDeliveries(now time.Time) (int, error)
	// WebhookBacklog counts pending rows, due or not, and finds the
	// creation time of the oldest.
	WebhookBacklog() (WebhookBacklog, error)
	// Payment links (link.go).
	CreatePaymentLink(l *PaymentLink) error
	// PaymentLink loads a link of the merchant by id.
	PaymentLink(merchantID, id string) (*PaymentLink, error)
	// PaymentLinkByTokenHash loads the link whose hosted page or virtual
	// terminal token hashes to hash.
	PaymentLinkByTokenHash(hash []byte) (*PaymentLink, error)
	// UpdatePaymentLink writes l's mutable fields if its stored version is
	// still l.Version, and increments l.Version.
	UpdatePaymentLink(l *PaymentLink) error
}

// TransactionToken is a single-use token authorising one operation.
type TransactionToken struct {
	Hash       []byte
	MerchantID string
	CreatedAt  time.Time
	ExpiresAt  time.Time
	UsedAt     time.Time // zero while unused
}

// Card is a vaulted card. The PAN is only ever held sealed.
type Card struct {
	Token         string
	MerchantID    string
	Sealed        SealedSecret
	Info          CardInfo
	MultiUse      bool
	CustomerID    string
	CreatedAt     time.Time
	UsedAt        time.Time // single-use tokens: when used
	InvalidatedAt time.Time
}

// Event is an audit record: every state change of money appends one in
// the same database transaction as the change.
type Event struct {
	MerchantID string
	Reference  string
	Type       string
	Data       string // JSON
	CreatedAt  time.Time
}
