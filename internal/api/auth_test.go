package api_test

import (
	"context"
	"testing"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
)

// TestAuthenticatedMerchantIsCachedBriefly: a change made to a merchant
// behind this instance's back (by another instance) is seen within
// AuthCacheTTL, and not before the cached entry expires.
func TestAuthenticatedMerchantIsCachedBriefly(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	preview := func() string {
		r := env.Post("/v5/surcharge", m, map[string]any{"token": map[string]any{"company": m.Creds.CompanyToken},
			"card": map[string]any{"number": "4111111111111111", "expiry_month": 12, "expiry_year": 40}, "amount": 100, "currency": "AUD"})
		return r.Str("surcharge.percent")
	}
	if got := preview(); got != "1.2" {
		t.Fatalf("got %s%%, want the default 1.2%%", got)
	}
	settings := m.Settings
	settings.Surcharge.Credit = 20000 // 2%, written by "another instance"
	if err := env.Store.Update(context.Background(), func(tx paylink.Tx) error { return tx.UpdateMerchantSettings(m.ID, settings) }); err != nil {
		t.Fatal(err)
	}
	if got := preview(); got != "1.2" {
		t.Errorf("within the cache time: got %s%%, want the cached 1.2%%", got)
	}
	env.Clock.Advance(paylink.AuthCacheTTL + time.Second)
	if got := preview(); got != "2" {
		t.Errorf("after the cache time: got %s%%, want the new 2%%", got)
	}
}
