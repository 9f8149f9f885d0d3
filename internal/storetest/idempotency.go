package storetest

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paylink/paylink"
)

func testIdempotencyKeys(t *testing.T, s paylink.Store) {
	m := NewMerchant(t, s)
	key := &paylink.IdempotencyKey{MerchantID: m.ID, Key: "k1", RequestHash: []byte("h1"), CreatedAt: t0, LockedUntil: t0.Add(time.Minute)}
	var claims atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.Update(t.Context(), func(tx paylink.Tx) error {
				_, err := tx.ClaimIdempotencyKey(key, t0, t0.Add(-24*time.Hour))
				return err
			})
			if err == nil {
				claims.Add(1)
			} else if !errors.Is(err, paylink.ErrConflict) {
				t.Errorf("claim: %v", err)
			}
		}()
	}
	wg.Wait()
	if claims.Load() != 1 {
		t.Fatalf("got %d claims of one key, want 1", claims.Load())
	}
	update(t, s, func(tx paylink.Tx) error {
		// After the lock expires a retry takes the key over; the first
		// claim can then neither finish nor release it.
		first := key.CreatedAt
		retry := *key
		retry.CreatedAt, retry.LockedUntil = t0.Add(2*time.Minute), t0.Add(5*time.Minute)
		if _, err := tx.ClaimIdempotencyKey(&retry, retry.CreatedAt, t0.Add(-24*time.Hour)); err != nil {
			t.Errorf("take over after lock expiry: %v", err)
		}
		sealed := paylink.SealedSecret{KeyID: "key1", Ciphertext: []byte("sealed response")}
		if err := tx.FinishIdempotencyKey(m.ID, "k1", first, 500, sealed); !errors.Is(err, paylink.ErrConflict) {
			t.Errorf("the first claim's finish after the take-over: got %v, want ErrConflict", err)
		}
		if err := tx.ReleaseIdempotencyKey(m.ID, "k1", first); err != nil {
			return err
		}
		if err := tx.FinishIdempotencyKey(m.ID, "k1", retry.CreatedAt, 201, sealed); err != nil {
			return fmt.Errorf("the retry's finish (the first claim's release must leave it): %w", err)
		}
		found, err := tx.ClaimIdempotencyKey(key, t0.Add(time.Hour), t0.Add(-23*time.Hour))
		if !errors.Is(err, paylink.ErrConflict) || found.Status != 201 || found.Sealed.KeyID != "key1" ||
			string(found.Sealed.Ciphertext) != "sealed response" || found.Response != nil {
			t.Errorf("finished key: got %+v, %v; want the stored sealed response with ErrConflict", found, err)
		}
		// Past its retention, not yet deleted: a new request takes it.
		other := &paylink.IdempotencyKey{MerchantID: m.ID, Key: "k1", RequestHash: []byte("h2"),
			CreatedAt: t0.Add(25 * time.Hour), LockedUntil: t0.Add(25*time.Hour + time.Minute)}
		if _, err := tx.ClaimIdempotencyKey(other, other.CreatedAt, other.CreatedAt.Add(-24*time.Hour)); err != nil {
			t.Errorf("claim of a key past its retention: %v, want it taken over", err)
		}
		found, err = tx.ClaimIdempotencyKey(key, other.CreatedAt, other.CreatedAt.Add(-24*time.Hour))
		if !errors.Is(err, paylink.ErrConflict) || found.Status != 0 || string(found.RequestHash) != "h2" || found.Sealed.KeyID != "" {
			t.Errorf("after the take-over: got %+v, %v; want the new request's claim, in progress", found, err)
		}
		n, err := tx.DeleteIdempotencyKeys(t0.Add(26 * time.Hour))
		if err != nil || n != 1 {
			t.Errorf("delete: got %d, %v; want 1", n, err)
		}
		return nil
	})
}
