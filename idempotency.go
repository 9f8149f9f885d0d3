package paylink

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Idempotency-key rules: a key is remembered for IdempotencyRetention; a
// request in progress holds its key for IdempotencyLock, after which a
// retry may take it over (the first attempt is presumed dead). The lock
// outlasts any request: a processor call has a deadline of at most
// MaxProcessorTimeout, and the server gives a response at most
// MaxRequestTime to be written.
const (
	IdempotencyRetention = 24 * time.Hour
	IdempotencyLock      = 3 * time.Minute
	MaxIdempotencyKey    = 255 // characters
)

// MaxRequestTime bounds how long a request may take to be answered (the
// HTTP server's write timeout): the longest processor call, with time
// left for the database and the response.
const MaxRequestTime = MaxProcessorTimeout + 30*time.Second

// DashboardKeyPrefix begins the idempotency keys of the dashboard's
// forms, which share a merchant's keys with its API clients; the API
// refuses keys that begin with it, so the two never meet.
const DashboardKeyPrefix = "dashboard:"

// IdempotencyKey is a remembered request.
type IdempotencyKey struct {
	MerchantID  string
	Key         string
	RequestHash []byte
	Status      int // HTTP status once finished; 0 while in progress
	// Response is the finished request's answer, opened. It is stored
	// sealed by the vault (Sealed), because an answer can hold what is
	// otherwise kept only hashed: a payment link's page addresses, a 3-D
	// Secure challenge address, a transaction token. Rows written before
	// sealing (migration 0028) have Response and no Sealed.
	Response    []byte
	Sealed      SealedSecret
	CreatedAt   time.Time
	LockedUntil time.Time
	// TookOver is set by a claim that took the key over from a request
	// that never finished (its lock passed), not stored: that request's
	// outcome is unknown.
	TookOver bool
}

// IdempotencyClaim is a request's hold on its idempotency key, from
// BeginIdempotent until FinishIdempotent ends it.
type IdempotencyClaim struct {
	MerchantID, Key string
	At              time.Time // when it was claimed: the key's created_at
	// TookOver: the key was taken over from a request under it that never
	// finished, which may have done what this one asks; its answer must
	// be kept, whatever it is, so that the key is not freed for another
	// request while that outcome is unknown.
	TookOver bool
}

// until is when c's lock ends: a retry may take the key over after it.
func (c *IdempotencyClaim) until() time.Time { return c.At.Add(idempotencyLock(c.Key)) }

// idempotencyLock is how long a claim of key holds it before a retry may
// take it over: IdempotencyLock, except for the dashboard's forms, whose
// unfinished claims are never taken over while the key is kept. An API
// money call spends a transaction token, so a retry after its lock meets
// the spent token; a dashboard action spends none, and its form's key is
// all that stops a second refund when the form is sent again after an
// outage longer than the lock. The staff member gets the payment as it now
// is and a fresh form instead (the dashboard's stale-form answer).
func idempotencyLock(key string) time.Duration {
	if strings.HasPrefix(key, DashboardKeyPrefix) {
		return IdempotencyRetention
	}
	return IdempotencyLock
}

// BeginIdempotent claims an idempotency key for a request. It returns the
// claim when the caller should run the request (and end it with
// FinishIdempotent), a finished record to replay, or a 409 when the key
// is in use by a request still running or was used with a different
// request. earlier are the fingerprints an earlier release made of the
// same request: a key stored under one of them is the same request too.
func (s *Service) BeginIdempotent(ctx context.Context, m *Merchant, key string, requestHash []byte, earlier ...[]byte) (*IdempotencyKey, *IdempotencyClaim, error) {
	replay, err := s.beginIdempotent(ctx, m, key, requestHash, earlier)
	if err != nil || replay.Status != 0 {
		return replay, nil, err
	}
	return nil, &IdempotencyClaim{MerchantID: m.ID, Key: key, At: replay.CreatedAt, TookOver: replay.TookOver}, nil
}

// validIdempotencyKey reports whether key may be stored, in clear, as
// m's idempotency key: text within MaxIdempotencyKey, and neither a card
// number nor one of m's secrets (an API key or webhook secret by its
// prefix, the company token itself), which paylink otherwise keeps only
// hashed or sealed.
func validIdempotencyKey(m *Merchant, key string) bool {
	return key != "" && utf8.RuneCountInString(key) <= MaxIdempotencyKey && CheckText(key, 4*MaxIdempotencyKey) == nil &&
		!ContainsCardNumber(key) && !LooksLikeSecret(key) && !SecretMatches(key, m.CompanyTokenHash)
}

