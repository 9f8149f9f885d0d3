package paylink_test

import (
	"context"
	"path"
	"testing"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
)

// TestLinkPageMerchantIsCachedBriefly: a hosted page reads its merchant
// through the cache of recent merchants. A change made on the same
// instance shows at once; one made by another instance on the same
// database shows within AuthCacheTTL, as for an API request.
func TestLinkPageMerchantIsCachedBriefly(t *testing.T) {
	test := func(t *testing.T, a *apitest.Env, dsn string) {
		ctx := context.Background()
		b := apitest.Start(t, apitest.Options{DSN: dsn, Clock: a.Clock})
		m := a.Onboard()
		_, urls, err := a.Service.CreateLink(ctx, m.Merchant, paylink.NewLink{Amount: 2500, Currency: "AUD", MerchantReference: "INV-1"})
		if err != nil {
			t.Fatal(err)
		}
		token := path.Base(urls.Page)
		hook := func(env *apitest.Env) string {
			t.Helper()
			ls, err := env.Service.OpenLink(ctx, token)
			if err != nil {
				t.Fatal(err)
			}
			return ls.Merchant.Settings.Webhook.URL
		}
		if hook(a) != "" || hook(b) != "" {
			t.Fatal("a new merchant has a webhook URL")
		}
		url := "https://hooks.example.com/new"
		if _, err := a.Service.UpdateSettings(ctx, m.ID, paylink.SettingsChange{WebhookURL: &url}); err != nil {
			t.Fatal(err)
		}
		if got := hook(a); got != url {
			t.Errorf("on the instance that changed it: got %q, want %q at once", got, url)
		}
		if got := hook(b); got != "" {
			t.Errorf("on another instance within AuthCacheTTL: got %q, want the cached merchant's %q", got, "")
		}
		a.Clock.Advance(paylink.AuthCacheTTL + time.Second)
		if got := hook(b); got != url {
			t.Errorf("on another instance after AuthCacheTTL: got %q, want %q", got, url)
		}
	}
	onEnginesShared(t, test)
}
