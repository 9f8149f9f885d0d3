package paylink

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"
)

// Idempotency-key rules: a key is remembered for IdempotencyRetention; a
// request in progress holds its key for IdempotencyLock, after which a
// retry may take it over (the first attempt is presumed dead).
const (
	IdempotencyRetention = 24 * time.Hour
	IdempotencyLock      = time.Minute
	MaxIdempotencyKey    = 255
)

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
	Response    []byte
	CreatedAt   time.Time
	LockedUntil time.Time
}

// BeginIdempotent claims an idempotency key for a request. It returns
// (nil, nil) when the caller should run the request, a finished record to
// replay, or a 409 when the key is in use by a request still running or
// was used with a different request.
func (s *Service) BeginIdempotent(ctx context.Context, m *Merchant, key string, requestHash []byte) (*IdempotencyKey, error) {
	if key == "" || len(key) > MaxIdempotencyKey || CheckText(key, MaxIdempotencyKey) != nil || ContainsCardNumber(key) {
		return nil, &Error{Kind: KindInvalid, Code: CodeInvalidRequest, Message: fmt.Sprintf("Idempotency-Key must be 1 to %d characters of UTF-8 text without control characters or a card number", MaxIdempotencyKey),
			Fields: map[string]string{"Idempotency-Key": fmt.Sprintf("must be 1 to %d characters of UTF-8 text without control characters or a card number", MaxIdempotencyKey)}}
	}
	now := s.now()
	claim := &IdempotencyKey{MerchantID: m.ID, Key: key, RequestHash: requestHash, CreatedAt: now, LockedUntil: now.Add(IdempotencyLock)}
	var found *IdempotencyKey
	err := s.store.Update(ctx, func(tx Tx) error {
		var err error
		found, err = tx.ClaimIdempotencyKey(claim, now)
		return err
	})
	switch {
	case err == nil:
		return nil, nil
	case !errors.Is(err, ErrConflict):
		return nil, Internal("idempotency key", err)
	case !bytes.Equal(found.RequestHash, requestHash):
		return nil, Errorf(KindConflict, CodeIdempotencyConflict, "this Idempotency-Key was already used with a different request")
	case found.Status == 0:
		return nil, Errorf(KindConflict, CodeIdempotencyConflict, "a request with this Idempotency-Key is still in progress; retry later")
	}
	return found, nil
}

// FinishIdempotent stores the response of a claimed key for replays, or
// releases the key when the request failed in a way worth retrying
// (status 0 or 5xx).
func (s *Service) FinishIdempotent(ctx context.Context, m *Merchant, key string, status int, response []byte) error {
	err := s.store.Update(ctx, func(tx Tx) error {
		if status == 0 || status >= 500 {
			return tx.ReleaseIdempotencyKey(m.ID, key)
		}
		return tx.FinishIdempotencyKey(m.ID, key, status, response)
	})
	if err != nil {
		return fmt.Errorf("finish idempotency key: %w", err)
	}
	return nil
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