// beginIdempotent claims key: the claim itself (status 0) when the caller
// should run the request, else the finished record to replay.
func (s *Service) beginIdempotent(ctx context.Context, m *Merchant, key string, requestHash []byte, earlier [][]byte) (*IdempotencyKey, error) {
	if !validIdempotencyKey(m, key) {
		why := fmt.Sprintf("must be 1 to %d characters of UTF-8 text without control characters, a card number or one of the merchant's secrets", MaxIdempotencyKey)
		return nil, &Error{Kind: KindInvalid, Code: CodeInvalidRequest, Message: "Idempotency-Key " + why,
			Fields: map[string]string{"Idempotency-Key": why}}
	}
	now := s.now()
	claim := &IdempotencyKey{MerchantID: m.ID, Key: key, RequestHash: requestHash, CreatedAt: now, LockedUntil: now.Add(idempotencyLock(key))}
	var found *IdempotencyKey
	// The claim runs to its end whether or not the client waits: a COMMIT
	// its hang-up cut short may have committed, and a claim nobody goes on
	// with would hold the key (claimContext).
	cctx, cancel := claimContext(ctx)
	defer cancel()
	err := s.store.Update(cctx, func(tx Tx) error {
		var err error
		found, err = tx.ClaimIdempotencyKey(claim, takeOverBefore(requestHash, now), now.Add(-IdempotencyRetention))
		return err
	})
	switch {
	case err == nil:
		return claim, nil
	case !errors.Is(err, ErrConflict):
		return nil, Internal("idempotency key", err)
	case !sameRequest(found.RequestHash, requestHash, earlier):
		return nil, Errorf(KindConflict, CodeIdempotencyConflict, "this Idempotency-Key was already used with a different request: "+
			"if this is a retry of a payment, look the payment up (by its invoice number) before sending it again under a new key")
	case found.Status == 0 && !now.Before(found.LockedUntil):
		return nil, Errorf(KindConflict, CodeIdempotencyConflict, "an earlier request with this Idempotency-Key never finished, and it may have completed: "+
			"look it up (a payment by its invoice number, or by the reference a transaction_token_used answer names; a payment link by its merchantReference) "+
			"before trying again under a new key; only the same payment request with the same transaction token takes the key over")
	case found.Status == 0:
		return nil, &Error{Kind: KindConflict, Code: CodeIdempotencyConflict, Err: ErrKeyInProgress,
			Message: "a request with this Idempotency-Key is still in progress; retry later"}
	}
	if found.Sealed.KeyID != "" {
		if found.Response, err = s.vault.Open(found.Sealed, SecretBinding(SecretIdempotentResponse, m.ID, key)); err != nil {
			return nil, Internal("open the stored response of an idempotency key", err)
		}
	}
	return found, nil
}

// takeOverBefore is when an unfinished claim of the same request must
// have ended its lock for requestHash's request to take the key over:
// now for a request that spends a transaction token (the two halves of
// its fingerprint differ: the second leaves the token out), which then
// meets that token spent, or not, by the attempt that never finished;
// never (the zero time) for one that spends none, a payment link or card
// token created, which would be made a second time if the first had
// committed unseen (ErrCommitInDoubt). Its retry gets "never finished".
func takeOverBefore(requestHash []byte, now time.Time) time.Time {
	const half = sha256.Size
	if len(requestHash) == 2*half && !bytes.Equal(requestHash[:half], requestHash[half:]) {
		return now
	}
	return time.Time{}
}

// sameRequest reports whether a key's stored fingerprint is hash, one of
// the earlier fingerprints of the same request, or differs from hash in
// its first half alone: a fingerprint of twice sha256.Size bytes (the
// API's) is the request's, then the request's without its transaction
// token, so a finished key replays to a retry with a new token. An
// unfinished claim is taken over only by the whole fingerprint
// (Tx.ClaimIdempotencyKey compares it), never by a retry with another
// token, which could charge a second time: that retry is told the claim
// is in progress, or never finished.
func sameRequest(stored, hash []byte, earlier [][]byte) bool {
	const half = sha256.Size
	if bytes.Equal(stored, hash) {
		return true
	}
	if len(stored) == 2*half && len(hash) == 2*half && bytes.Equal(stored[half:], hash[half:]) {
		return true
	}
	for _, e := range earlier {
		if bytes.Equal(stored, e) {
			return true
		}
	}
	return false
}

