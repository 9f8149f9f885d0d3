package paylink_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
	"github.com/paylink/paylink/internal/processor"
)

// onEngines runs test against a fresh Service on SQLite and on a fresh
// database of the package's PostgreSQL (skipped, or failed with
// PAYLINK_REQUIRE_ALL=1, when PostgreSQL is unavailable).
func onEngines(t *testing.T, test func(t *testing.T, env *apitest.Env)) {
	t.Run("sqlite", func(t *testing.T) { test(t, apitest.Start(t, apitest.Options{})) })
	t.Run("postgres", func(t *testing.T) { test(t, apitest.Start(t, apitest.Options{DSN: pg.Database(t)})) })
}

// onEnginesShared is onEngines for tests that start a second instance on
// the same database: test gets the first instance and its DSN.
func onEnginesShared(t *testing.T, test func(t *testing.T, a *apitest.Env, dsn string)) {
	t.Run("sqlite", func(t *testing.T) {
		a := apitest.Start(t, apitest.Options{})
		test(t, a, a.DBPath)
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := pg.Database(t)
		test(t, apitest.Start(t, apitest.Options{DSN: dsn}), dsn)
	})
}

// wantError checks an error's kind and code.
func wantError(t *testing.T, what string, err error, kind paylink.Kind, code string) {
	t.Helper()
	var e *paylink.Error
	if !errors.As(err, &e) || e.Kind != kind || e.Code != code {
		t.Errorf("%s: got %v, want kind %v code %s", what, err, kind, code)
	}
}

// TestCardTokenErrorsAreTheSameInEveryCall: an unknown (or another
// merchant's) card token is not found, an invalidated one a conflict
// (card_token_invalid), in purchase, surcharge, look-up and invalidation.
func TestCardTokenErrorsAreTheSameInEveryCall(t *testing.T) {
	onEngines(t, func(t *testing.T, env *apitest.Env) {
		ctx := context.Background()
		svc := env.Service
		m, other := env.Onboard(), env.Onboard()
		card := &paylink.CardDetails{Number: "4111111111111111", ExpiryMonth: 7, ExpiryYear: env.Clock.Now().Year() + 2}
		c, err := svc.TokenizeCard(ctx, m.Merchant, paylink.TokenizeRequest{CompanyToken: m.Creds.CompanyToken, Card: card, MultiUse: true})
		if err != nil {
			t.Fatal(err)
		}
		calls := map[string]func(token string) error{
			"purchase": func(token string) error {
				tt, err := svc.IssueTransactionToken(ctx, m.Merchant, m.Creds.CompanyToken)
				if err != nil {
					return err
				}
				_, err = svc.Purchase(ctx, m.Merchant, paylink.PurchaseRequest{CompanyToken: m.Creds.CompanyToken,
					TransactionToken: tt, CardToken: token, Amount: 500, Currency: "AUD",
					Customer: paylink.Customer{IPAddress: "203.0.113.7", Timezone: "UTC"}})
				return err
			},
			"surcharge": func(token string) error {
				_, err := svc.PreviewSurcharge(ctx, m.Merchant, paylink.SurchargeRequest{CompanyToken: m.Creds.CompanyToken,
					CardToken: token, Amount: 500, Currency: "AUD"})
				return err
			},
			"look-up": func(token string) error {
				_, err := svc.LookupCard(ctx, m.Merchant, m.Creds.CompanyToken, token)
				return err
			},
		}
		foreign, err := svc.TokenizeCard(ctx, other.Merchant, paylink.TokenizeRequest{CompanyToken: other.Creds.CompanyToken, Card: card, MultiUse: true})
		if err != nil {
			t.Fatal(err)
		}
		for name, call := range calls {
			wantError(t, name+" with an unknown token", call("unknown"), paylink.KindNotFound, paylink.CodeNotFound)
			wantError(t, name+" with another merchant's token", call(foreign.Token), paylink.KindNotFound, paylink.CodeNotFound)
		}
		_, err = svc.InvalidateCardToken(ctx, m.Merchant, m.Creds.CompanyToken, foreign.Token)
		wantError(t, "invalidating another merchant's token", err, paylink.KindNotFound, paylink.CodeNotFound)
		if _, err := svc.InvalidateCardToken(ctx, m.Merchant, m.Creds.CompanyToken, c.Token); err != nil {
			t.Fatalf("invalidate: %v", err)
		}
		calls["invalidate again"] = func(token string) error {
			_, err := svc.InvalidateCardToken(ctx, m.Merchant, m.Creds.CompanyToken, token)
			return err
		}
		for name, call := range calls {
			wantError(t, name+" with an invalidated token", call(c.Token), paylink.KindConflict, paylink.CodeCardTokenInvalid)
		}
	})
}

