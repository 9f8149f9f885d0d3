package paylink_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"testing"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
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
