package webhook_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
)

// TestWhitelistOneRule feeds one table to the three places that apply the
// webhook whitelist and requires the same answer from each:
//   - onboarding (Service.CreateMerchant) accepts or refuses the entry;
//   - link creation (Service.CreateLink) accepts or refuses a dynamic
//     webhook_url under the stored whitelist;
//   - the dispatcher, delivering a real webhook to that address, refuses
//     it before connecting or goes ahead.
//
// Before the rule lived in one place, a trailing-dot entry passed link
// creation and was refused by the dispatcher. The dispatcher's row is run
// on settings written straight to the store (as data from before the rule
// would be), so that it also sees addresses link creation refuses.
func TestWhitelistOneRule(t *testing.T) {
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			opts := apitest.Options{}
			if engine == "postgres" {
				opts.DSN = pg.Database(t)
			}
			testWhitelistOneRule(t, apitest.Start(t, opts))
		})
	}
}

func testWhitelistOneRule(t *testing.T, env *apitest.Env) {
	rc := newReceiver(t, 200)
	port := rc.URL[strings.LastIndex(rc.URL, ":")+1:]
	at := func(host string) string { return "http://" + host + ":" + port + "/hook" }
	tests := []struct {
		name, entry, url string
		wantEntryOK      bool // onboarding accepts the entry
		wantAllowed      bool // link creation and dispatcher accept the URL
	}{
		{"trailing dot on the entry", "localhost.", at("localhost"), true, true},
		{"trailing dot on the URL", "localhost", at("localhost."), true, true},
		{"case and spaces", " LocalHost ", at("LOCALHOST"), true, true},
		{"IPv4 literal", "127.0.0.1", rc.URL + "/hook", true, true},
		{"IPv4 literal with a trailing dot", "127.0.0.1.", rc.URL + "/hook", true, true},
		{"URL of an IPv4 literal with a trailing dot", "127.0.0.1", at("127.0.0.1."), true, false}, // a dialer looks it up as a name
		{"IPv6 literal in brackets", "[::1]", at("[::1]"), true, true},
		{"IPv6 literal in long form", "0:0:0:0:0:0:0:1", at("[::1]"), true, true},
		{"IPv4-mapped IPv6 URL", "127.0.0.1", at("[::ffff:127.0.0.1]"), true, true},
		{"subdomain of an entry", "localhost", at("a.localhost"), true, false},
		{"parent of an entry", "a.localhost", at("localhost"), true, false},
		{"name is not its address", "localhost", rc.URL + "/hook", true, false},
		{"address is not its name", "127.0.0.1", at("localhost"), true, false},
		{"entry as a suffix", "localhost", at("localhost.evil.net"), true, false},
		{"entry as a prefix", "localhost", at("localhost1"), true, false},
		{"other host", "hooks.example.com", rc.URL + "/hook", true, false},
		{"URL with credentials", "127.0.0.1", "http://u:p@127.0.0.1:" + port + "/hook", true, false},
		{"URL not http", "127.0.0.1", "ftp://127.0.0.1:" + port + "/hook", true, false},
		{"URL relative", "127.0.0.1", "/hook", true, false},
		{"entry with a scheme", "http://localhost", at("localhost"), false, false},
		{"entry with a port", "localhost:" + port, at("localhost"), false, false},
		{"entry with a user", "u@localhost", at("localhost"), false, false},
		{"entry with a path", "localhost/hook", at("localhost"), false, false},
		{"entry with a space", "local host", at("localhost"), false, false},
		{"entry with an IPv6 zone", "fe80::1%eth0", at("[fe80::1%25eth0]"), false, false},
		{"empty entry", " ", at("localhost"), false, false},
		{"root only", ".", at("localhost"), false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := onboardWhitelist(t, env, tt.entry, tt.wantEntryOK)
			gotLink := linkAccepts(t, env, m, tt.url)
			if gotLink != tt.wantAllowed {
				t.Errorf("link creation: got allowed=%v, want %v", gotLink, tt.wantAllowed)
			}
			gotDispatch := dispatcherAccepts(t, env, m, tt.url)
			if gotDispatch != tt.wantAllowed {
				t.Errorf("dispatcher: got allowed=%v, want %v", gotDispatch, tt.wantAllowed)
			}
		})
	}
}

