package paylink_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
	"github.com/paylink/paylink/internal/pgtest"
)

// TestAnUnfinishedDashboardFormIsNeverTakenOver: an API money request's
// key whose request never finished (its end lost in an outage) is taken
// over by a retry once its lock has run out, the retry then meeting its
// spent transaction token; a dashboard form's key is not, since a
// dashboard action spends no token and the form's key is all that stops a
// second refund when it is sent again after an outage longer than the
// lock. (An API request that spends no token is not taken over either:
// TestAnUnfinishedCreationIsNeverTakenOver.)
func TestAnUnfinishedDashboardFormIsNeverTakenOver(t *testing.T) {
	onEngines(t, func(t *testing.T, env *apitest.Env) {
		ctx := context.Background()
		m := env.Onboard()
		// A money request's fingerprint: the request's, then the request's
		// without its transaction token (internal/api's requestHash).
		whole, blind := sha256.Sum256([]byte("the same request")), sha256.Sum256([]byte("the same request, no token"))
		hash := append(whole[:], blind[:]...)
		for _, key := range []string{"order-1", paylink.DashboardKeyPrefix + "form-1"} {
			if _, claim, err := env.Service.BeginIdempotent(ctx, m.Merchant, key, hash); err != nil || claim == nil {
				t.Fatalf("%s: first claim: %v, %v", key, claim, err)
			}
		}
		env.Clock.Advance(paylink.IdempotencyLock + time.Second)
		if _, claim, err := env.Service.BeginIdempotent(ctx, m.Merchant, "order-1", hash); err != nil || claim == nil {
			t.Errorf("an API key past its lock: got %v, %v; want it taken over", claim, err)
		}
		_, claim, err := env.Service.BeginIdempotent(ctx, m.Merchant, paylink.DashboardKeyPrefix+"form-1", hash)
		var e *paylink.Error
		if claim != nil || !errors.As(err, &e) || e.Code != paylink.CodeIdempotencyConflict {
			t.Errorf("a dashboard form's key past the API's lock: got %v, %v; want 409 %s", claim, err, paylink.CodeIdempotencyConflict)
		}
	})
}

// TestClosingTheServiceStopsAKeysLateEnd: the end of an Idempotency-Key
// that an outage kept from being written is retried in the background
// (finishLater) for up to IdempotencyLock, 3 minutes. Closing the
// Service, as serve does before it closes the store, stops that retry at
// once and waits for it: no goroutine outlives the Service to write to a
// closed store, and the log says the key stays locked until its lock
// runs out.
func TestClosingTheServiceStopsAKeysLateEnd(t *testing.T) {
	srv, dsn := pgtest.DurableDatabase(t)
	env := apitest.Start(t, apitest.Options{DSN: dsn})
	ctx := context.Background()
	m := env.Onboard()
	hash := sha256.Sum256([]byte("a request"))
	_, claim, err := env.Service.BeginIdempotent(ctx, m.Merchant, "order-closing", hash[:])
	if err != nil || claim == nil {
		t.Fatalf("claim: %v, %v", claim, err)
	}
	if err := srv.Halt(); err != nil {
		t.Fatal(err)
	}
	if err := env.Service.FinishIdempotent(ctx, claim, 200, []byte(`{}`)); !errors.Is(err, paylink.ErrUnavailable) {
		t.Fatalf("finishing the key with the database halted: got %v, want it unavailable", err)
	}
	for wait := time.Now().Add(5 * time.Second); !finishLaterRunning(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(wait) {
			t.Fatal("no finishLater goroutine after a key's end failed in an outage")
		}
	}
	closing, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	start := time.Now()
	if err := env.Service.Close(closing); err != nil {
		t.Errorf("close: %v", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("close took %s, want it prompt", took)
	}
	if finishLaterRunning() {
		t.Error("finishLater still running after the Service closed")
	}
	if logs := env.LogText(); !strings.Contains(logs, "idempotency key left locked: the service closed") {
		t.Errorf("the log does not say the key was left locked:\n%s", logs)
	}
}

// finishLaterRunning reports whether a goroutine is in finishLater.
func finishLaterRunning() bool {
	buf := make([]byte, 1<<20)
	return strings.Contains(string(buf[:runtime.Stack(buf, true)]), "paylink.(*Service).finishLater")
}