// TestFailedAttemptEnqueuesItsWebhook: a FAILED purchase commits its
// webhook row with its status, like every other outcome.
func TestFailedAttemptEnqueuesItsWebhook(t *testing.T) {
	onEngines(t, func(t *testing.T, env *apitest.Env) {
		ctx := context.Background()
		hook := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		t.Cleanup(hook.Close)
		m := env.Onboard(func(n *paylink.NewMerchant) {
			n.Settings.Webhook.URL, n.Settings.Webhook.Domains = hook.URL+"/hook", []string{"127.0.0.1"}
		})
		tt, err := env.Service.IssueTransactionToken(ctx, m.Merchant, m.Creds.CompanyToken)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := env.Service.Purchase(ctx, m.Merchant, paylink.PurchaseRequest{CompanyToken: m.Creds.CompanyToken,
			TransactionToken: tt, Amount: 500, Currency: "AUD", Customer: paylink.Customer{IPAddress: "203.0.113.7", Timezone: "UTC"},
			Card: &paylink.CardDetails{Number: processor.CardProcessingError, ExpiryMonth: 7, ExpiryYear: env.Clock.Now().Year() + 2}})
		if err != nil || tr.Status != paylink.StatusFailed {
			t.Fatalf("purchase: got %v, %v; want FAILED", tr, err)
		}
		ds, err := env.Service.ListWebhooks(ctx, paylink.WebhookFilter{MerchantID: m.ID})
		if err != nil {
			t.Fatal(err)
		}
		if len(ds) != 1 || ds[0].Reference != tr.Reference || ds[0].EventStatus != paylink.StatusFailed {
			t.Fatalf("webhook rows: got %d %+v, want one FAILED row for %s", len(ds), ds, tr.Reference)
		}
	})
}

// TestAPurchaseRacingAnInvalidationSaysWhy: a never-used single-use token
// that a purchase and an invalidation race for is either spent by the
// purchase (the invalidation then answers as for a spent token, or
// invalidates it) or refused to the purchase as invalidated, never as
// "already used": on PostgreSQL the purchase used to read the token
// usable, lose the update to the invalidation, and answer card_token_used.
func TestAPurchaseRacingAnInvalidationSaysWhy(t *testing.T) {
	onEngines(t, func(t *testing.T, env *apitest.Env) {
		ctx := context.Background()
		m := env.Onboard()
		for range 40 {
			card := &paylink.CardDetails{Number: "4111111111111111", ExpiryMonth: 7, ExpiryYear: env.Clock.Now().Year() + 2}
			c, err := env.Service.TokenizeCard(ctx, m.Merchant, paylink.TokenizeRequest{CompanyToken: m.Creds.CompanyToken, Card: card})
			if err != nil {
				t.Fatal(err)
			}
			tt, err := env.Service.IssueTransactionToken(ctx, m.Merchant, m.Creds.CompanyToken)
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				_, err := env.Service.InvalidateCardToken(ctx, m.Merchant, m.Creds.CompanyToken, c.Token)
				done <- err
			}()
			_, err = env.Service.Purchase(ctx, m.Merchant, paylink.PurchaseRequest{CompanyToken: m.Creds.CompanyToken,
				TransactionToken: tt, CardToken: c.Token, Amount: 500, Currency: "AUD",
				Customer: paylink.Customer{IPAddress: "203.0.113.7", Timezone: "UTC"}})
			<-done
			var e *paylink.Error
			if errors.As(err, &e) && e.Code == paylink.CodeCardTokenUsed {
				t.Fatalf("purchase racing an invalidation of an unused token: got %v, want success or card_token_invalid", err)
			}
		}
	})
}
