package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
)

func whitelisted(n *paylink.NewMerchant) {
	n.Settings.Webhook.Domains = []string{"hooks.example.com"}
}

func TestCreatePaymentLink(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard(whitelisted)
	r := env.Post("/v5/payment-links", m, map[string]any{
		"amount": "10.50", "currency": "aud", "merchantReference": "ORDER-1",
		"customer": map[string]any{"first_name": "Jo", "last_name": "Citizen", "email": "jo@example.com",
			"customer_reference": "CUST-7", "country_code": "AU"},
		"webhook_url": "https://hooks.example.com/paylink",
	})
	if r.Status != http.StatusOK {
		t.Fatalf("create: got %d %s, want 200", r.Status, r.Raw)
	}
	want := map[string]string{"status": "unpaid", "amount": "10.5", "currency": "AUD", "merchantReference": "ORDER-1",
		"response_code": "success", "webhook_url": "https://hooks.example.com/paylink"}
	for k, v := range want {
		if got := r.Str(k); got != v {
			t.Errorf("%s: got %q, want %q", k, got, v)
		}
	}
	page, vt := r.Str("url"), r.Str("virtual_terminal_url")
	pageTok, vtTok := strings.TrimPrefix(page, env.Server.URL+"/pay/"), strings.TrimPrefix(vt, env.Server.URL+"/vt/")
	if len(pageTok) < 22 || len(vtTok) < 22 || pageTok == vtTok || pageTok == page || vtTok == vt {
		t.Errorf("urls: got %q and %q, want distinct /pay/ and /vt/ URLs with >= 128-bit tokens", page, vt)
	}
	id := r.Str("id")
	got := env.Post("/v5/payment-links/"+id, m, nil)
	if got.Status != http.StatusOK || got.Str("url") != page || got.Str("attempts") != "0" {
		t.Errorf("look up: got %d %s, want 200 with the same url and 0 attempts", got.Status, got.Raw)
	}
	other := env.Onboard()
	if got := env.Post("/v5/payment-links/"+id, other, nil); got.Status != http.StatusNotFound {
		t.Errorf("other merchant's link: got %d, want 404", got.Status)
	}
}

func TestCreatePaymentLinkBadInput(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard(whitelisted)
	other := env.Onboard()
	valid := func() map[string]any {
		return map[string]any{"amount": "10.50", "currency": "AUD", "merchantReference": "ORDER-1"}
	}
	soon := env.Clock.Now().Add(48 * time.Hour).UTC().Format("2006-01-02T15:04:05") // an offset to add
	tests := []struct {
		name   string
		mutate func(map[string]any)
		as     *apitest.Merchant
		status int
		code   string
		field  string
	}{
		{"missing amount", func(b map[string]any) { delete(b, "amount") }, m, 400, "invalid_request", "amount"},
		{"zero amount", func(b map[string]any) { b["amount"] = "0" }, m, 400, "invalid_request", "amount"},
		{"three decimals", func(b map[string]any) { b["amount"] = "1.005" }, m, 400, "invalid_request", "amount"},
		{"amount not a number", func(b map[string]any) { b["amount"] = true }, m, 400, "invalid_request", "amount"},
		{"unknown currency", func(b map[string]any) { b["currency"] = "XXX" }, m, 400, "invalid_request", "currency"},
		{"missing reference", func(b map[string]any) { delete(b, "merchantReference") }, m, 400, "invalid_request", "merchantReference"},
		{"reference too long", func(b map[string]any) { b["merchantReference"] = strings.Repeat("x", 129) }, m, 400, "invalid_request", "merchantReference"},
		// The reference is the payment's invoice number, which a status look-up puts in the path.
		{"reference ..", func(b map[string]any) { b["merchantReference"] = ".." }, m, 400, "invalid_request", "merchantReference"},
		{"reference .", func(b map[string]any) { b["merchantReference"] = " . " }, m, 400, "invalid_request", "merchantReference"},
		{"bad email", func(b map[string]any) { b["customer"] = map[string]any{"email": "nope"} }, m, 400, "invalid_request", "customer.email"},
		{"bad country", func(b map[string]any) { b["customer"] = map[string]any{"country_code": "au"} }, m, 400, "invalid_request", "customer.country_code"},
		{"unassigned country", func(b map[string]any) { b["customer"] = map[string]any{"country_code": "UK"} }, m, 400, "invalid_request", "customer.country_code"},
		{"customer field not a string", func(b map[string]any) { b["customer"] = map[string]any{"first_name": []int{1}} }, m, 400, "invalid_request", "customer.first_name"},
		{"customer not an object", func(b map[string]any) { b["customer"] = "bob" }, m, 400, "invalid_request", "customer"},
		{"webhook not whitelisted", func(b map[string]any) { b["webhook_url"] = "https://evil.example.net/x" }, m, 400, "webhook_url_not_whitelisted", "webhook_url"},
		{"webhook subdomain not whitelisted", func(b map[string]any) { b["webhook_url"] = "https://a.hooks.example.com/x" }, m, 400, "webhook_url_not_whitelisted", "webhook_url"},
		{"webhook without whitelist", func(b map[string]any) { b["webhook_url"] = "https://hooks.example.com/x" }, other, 400, "webhook_url_not_whitelisted", "webhook_url"},
		{"webhook not a URL", func(b map[string]any) { b["webhook_url"] = "hooks.example.com/x" }, m, 400, "invalid_request", "webhook_url"},
		{"webhook ftp", func(b map[string]any) { b["webhook_url"] = "ftp://hooks.example.com/x" }, m, 400, "invalid_request", "webhook_url"},
		{"expiry in the past", func(b map[string]any) { b["expires_at"] = "2001-01-01T00:00:00Z" }, m, 400, "invalid_request", "expires_at"},
		{"expiry not a time", func(b map[string]any) { b["expires_at"] = "tomorrow" }, m, 400, "invalid_request", "expires_at"},
		// The year 1 is Go's zero time, which once read as "never expires".
		{"expiry in the year 1", func(b map[string]any) { b["expires_at"] = "0001-01-01T00:00:00Z" }, m, 400, "invalid_request", "expires_at"},
		{"expiry with an offset of 60 minutes", func(b map[string]any) { b["expires_at"] = soon + "+00:60" }, m, 400, "invalid_request", "expires_at"},
		{"expiry with an offset of 24 hours", func(b map[string]any) { b["expires_at"] = soon + "+24:00" }, m, 400, "invalid_request", "expires_at"},
		{"company token of another merchant", func(b map[string]any) { b["company_token"] = other.Creds.CompanyToken }, m, 403, "company_token_mismatch", ""},
		{"no API key", func(map[string]any) {}, nil, 401, "unauthorized", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := valid()
			tt.mutate(b)
			r := env.Post("/v5/payment-links", tt.as, b)
			if r.Status != tt.status || r.Str("response_code") != tt.code {
				t.Fatalf("got %d %s, want %d %s", r.Status, r.Raw, tt.status, tt.code)
			}
			fields, _ := r.Get("fields").(map[string]any)
			if tt.field != "" && fields[tt.field] == nil {
				t.Errorf("got fields %v, want a problem for %s", r.Get("fields"), tt.field)
			}
			if r.Get("url") != nil {
				t.Errorf("error body has url: %s", r.Raw)
			}
		})
	}
	if r := env.Post("/v5/payment-links", m, "{not json"); r.Status != 400 || r.Str("response_code") != "malformed_json" {
		t.Errorf("malformed JSON: got %d %s, want 400 malformed_json", r.Status, r.Raw)
	}
}

