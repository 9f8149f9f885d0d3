package sqlstore_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
)

// Card lifecycle on PostgreSQL: the races and the expiry job
// with several instances on one database, over real HTTP.

// pgInstances starts n API instances sharing one fresh PostgreSQL database.
func pgInstances(t *testing.T, n int) []*apitest.Env {
	dsn := pg.Database(t)
	envs := make([]*apitest.Env, n)
	for i := range envs {
		envs[i] = apitest.Start(t, apitest.Options{DSN: dsn})
	}
	return envs
}

// pgHold places a 10.00 hold through env and returns its reference.
func pgHold(t *testing.T, env *apitest.Env, m *apitest.Merchant) string {
	t.Helper()
	r := env.Post("/v5/purchase", m, env.CardPurchase(m, "4111111111111111", "10.00", func(b map[string]any) {
		apitest.Set(b, "purchase.should_service_apply_pre_authorisation", true)
	}))
	if r.Str("purchase.status") != "PRE_AUTHORISED" {
		t.Fatalf("hold: got %s", r.Raw)
	}
	return r.Str("purchase.purchase_reference")
}

// concurrently runs fns at once and returns their HTTP statuses.
func concurrently(fns ...func() apitest.Response) map[int]int {
	var mu sync.Mutex
	var wg sync.WaitGroup
	statuses := map[int]int{}
	for _, fn := range fns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := fn()
			mu.Lock()
			statuses[r.Status]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	return statuses
}

func TestPostgresCaptureCancelRaceAcrossInstances(t *testing.T) {
	envs := pgInstances(t, 2)
	m := envs[0].Onboard()
	for round := range 3 {
		ref := pgHold(t, envs[0], m)
		op := func(env *apitest.Env, path string) func() apitest.Response {
			body := map[string]any{"token": map[string]any{"company_token": m.Creds.CompanyToken, "transaction_token": env.TransactionToken(m)},
				"capture": map[string]any{"amount": "10.00", "currency": "AUD"}}
			return func() apitest.Response { return env.Post("/v5/purchase/"+ref+path, m, body) }
		}
		got := concurrently(op(envs[0], "/capture"), op(envs[1], "/cancel"), op(envs[1], "/capture"), op(envs[0], "/capture"))
		if got[http.StatusOK] != 1 || got[http.StatusConflict] != 3 {
			t.Errorf("round %d: got statuses %v, want one 200 and three 409", round, got)
		}
	}
}

func TestPostgresRefundRaceAcrossInstances(t *testing.T) {
	envs := pgInstances(t, 2)
	m := envs[0].Onboard()
	r := envs[0].Post("/v5/purchase", m, envs[0].CardPurchase(m, "4111111111111111", "10.00"))
	ref := r.Str("purchase.purchase_reference")
	var fns []func() apitest.Response
	for i := range 10 {
		env := envs[i%2]
		body := map[string]any{"token": map[string]any{"company_token": m.Creds.CompanyToken, "transaction_token": env.TransactionToken(m)},
			"customer": map[string]any{"ip_address": "203.0.113.9", "timezone": "UTC"},
			"refund":   map[string]any{"amount": "3.00", "currency": "AUD"}}
		fns = append(fns, func() apitest.Response { return env.Post("/v5/purchase/"+ref+"/refund", m, body) })
	}
	if got := concurrently(fns...); got[http.StatusOK] != 3 || got[http.StatusBadRequest] != 7 {
		t.Errorf("got statuses %v, want three 200 and seven 400", got)
	}
	status := envs[1].Post("/v5/refund/"+ref, m, map[string]any{"company_token": m.Creds.CompanyToken})
	if status.Str("status") != "APPROVED" {
		t.Errorf("refund status: got %s", status.Raw)
	}
}

func TestPostgresExpiryJobReleasesEachHoldOnce(t *testing.T) {
	envs := pgInstances(t, 3)
	m := envs[0].Onboard()
	const holds = 12
	for range holds {
		pgHold(t, envs[0], m)
	}
	var wg sync.WaitGroup
	released := make([]int, len(envs))
	for i, env := range envs {
		env.Clock.Advance(7*24*time.Hour + time.Minute)
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := env.Service.ExpirePreAuths(context.Background())
			if err != nil {
				t.Errorf("instance %d: %v", i, err)
			}
			released[i] = n
		}()
	}
	wg.Wait()
	total := 0
	for _, n := range released {
		total += n
	}
	if total != holds {
		t.Errorf("released %v (total %d), want each of %d holds released exactly once", released, total, holds)
	}
	var left []*paylink.Transaction
	err := envs[0].Store.View(context.Background(), func(tx paylink.Tx) error {
		var err error
		left, err = tx.TransactionsInStatus(paylink.StatusPreAuthorised, envs[0].Clock.Now(), paylink.Position{}, 100)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Errorf("got %d holds still PRE_AUTHORISED, want 0", len(left))
	}
}
