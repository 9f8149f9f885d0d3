package paylink

import (
	"context"
	"time"
)

// Store is paylink's persistence. Stores persist; they do not decide: the
// business rules live in Service, and a Store only guarantees that each
// Update is atomic and that guarded writes are compare-and-set.
type Store interface {
	// View runs fn with read-only access. Each read sees committed data,
	// but two reads may see the database at two moments (a write may
	// commit between them): fn that needs its reads to agree uses
	// Snapshot.
	View(ctx context.Context, fn func(Tx) error) error
	// Snapshot runs fn in one read-only transaction: every read in it
	// sees the database as of one moment, whatever commits meanwhile.
	// It costs a transaction's statements beyond View's, and holds the
	// moment's rows from being reclaimed while it runs. fn only reads: a
	// write fails, and is reported as the database being unavailable.
	Snapshot(ctx context.Context, fn func(Tx) error) error
	// Update runs fn in one write transaction and commits it durably
	// before returning. fn must do no I/O other than through tx, and may
	// be run batched with other callers' functions (group commit); an
	// error from fn rolls back only fn's own writes. A write whose
	// refusal a Tx method documents as possibly deferred fails, when
	// refused, the transaction's next statement and Update itself, which
	// then returns that refusal (ErrTokenSpent, ErrConflict).
	Update(ctx context.Context, fn func(Tx) error) error
	// Ping reports whether the database is reachable.
	Ping(ctx context.Context) error
	Close() error
}