// onboardWhitelist onboards a merchant whitelisting entry and checks
// onboarding's answer. An entry onboarding refuses is then stored raw,
// as data from before the rule, so that the other two paths see it.
func onboardWhitelist(t *testing.T, env *apitest.Env, entry string, wantOK bool) *apitest.Merchant {
	t.Helper()
	n := paylink.NewMerchant{Name: "Acme Pty Ltd", TradingName: "Acme", Country: "AU",
		Settings: paylink.MerchantSettings{Surcharge: paylink.DefaultSurchargeRates(),
			Webhook: paylink.WebhookConfig{Domains: []string{entry}}}}
	m, creds, err := env.Service.CreateMerchant(context.Background(), n)
	if gotOK := err == nil; gotOK != wantOK {
		t.Fatalf("onboarding: got error %v, want accepted=%v", err, wantOK)
	}
	if err == nil {
		return &apitest.Merchant{Merchant: m, Creds: creds}
	}
	var perr *paylink.Error
	if !errors.As(err, &perr) || perr.Kind != paylink.KindInvalid || perr.Fields["webhook.domains"] == "" {
		t.Fatalf("onboarding: got %v, want an invalid_request about webhook.domains", err)
	}
	am := env.Onboard()
	am.Settings.Webhook.Domains = []string{entry}
	storeSettings(t, env, am.ID, am.Settings)
	return am
}

// linkAccepts creates a link with a dynamic webhook at url.
func linkAccepts(t *testing.T, env *apitest.Env, m *apitest.Merchant, url string) bool {
	t.Helper()
	_, _, err := env.Service.CreateLink(context.Background(), m.Merchant,
		paylink.NewLink{Amount: 1000, Currency: "AUD", MerchantReference: "ORDER-1", WebhookURL: url})
	var perr *paylink.Error
	if err != nil && (!errors.As(err, &perr) || perr.Kind != paylink.KindInvalid || perr.Fields["webhook_url"] == "") {
		t.Fatalf("create link: got %v, want success or an invalid webhook_url", err)
	}
	return err == nil
}

// dispatcherAccepts makes url the company webhook, pays, and reports
// whether the dispatcher went ahead with the delivery (delivered, or a
// connection-time failure) rather than refusing the address before
// connecting.
func dispatcherAccepts(t *testing.T, env *apitest.Env, m *apitest.Merchant, url string) bool {
	t.Helper()
	s := m.Settings
	s.Webhook.URL = url
	storeSettings(t, env, m.ID, s)
	purchase(t, env, m, "4111111111111111", "10.00")
	env.WaitWebhooks()
	ds := deliveries(t, env, m)
	if len(ds) != 1 {
		t.Fatalf("got %d deliveries, want 1", len(ds))
	}
	d := ds[0]
	if d.State == paylink.DeliveryDelivered {
		return true
	}
	refused := strings.Contains(d.LastError, "whitelist") || strings.Contains(d.LastError, "absolute http")
	if d.State != paylink.DeliveryFailed || d.LastError == "" {
		t.Fatalf("delivery: got state %s error %q, want delivered or failed", d.State, d.LastError)
	}
	return !refused
}

// storeSettings writes a merchant's settings straight to the store,
// bypassing onboarding's rules, as data written before them would be.
func storeSettings(t *testing.T, env *apitest.Env, id string, s paylink.MerchantSettings) {
	t.Helper()
	err := env.Store.Update(context.Background(), func(tx paylink.Tx) error { return tx.UpdateMerchantSettings(id, s) })
	if err != nil {
		t.Fatal(err)
	}
}
