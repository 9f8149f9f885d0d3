package storetest

import (
	"errors"
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
				_, err := tx.ClaimIdempotencyKey(key, t0)
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
		// After the lock expires a retry takes the key over.
		if _, err := tx.ClaimIdempotencyKey(key, t0.Add(2*time.Minute)); err != nil {
			t.Errorf("take over after lock expiry: %v", err)
		}
		if err := tx.FinishIdempotencyKey(m.ID, "k1", 201, []byte(`{"ok":true}`)); err != nil {
			return err
		}
		found, err := tx.ClaimIdempotencyKey(key, t0.Add(time.Hour))
		if !errors.Is(err, paylink.ErrConflict) || found.Status != 201 || string(found.Response) != `{"ok":true}` {
			t.Errorf("finished key: got %+v, %v; want the stored response with ErrConflict", found, err)
		}
		n, err := tx.DeleteIdempotencyKeys(t0.Add(time.Second))
		if err != nil || n != 1 {
			t.Errorf("delete: got %d, %v; want 1", n, err)
		}
		return nil
	})
}