// Tx is the set of operations available inside View and Update. Lookups
// return ErrNotFound for a missing row; guarded writes return ErrConflict
// when their guard does not hold.
type Tx interface {
	// CreateMerchant inserts m and its first API key (m.APIKeyHash).
	CreateMerchant(m *Merchant) error
	Merchant(id string) (*Merchant, error)
	ListMerchants() ([]*Merchant, error)
	// MerchantsAtEnds lists the n merchants with the lowest mids and the
	// n with the highest, each once, ordered by mid.
	MerchantsAtEnds(n int) ([]*Merchant, error)
	UpdateMerchantSettings(id string, s MerchantSettings) error
	// LockMerchantSettings serialises changes to one merchant's settings
	// (read, change, write) until the end of the database transaction:
	// two changes at once both keep what they changed.
	LockMerchantSettings(merchantID string) error

	// API keys (apikey.go).

	// APIKeyByHash loads the key with that hash, whether or not it has
	// expired (the Service decides).
	APIKeyByHash(hash []byte) (*APIKey, error)
	// APIKeys lists a merchant's keys, the current one first, then the
	// previous ones newest first.
	APIKeys(merchantID string) ([]*APIKey, error)
	// RollAPIKey stores k as its merchant's current key and ends every
	// other key of the merchant at oldUntil, unless it ends sooner;
	// ErrNotFound for an unknown merchant.
	RollAPIKey(k *APIKey, oldUntil time.Time) error

	// SpendTransactionToken records a stateless transaction token (by its
	// hash, with the expiry it carries) as spent by the operation whose
	// reference is spentBy; ErrTokenSpent when it already is, possibly
	// deferred (see Update): PostgreSQL sends the spend with the
	// transaction's next round trip. Issuing a token stores nothing
	// (token.go).
	SpendTransactionToken(hash []byte, expiresAt time.Time, spentBy string) error
	// ReleaseTransactionToken forgets that the operation spentBy spent a
	// token, so that it can be spent again; a token another operation
	// spent stays spent.
	ReleaseTransactionToken(hash []byte, expiresAt time.Time, spentBy string) error
	// TransactionTokenSpender is the reference of the operation that
	// spent a token ("" for one spent before spenders were recorded);
	// ErrNotFound when it is not spent. It waits for a transaction still
	// spending the token to end, and so writes: call it in Update.
	TransactionTokenSpender(hash []byte, expiresAt time.Time) (string, error)
	// DeleteSpentTransactionTokens forgets spent tokens that expired
	// before the cutoff.
	DeleteSpentTransactionTokens(before time.Time) (int64, error)

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
	// TransactionState returns what a status look-up shows of the
	// merchant's transaction with that purchase reference: one indexed
	// read of a few columns, without decoding the transaction's details.
	TransactionState(merchantID, reference string) (*TransactionState, error)
	// NewestByInvoice returns the merchant's newest transaction with that
	// invoice number.
	NewestByInvoice(merchantID, invoice string) (*OrderCandidate, error)
	// LinkDecidingPayment returns the payment that decides the merchant's
	// payment link with that merchant reference: its paid payment, else
	// the attempt holding its claim, of the link changed last among those
	// that have either; ErrNotFound when none.
	LinkDecidingPayment(merchantID, merchantReference string) (*OrderCandidate, error)
	// UpdateTransaction writes t if its stored version is still
	// t.Version, and increments t.Version.
	UpdateTransaction(t *Transaction) error
	// AddRefunded atomically adds a positive amount to the refunded total
	// of an APPROVED transaction if the new total stays within its total
	// (ReleaseRefunded gives a reservation back).
	AddRefunded(reference string, amount int64, now time.Time) error
	// TransactionsInStatus lists up to limit transactions in status whose
	// updated time is before the cutoff, oldest first (by updated time,
	// then reference), after the position after (the zero Position: from
	// the oldest) (background jobs). Only the statuses work waits in are
	// indexed and accepted: PENDING, PROCESSING, UNKNOWN,
	// REQUIRES_AUTHENTICATION, PRE_AUTHORISED.
	TransactionsInStatus(status Status, updatedBefore time.Time, after Position, limit int) ([]*Transaction, error)

	CreateRefund(r *Refund) error
	Refund(merchantID, reference string) (*Refund, error)
	// RefundByInvoice loads the merchant's newest refund with that
	// invoice number, failing that the newest refund of that purchase
	// reference, failing that the newest refund of the purchases with
	// that invoice number (ErrNotFound when none).
	RefundByInvoice(merchantID, invoice string) (*Refund, error)
	// RefundsInStatus lists up to limit refunds in status created before
	// the cutoff, oldest first (by created time, then reference), after
	// the position after (the recovery job).
	RefundsInStatus(status Status, createdBefore time.Time, after Position, limit int) ([]*Refund, error)
	// CountInStatus counts the transactions and refunds in status, in all
	// merchants (the needs-review gauge); the same statuses as
	// TransactionsInStatus.
	CountInStatus(status Status) (int, error)
	// UpdateRefund writes r's status and details if its stored status is
	// still from (a reserved refund settled after the processor answered).
	UpdateRefund(r *Refund, from Status) error

	// Card lifecycle.

	// TransactionByReference loads a transaction by reference alone, for
	// callers holding a capability of their own (the 3-D Secure challenge
	// page's one-time secret); every merchant-facing lookup is scoped.
	TransactionByReference(reference string) (*Transaction, error)

	// Key rotation (keyrotation.go).

	// SecretsToRotate lists up to limit stored secrets of kind whose key
	// id is neither keyID nor "" (erased), or, for cards, whose
	// fingerprint was made under another key, with ids after after, in id
	// order. next is the cursor for the following call, "" when none is
	// left.
	SecretsToRotate(kind SecretKind, keyID, after string, limit int) (secrets []StoredSecret, next string, err error)
	// ResealSecret writes s's sealed value (and a card's fingerprint) if
	// the stored one is still old: compare-and-set, so a concurrent writer
	// or a second rotation is never overwritten; otherwise ErrConflict.
	ResealSecret(s StoredSecret, old SealedSecret) error
	// CountSecretsToRotate counts what SecretsToRotate would list in all.
	CountSecretsToRotate(keyID string) (int64, error)

	// AddEvent appends to the state history of a transaction or refund.
	AddEvent(e *Event) error
	// Events lists the merchant's history events of the references, in
	// the order they were added.
	Events(merchantID string, references []string) ([]*Event, error)

	// The dashboard's payment list (payment_search.go) and timeline
	// (timeline.go).

	// SearchTransactions lists the transactions matching q, newest first
	// (created time, then reference), at most q.Limit.
	SearchTransactions(q PaymentQuery) ([]*Transaction, error)
	// RefundsOf lists the merchant's refunds of a transaction, oldest first.
	RefundsOf(merchantID, transactionReference string) ([]*Refund, error)

	// The audit log (audit.go): append-only, so there is no update or
	// delete.

	// AddAuditEvent appends e and sets e.ID.
	AddAuditEvent(e *AuditEvent) error
	// AuditEvents lists the rows matching f in id order.
	AuditEvents(f AuditFilter) ([]*AuditEvent, error)
	// AuditEventsAbout lists the merchant's rows whose object is one of
	// objectIDs, in id order.
	AuditEventsAbout(merchantID string, objectIDs []string) ([]*AuditEvent, error)

	// Idempotency keys.
	// ClaimIdempotencyKey inserts k, or takes over an unfinished key of
	// the same request whose lock expired before takeOverBefore (the zero
	// time: never), or a key created before expiredBefore (past its
	// retention, not yet deleted); otherwise it returns the stored key
	// with ErrConflict.
	ClaimIdempotencyKey(k *IdempotencyKey, takeOverBefore, expiredBefore time.Time) (*IdempotencyKey, error)
	// FinishIdempotencyKey stores the sealed response of the claim of key
	// made at claimedAt (its created_at); ErrConflict when that claim is
	// not there unfinished (a retry took the key over).
	FinishIdempotencyKey(merchantID, key string, claimedAt time.Time, status int, response SealedSecret) error
	// ReleaseIdempotencyKey forgets the unfinished claim of key made at
	// claimedAt, so that the request can be retried; another claim of the
	// key is left alone.
	ReleaseIdempotencyKey(merchantID, key string, claimedAt time.Time) error
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
	// FinishWebhookAttempts writes each delivery's state, attempts, next
	// attempt time, last result and held receiver and releases its lease, if the row is
	// still pending and leased with the finish's token, and returns the
	// ids of the rows it wrote (a row whose lease was lost is left as it
	// is). It takes a whole batch in one statement or a few.
	FinishWebhookAttempts(fs []WebhookFinish) ([]string, error)
	// ReleaseHeldWebhookDeliveries makes up to limit pending rows held
	// for receiver and not leased due at at, no longer held, and returns
	// how many it released.
	ReleaseHeldWebhookDeliveries(receiver string, limit int, at time.Time) (int, error)
	// ProbeHeldWebhookDelivery makes the oldest pending row held for
	// receiver and not leased (by next attempt time, then id) due at at,
	// still held (its attempt is a probe of the receiver), and reports
	// whether there was one.
	ProbeHeldWebhookDelivery(receiver string, at time.Time) (bool, error)
	// HeldWebhookReceivers lists the receivers pending rows are held for.
	// A delivered or failed row's mark is ignored by these three.
	HeldWebhookReceivers() ([]string, error)
	// AddWebhookAttempts appends to the delivery log.
	AddWebhookAttempts(as []*WebhookAttempt) error
	// ResendWebhookDelivery makes a delivered or failed row pending again,
	// due at now; ErrConflict when it is pending already.
	ResendWebhookDelivery(id string, now time.Time) error
	WebhookDelivery(id string) (*WebhookDelivery, error)
	// ListWebhookDeliveries lists deliveries matching f newest first
	// (created time, then id).
	ListWebhookDeliveries(f WebhookFilter) ([]*WebhookDelivery, error)
	// WebhookAttempts lists the attempts of the deliveries, oldest first.
	WebhookAttempts(deliveryIDs ...string) ([]*WebhookAttempt, error)
	// CountDueWebhookDeliveries counts pending rows due at now, leased or not.
	CountDueWebhookDeliveries(now time.Time) (int, error)
	// Ledger (ledger.go): postings are appended, never changed.

	// AddPosting appends a balanced posting and its lines; ErrConflict
	// when a posting with its key exists (the event was posted already),
	// possibly deferred (see Update).
	AddPosting(p *Posting) error
	// LedgerBalances sums a merchant's journal lines by account and currency.
	LedgerBalances(merchantID string) ([]AccountBalance, error)
	// BalanceTransactions lists a merchant's postings that move its
	// balance, newest first, with ids below before ("" for the newest).
	BalanceTransactions(merchantID, before string, limit int) ([]*Posting, error)
	// BalanceTransaction loads one of them, without lines.
	BalanceTransaction(merchantID, id string) (*Posting, error)
	// PostingsOf lists the postings of a reference with their lines.
	PostingsOf(reference string) ([]*Posting, error)
	// ScanTransactions, ScanRefunds and ScanPostings page through every
	// row in primary-key order after the given key (ledger verification).
	ScanTransactions(after string, limit int) ([]*Transaction, error)
	ScanRefunds(after string, limit int) ([]*Refund, error)
	ScanPostings(after string, limit int) ([]*Posting, error)
	// OrphanLedgerLines lists up to limit posting ids that ledger lines
	// name but no posting has (PostgreSQL keeps no foreign key for it).
	OrphanLedgerLines(limit int) ([]string, error)
	// MisfiledLedgerLines lists up to limit postings (id, key and
	// reference only) with a line of another merchant or currency than
	// the posting's.
	MisfiledLedgerLines(limit int) ([]*Posting, error)

	// Settlement and payouts (settlement.go).

	// UnsettledAccounts lists the merchants and currencies with balance
	// transactions made before cutoff that no batch covers.
	UnsettledAccounts(cutoff time.Time) ([]MerchantCurrency, error)
	// LockMerchantLedger serialises settlement of one merchant and
	// currency until the end of the database transaction.
	LockMerchantLedger(merchantID, currency string) error
	// UnsettledPostings lists those balance transactions, oldest first.
	UnsettledPostings(merchantID, currency string, cutoff time.Time) ([]*Posting, error)
	// CreateSettlementBatch inserts b covering the postings; ErrConflict
	// when any of them is covered by a batch already.
	CreateSettlementBatch(b *SettlementBatch, postingIDs []string) error
	// UnpaidBatches lists the batches no payout covers, oldest first.
	UnpaidBatches(merchantID, currency string) ([]*SettlementBatch, error)
	// CreatePayout inserts p covering p.BatchIDs; ErrConflict when any of
	// them is paid out already.
	CreatePayout(p *Payout) error
	// Payouts lists a merchant's payouts newest first, ids below before.
	Payouts(merchantID, before string, limit int) ([]*Payout, error)
	// Payout loads one of a merchant's payouts with its batches.
	Payout(merchantID, id string) (*Payout, error)
	// SettlementBatches lists a merchant's batches of a UTC day.
	SettlementBatches(merchantID, day string) ([]*SettlementBatch, error)
	// BatchPostings lists the balance transactions a batch covers, with
	// their lines, oldest first.
	BatchPostings(batchID string) ([]*Posting, error)
	// ScanSettlementBatches and ScanPayouts page through every batch and
	// payout in id order after the given id (ledger verification).
	ScanSettlementBatches(after string, limit int) ([]*SettlementBatch, error)
	ScanPayouts(after string, limit int) ([]*Payout, error)

	// Reconciliation (reconcile.go).

	// AcquirerActivity lists the card and wallet captures (by processed
	// time) and their approved refunds (by creation time) in [start, end).
	AcquirerActivity(start, end time.Time) ([]AcquirerRecord, error)
	// AcquirerPostings lists the charge and refund postings made in
	// [start, end).
	AcquirerPostings(start, end time.Time) ([]*Posting, error)
	// AcquirerPostingOf is the charge posting of a purchase reference, or
	// the refund posting of a refund reference, whatever its day;
	// ErrNotFound when there is none.
	AcquirerPostingOf(ref string) (*Posting, error)
	// MerchantOfReference is the merchant of the payment whose purchase
	// reference, or the refund whose refund reference, is ref; "" when
	// there is none.
	MerchantOfReference(ref string) (string, error)
	// CreateReconciliation stores a reconciliation run and its variances.
	CreateReconciliation(r *Reconciliation) error
	// WebhookBacklog counts pending rows, due or not, and finds the
	// creation time of the oldest.
	WebhookBacklog() (WebhookBacklog, error)
	// Reconciliations lists up to limit runs, newest first, with their
	// variances.
	Reconciliations(limit int) ([]*Reconciliation, error)
	// MerchantVariances lists up to limit of a merchant's variances,
	// newest run first, each run's in the order they were found.
	MerchantVariances(merchantID string, limit int) ([]RunVariance, error)
	// Payment links (link.go).
	CreatePaymentLink(l *PaymentLink) error
	// PaymentLink loads a link of the merchant by id.
	PaymentLink(merchantID, id string) (*PaymentLink, error)
	// PaymentLinks lists up to limit of the merchant's links, newest
	// first.
	PaymentLinks(merchantID string, limit int) ([]*PaymentLink, error)
	// PaymentLinkByTokenHash loads the link whose hosted page or virtual
	// terminal token hashes to hash.
	PaymentLinkByTokenHash(hash []byte) (*PaymentLink, error)
	// UpdatePaymentLink writes l's mutable fields if its stored version is
	// still l.Version, and increments l.Version.
	UpdatePaymentLink(l *PaymentLink) error

	// Dashboard users, sessions and invites (user.go).

	// CreateUser inserts u; ErrConflict when its email is taken.
	CreateUser(u *User) error
	// User loads a user of the merchant by id.
	User(merchantID, id string) (*User, error)
	// UserByEmail loads the user with that (normalised) email.
	UserByEmail(email string) (*User, error)
	// Users lists a merchant's users by email.
	Users(merchantID string) ([]*User, error)
	// UpdateUser writes u's role, password hash, TOTP, recovery codes and
	// last TOTP step if the stored user is still at u.Version, and moves
	// both to the next version; ErrConflict when the user changed or went
	// since u was read.
	UpdateUser(u *User) error
	// DeleteUser deletes a user of the merchant and its sessions.
	DeleteUser(merchantID, id string) error
	CreateSession(s *Session) error
	Session(idHash []byte) (*Session, error)
	// TouchSession sets a session's last use and pending second factor.
	TouchSession(idHash []byte, lastSeen time.Time, pendingTOTP bool) error
	DeleteSession(idHash []byte) error
	// DeleteUserSessions revokes every session of a user.
	DeleteUserSessions(userID string) error
	// DeleteOtherUserSessions revokes every session of a user but the
	// one whose id hash is keep.
	DeleteOtherUserSessions(userID string, keep []byte) error
	CreateInvite(i *Invite) error
	Invite(tokenHash []byte) (*Invite, error)
	// Invites lists a merchant's unused invites that have not expired at
	// now, newest first.
	Invites(merchantID string, now time.Time) ([]*Invite, error)
	// DeleteInvite deletes an unused invite of the merchant; ErrNotFound
	// when there is none (used, another merchant's, or never made).
	DeleteInvite(merchantID string, tokenHash []byte) error
	// UseInvite marks an unused invite used at now if it has not expired;
	// otherwise ErrConflict.
	UseInvite(tokenHash []byte, now time.Time) error
	// AddSignInFailure records a failed sign-in for emailKey (the
	// Service's key of the email typed, never the email itself) from the
	// source address ip (as the throttle counts it, an IPv6 address by
	// its /48 prefix; "" when unknown) at, and deletes that key's and
	// that address's failures from before pruneBefore. It returns the
	// failure's id.
	AddSignInFailure(emailKey, ip string, at, pruneBefore time.Time) (int64, error)
	// DeleteSignInFailure deletes the failure with id (an attempt that
	// turned out not to fail).
	DeleteSignInFailure(id int64) error
	// CountSignInFailures counts the failures at or after since recorded
	// under any of emailKeys (one email's key under each master key): all
	// of them, and those from the source address ip.
	CountSignInFailures(emailKeys []string, ip string, since time.Time) (all, fromIP int, err error)
	// CountSignInFailuresFromIP counts the failures from the source
	// address ip, whatever their email, at or after since.
	CountSignInFailuresFromIP(ip string, since time.Time) (int, error)
	// DeleteExpiredSessions deletes sessions past their absolute end at
	// now, and sign-in failures from before failuresBefore (clean-up job).
	DeleteExpiredSessions(now, failuresBefore time.Time) (int64, error)
	// DailyVolume sums a merchant's transactions created at or after
	// since by UTC day and currency, oldest first.
	DailyVolume(merchantID string, since time.Time) ([]DailyVolume, error)
}

// Position is a place in a list of waiting items ordered by a time and
// then by reference: a job that leaves some items where they are (the
// recovery job's UNKNOWN items) pages on from the last one it saw. The
// zero Position is before every item.
type Position struct {
	At        time.Time
	Reference string
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

	// FingerprintKeyID names the master key Info.Fingerprint was made
	// under ("" for fingerprints from before they were scoped per
	// merchant); key rotation recomputes any not under the active key.
	FingerprintKeyID string
}

// Event is a step in the state history of a transaction or refund (the
// events table): every state change of money appends one in the same
// database transaction as the change. Who asked for a change is the audit
// log's business (AuditEvent), not this one's.
type Event struct {
	MerchantID string
	Reference  string
	Type       string
	Data       string // JSON
	CreatedAt  time.Time
}