func TestCancelAndExpirePaymentLink(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	expires := env.Clock.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	r := env.Post("/v5/payment-links", m, map[string]any{"amount": json.Number("5"), "currency": "AUD",
		"merchant_reference": "R-2", "expires_at": expires})
	if r.Status != 200 || r.Str("expires_at") != expires {
		t.Fatalf("create: got %d %s, want 200 expiring %s", r.Status, r.Raw, expires)
	}
	id := r.Str("id")
	env.Clock.Advance(2 * time.Hour)
	if got := env.Post("/v5/payment-links/"+id, m, nil); got.Str("status") != "expired" {
		t.Errorf("after expiry: got status %q, want expired", got.Str("status"))
	}
	r = env.Post("/v5/payment-links", m, map[string]any{"amount": "5", "currency": "AUD", "merchantReference": "R-3"})
	id = r.Str("id")
	// The company token is optional on the link calls, and checked when sent.
	wrong := map[string]any{"company_token": "not-the-company-token"}
	for _, path := range []string{"/v5/payment-links/" + id, "/v5/payment-links/" + id + "/cancel"} {
		if got := env.Post(path, m, wrong); got.Status != http.StatusForbidden || got.Str("error_code") != paylink.CodeCompanyTokenMismatch {
			t.Errorf("POST %s with a wrong company token: got %d %s, want 403 %s", path, got.Status, got.Raw, paylink.CodeCompanyTokenMismatch)
		}
	}
	if got := env.Post("/v5/payment-links/"+id, m, map[string]any{"token": map[string]any{"company_token": m.Creds.CompanyToken}}); got.Status != 200 ||
		got.Str("status") != "unpaid" {
		t.Errorf("look-up with the right company token: got %d %s, want 200 unpaid (the refused cancel changed nothing)", got.Status, got.Raw)
	}
	for i := range 2 {
		got := env.Post("/v5/payment-links/"+id+"/cancel", m, nil)
		if got.Status != 200 || got.Str("status") != "cancelled" {
			t.Errorf("cancel %d: got %d %s, want 200 cancelled", i, got.Status, got.Raw)
		}
	}
	if got := env.Post("/v5/payment-links/nope/cancel", m, nil); got.Status != 404 {
		t.Errorf("cancel unknown: got %d %s, want 404", got.Status, got.Raw)
	}
}

// TestConcurrentCancelsAllSucceed: cancelling is idempotent, also when
// the cancels arrive at once. On PostgreSQL the cancels that lose the
// link's compare-and-set read it again and find it cancelled (200), not
// "a payment is in progress" (there is none).
func TestConcurrentCancelsAllSucceed(t *testing.T) {
	eachEngine(t, func(t *testing.T, dsn string) {
		env := apitest.Start(t, apitest.Options{DSN: dsn})
		m := env.Onboard()
		for round := range 5 {
			id := env.Post("/v5/payment-links", m, map[string]any{"amount": "5", "currency": "AUD", "merchantReference": "C-1"}).Str("id")
			const n = 8
			got := make(chan apitest.Response, n)
			for range n {
				go func() { got <- env.Post("/v5/payment-links/"+id+"/cancel", m, nil) }()
			}
			for range n {
				if r := <-got; r.Status != 200 || r.Str("status") != "cancelled" {
					t.Errorf("round %d: a cancel got %d %s, want 200 cancelled", round, r.Status, r.Raw)
				}
			}
		}
	})
}