// FinishIdempotent stores the response of a claimed key for replays,
// sealed, or releases the key when the request failed in a way worth
// retrying (status 0 or 5xx; see Retryable for the API's errors). When
// the database cannot be reached (the request most likely failed for the
// same outage), it logs that at WARN (an outage is no bug), returns the
// error, which wraps ErrUnavailable and needs no more logging, and goes
// on trying in the background (finishLater), so that the client's retry
// once the database is back finds the key released, or its answer kept, instead of a 409 "still in
// progress" for the rest of IdempotencyLock.
func (s *Service) FinishIdempotent(ctx context.Context, c *IdempotencyClaim, status int, response []byte) error {
	keep := status != 0 && status < 500
	var sealed SealedSecret
	if keep {
		var err error
		if sealed, err = s.vault.Seal(response, SecretBinding(SecretIdempotentResponse, c.MerchantID, c.Key)); err != nil {
			return fmt.Errorf("finish idempotency key: seal the response: %w", err)
		}
	}
	write := func(ctx context.Context) error {
		return s.store.Update(ctx, func(tx Tx) error {
			if !keep {
				return tx.ReleaseIdempotencyKey(c.MerchantID, c.Key, c.At)
			}
			return tx.FinishIdempotencyKey(c.MerchantID, c.Key, c.At, status, sealed)
		})
	}
	err := write(ctx)
	if errors.Is(err, ErrUnavailable) {
		detached := context.WithoutCancel(ctx)
		if s.bg.start(func(stop context.Context) { s.finishLater(detached, stop, c, write) }) {
			s.log.WarnContext(ctx, "idempotency key's end not written: the database is unavailable; written in the background once it answers",
				"merchant_id", c.MerchantID, "err", err)
		} else {
			s.log.WarnContext(ctx, "idempotency key left locked: the service is closing; a retry waits for the lock to expire",
				"merchant_id", c.MerchantID)
		}
	}
	if err != nil {
		return fmt.Errorf("finish idempotency key: %w", err)
	}
	return nil
}

// finishLaterLongestWait is the longest wait between finishLater's tries:
// a retry of the request meanwhile is answered 409 "still in progress"
// (Retry-After: 1), so it bounds how long the key stays claimed after
// the database answers again. It was 10 s (PostgreSQL three-instance
// sweep); one try every 2 s per key costs a database that is down
// nothing it notices.
const finishLaterLongestWait = 2 * time.Second

// finishLater tries write again, with backoff, until the claim's lock
// runs out, or IdempotencyLock has passed on the wall clock, whichever
// ends first: a retry may take the key over after the lock anyway. The
// write names the claim, so it never ends a retry's claim of the same key.
// When stop is done (the Service is closing) it gives up at once, a write
// under way cancelled: the key stays claimed until its lock runs out, the
// state a crash leaves, which a retry already handles (409 in progress,
// then the key taken over). Its work is not lost silently: it logs that.
func (s *Service) finishLater(ctx, stop context.Context, c *IdempotencyClaim, write func(context.Context) error) {
	deadline, wallDeadline := c.until(), time.Now().Add(IdempotencyLock)
	timer := time.NewTimer(0)
	defer timer.Stop()
	for wait := 250 * time.Millisecond; ; wait = min(2*wait, finishLaterLongestWait) {
		timer.Reset(wait)
		select {
		case <-timer.C:
		case <-stop.Done():
			s.log.WarnContext(ctx, "idempotency key left locked: the service closed before the database answered; a retry waits for the lock to expire",
				"merchant_id", c.MerchantID)
			return
		}
		if !s.now().Before(deadline) || !time.Now().Before(wallDeadline) {
			s.log.WarnContext(ctx, "idempotency key left locked: the database stayed unreachable; a retry waits for the lock to expire")
			return
		}
		if done := s.finishOnce(ctx, stop, write); done {
			return
		}
	}
}

// finishOnce is one try of finishLater's write, cancelled if stop is done
// meanwhile; it reports whether finishLater is done (written, or an
// error other than the database being unreachable).
func (s *Service) finishOnce(ctx, stop context.Context, write func(context.Context) error) bool {
	call, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	defer context.AfterFunc(stop, cancel)()
	err := write(call)
	switch {
	case err == nil:
		return true
	case errors.Is(err, ErrUnavailable) || stop.Err() != nil:
		return false // try again, or, stopped, say the key is left locked
	case !errors.Is(err, ErrConflict):
		s.log.ErrorContext(ctx, "finish idempotency key", "err", err)
	}
	return true
}

// Retryable reports whether err describes a passing state rather than an
// answer to keep: an internal or unavailable error, a request whose
// client went away, or a 409 that says another operation on the same
// payment is still under way (operation_in_progress,
// authentication_pending, payment_link_in_progress). A request that
// ended so does not keep its Idempotency-Key: the retry runs. A token
// refused as expired or not valid is kept: an attempt under the key may
// have spent it and charged before its answer was lost.
func Retryable(err error) bool {
	if errors.Is(err, context.Canceled) {
		return true
	}
	e := AsError(err)
	switch {
	case e.Kind == KindInternal || e.Kind == KindUnavailable:
		return true
	case e.Kind != KindConflict:
		return false
	}
	switch e.Code {
	case CodeOperationInProgress, CodeAuthenticationPending, CodeLinkInProgress:
		return true
	}
	return false
}

// CleanupIdempotencyKeys forgets keys older than IdempotencyRetention.
func (s *Service) CleanupIdempotencyKeys(ctx context.Context) (int64, error) {
	var n int64
	err := s.store.Update(ctx, func(tx Tx) error {
		var err error
		n, err = tx.DeleteIdempotencyKeys(s.now().Add(-IdempotencyRetention))
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("clean up idempotency keys: %w", err)
	}
	return n, nil
}
