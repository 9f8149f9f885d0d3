package site_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/docs"
	"github.com/paylink/paylink/internal/apitest"
	"github.com/paylink/paylink/internal/buildinfo"
	"github.com/paylink/paylink/internal/processor"
)

// get sends a GET with an optional request id and returns the response
// with its body read.
func get(t *testing.T, env *apitest.Env, path, requestID string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, env.Server.URL+path, nil)
	if requestID != "" {
		req.Header.Set("X-Request-Id", requestID)
	}
	res, err := env.Server.Client().Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res, string(body)
}

// TestEveryPartSharesTheMiddleware: the API, the payment pages, the
// challenge page and the catch-all all answer through the one middleware.
func TestEveryPartSharesTheMiddleware(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	tests := []struct {
		name, path string
		status     int
		route      string
	}{
		{"api", "/healthz", 200, "GET /healthz"},
		{"payment page", "/pay/no-such-token", 404, "GET /pay/{token}"},
		{"challenge page", "/acs/challenge/no-such-capability", 404, "GET /acs/challenge/{capability}"},
		{"catch-all", "/nothing/here", 404, "/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := "site-test-" + strings.ReplaceAll(tt.name, " ", "-")
			res, _ := get(t, env, tt.path, id)
			if res.StatusCode != tt.status || res.Header.Get("X-Request-Id") != id || res.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("got %d, X-Request-Id %q, nosniff %q; want %d, %q, nosniff", res.StatusCode,
					res.Header.Get("X-Request-Id"), res.Header.Get("X-Content-Type-Options"), tt.status, id)
			}
			want := `"route":"` + tt.route + `"`
			if !logHas(env.LogText(), id, want) {
				t.Errorf("logs: got %s, want an access line with request_id %s and %s", env.LogText(), id, want)
			}
		})
	}
}

// logHas reports whether one log line has every fragment.
func logHas(logs, id string, fragments ...string) bool {
	for _, line := range strings.Split(logs, "\n") {
		ok := strings.Contains(line, `"request_id":"`+id+`"`)
		for _, f := range fragments {
			ok = ok && strings.Contains(line, f)
		}
		if ok {
			return true
		}
	}
	return false
}

func TestHealthzReportsTheVersion(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	_, body := get(t, env, "/healthz", "")
	var got map[string]string
	if err := json.Unmarshal([]byte(body), &got); err != nil || got["status"] != "ok" || got["version"] != buildinfo.Read().Version {
		t.Errorf("got %s (%v), want status ok and version %q", body, err, buildinfo.Read().Version)
	}
}

// TestOpenAPIJSONIsTheYAML: the served description is docs/openapi.yaml,
// converted, with every path and operation.
func TestOpenAPIJSONIsTheYAML(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	res, body := get(t, env, "/v5/openapi.json", "")
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("got %d %s, want 200 JSON", res.StatusCode, res.Header.Get("Content-Type"))
	}
	served, err := openapi3.NewLoader().LoadFromData([]byte(body))
	if err != nil {
		t.Fatalf("served description does not load: %v", err)
	}
	want, err := openapi3.NewLoader().LoadFromData(docs.OpenAPIYAML)
	if err != nil {
		t.Fatal(err)
	}
	gotJSON, _ := json.Marshal(served)
	wantJSON, _ := json.Marshal(want)
	if string(gotJSON) != string(wantJSON) {
		t.Errorf("served description differs from docs/openapi.yaml (%d vs %d bytes)", len(gotJSON), len(wantJSON))
	}
	if served.Paths.Find("/v5/openapi.json") == nil || len(served.Paths.Map()) < 15 {
		t.Errorf("got %d paths, want the whole surface including /v5/openapi.json", len(served.Paths.Map()))
	}
}

// TestPaymentAndWebhookMetrics: committed outcomes are counted by method
// and status, webhook attempts by outcome, and the outbox drains to zero.
func TestPaymentAndWebhookMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	env := apitest.Start(t, apitest.Options{Registry: reg})
	var hooks atomic.Int64
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hooks.Add(1) }))
	defer receiver.Close()
	m := env.Onboard(func(n *paylink.NewMerchant) {
		n.Settings.Webhook.URL, n.Settings.Webhook.Domains = receiver.URL+"/hooks", []string{"127.0.0.1"}
	})
	var first string
	for _, card := range []string{"4111111111111111", "5555555555554444", processor.CardDecline} {
		r := env.Post("/v5/purchase", m, env.CardPurchase(m, card, "12.00"))
		if r.Status != 200 {
			t.Fatalf("purchase: got %d %s", r.Status, r.Raw)
		}
		if first == "" {
			first = r.Str("purchase.purchase_reference")
		}
	}
	refund := env.Post("/v5/purchase/"+first+"/refund", m, map[string]any{
		"token":    map[string]any{"company_token": m.Creds.CompanyToken, "transaction_token": env.TransactionToken(m)},
		"customer": map[string]any{"ip_address": "203.0.113.7", "timezone": "UTC"},
		"refund":   map[string]any{"amount": "5.00", "currency": "AUD"}})
	if refund.Str("refund.status") != "APPROVED" {
		t.Fatalf("refund: got %s", refund.Raw)
	}
	env.WaitWebhooks()
	tests := []struct {
		name   string
		metric string
		labels map[string]string
		want   float64
	}{
		{"approved card payments", "paylink_payments_total", map[string]string{"method": paylink.PaymentTypeCard, "status": "APPROVED"}, 2},
		{"declined card payments", "paylink_payments_total", map[string]string{"method": paylink.PaymentTypeCard, "status": "DECLINED"}, 1},
		{"approved card refunds", "paylink_refunds_total", map[string]string{"method": paylink.PaymentTypeCard, "status": "APPROVED"}, 1},
		{"failed card refunds", "paylink_refunds_total", map[string]string{"method": paylink.PaymentTypeCard, "status": "FAILED"}, 0},
		{"delivered webhooks", "paylink_webhook_deliveries_total", map[string]string{"outcome": "delivered"}, 3},
		{"rejected webhooks", "paylink_webhook_deliveries_total", map[string]string{"outcome": "rejected"}, 0},
		{"outbox after delivery", "paylink_webhook_outbox_pending", nil, 0},
		{"nothing overdue after delivery", "paylink_webhook_outbox_overdue_seconds", nil, 0},
		{"outbox readable", "paylink_webhook_outbox_scrape_ok", nil, 1},
		{"HTTP purchases", "paylink_http_requests_total", map[string]string{"route": "POST /v5/purchase", "code": "200"}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := value(t, reg, tt.metric, tt.labels); got != tt.want {
				t.Errorf("%s%v: got %v, want %v", tt.metric, tt.labels, got, tt.want)
			}
		})
	}
	if hooks.Load() != 3 {
		t.Errorf("receiver got %d webhooks, want 3", hooks.Load())
	}
}

// TestPaymentOutcomesAreCountedByStep: each status a payment reaches is
// counted under the step it answers, so that the payments' answers
// (step authorisation) count each payment once: a hold captured or
// cancelled adds a capture or a release, not a second answer, and a
// 3-D Secure challenge is an authentication step.
func TestPaymentOutcomesAreCountedByStep(t *testing.T) {
	reg := prometheus.NewRegistry()
	env := apitest.Start(t, apitest.Options{Registry: reg})
	m := env.Onboard()
	post := func(path string, body map[string]any, want string) string {
		t.Helper()
		r := env.Post(path, m, body)
		if r.Status != http.StatusOK || r.Str("purchase.status") != want {
			t.Fatalf("%s: got %d %s, want %s", path, r.Status, r.Raw, want)
		}
		return r.Str("purchase.purchase_reference")
	}
	holdBody := func() map[string]any {
		return env.CardPurchase(m, "4111111111111111", "20.00", func(b map[string]any) {
			apitest.Set(b, "purchase.should_service_apply_pre_authorisation", true)
		})
	}
	token := func() map[string]any {
		return map[string]any{"company_token": m.Creds.CompanyToken, "transaction_token": env.TransactionToken(m)}
	}
	post("/v5/purchase", env.CardPurchase(m, "4111111111111111", "10.00"), "APPROVED")
	captured := post("/v5/purchase", holdBody(), "PRE_AUTHORISED")
	post("/v5/purchase/"+captured+"/capture", map[string]any{"token": token(),
		"capture": map[string]any{"amount": "20.00", "currency": "AUD"}}, "APPROVED")
	released := post("/v5/purchase", holdBody(), "PRE_AUTHORISED")
	if r := env.Post("/v5/purchase/"+released+"/cancel", m, map[string]any{"token": token()}); r.Status != http.StatusOK {
		t.Fatalf("cancel: got %d %s", r.Status, r.Raw)
	}
	post("/v5/purchase", env.CardPurchase(m, "4000000000003220", "10.00", func(b map[string]any) {
		apitest.Set(b, "customer.should_service_apply_authentication", true)
		apitest.Set(b, "customer.authentication_redirect_url", "https://shop.example.com/3ds/return")
	}), "REQUIRES_AUTHENTICATION")
	for _, tt := range []struct {
		step, status string
		want         float64
	}{
		{"authorisation", "APPROVED", 1},
		{"authorisation", "PRE_AUTHORISED", 2},
		{"capture", "APPROVED", 1},
		{"release", "PRE_AUTHORISED_REVERSED", 1},
		{"authentication", "REQUIRES_AUTHENTICATION", 1},
		{"authorisation", "FAILED", 0},
	} {
		labels := map[string]string{"method": paylink.PaymentTypeCard, "step": tt.step, "status": tt.status}
		if got := value(t, reg, "paylink_payments_total", labels); got != tt.want {
			t.Errorf("paylink_payments_total%v: got %v, want %v", labels, got, tt.want)
		}
	}
}

// value gathers reg and returns the sample of name whose labels include
// labels (counters and gauges); it fails the test when there is none.
func value(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			match := true
			for k, v := range labels {
				match = match && have[k] == v
			}
			if !match {
				continue
			}
			if m.GetCounter() != nil {
				return m.GetCounter().GetValue()
			}
			return m.GetGauge().GetValue()
		}
	}
	t.Fatalf("no sample %s%v", name, labels)
	return 0
}

// TestUnroutedRequests: a trailing slash too many is served as the route
// without it (a customer's /pay/{token}/ gets the page, not API JSON); a
// path served under other methods is 405 naming them in Allow; anything
// else is the JSON 404.
func TestUnroutedRequests(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	link := env.Post("/v5/payment-links", m, map[string]any{"amount": "5.00", "currency": "AUD", "merchantReference": "SLASH-1"})
	page := strings.TrimPrefix(link.Str("url"), env.Server.URL)
	if res, body := get(t, env, page+"/", ""); res.StatusCode != 200 || !strings.Contains(res.Header.Get("Content-Type"), "text/html") {
		t.Errorf("GET %s/: got %d %q, want the page:\n%.300s", page, res.StatusCode, res.Header.Get("Content-Type"), body)
	}
	if tok := env.Post("/v5/transaction_token/", m, map[string]any{"company_token": m.Creds.CompanyToken}); tok.Status != 200 {
		t.Errorf("POST /v5/transaction_token/: got %d %s, want a token", tok.Status, tok.Raw)
	}
	if !strings.Contains(env.LogText(), `"route":"POST /v5/transaction_token"`) {
		t.Errorf("the access log names no route POST /v5/transaction_token for the request served through the slash (it said /):\n%s", env.LogText())
	}
	for _, c := range []struct{ method, path, allow string }{
		{http.MethodPost, "/v5/balance", "GET, HEAD"},
		{http.MethodGet, "/v5/transaction_token", "POST"},
		{http.MethodDelete, "/v5/purchase/pr_1", "GET, HEAD, POST"},
		// A trailing slash too many changes nothing: it was 404, as
		// fallback asked which methods the slashed path has.
		{http.MethodPost, "/v5/balance/", "GET, HEAD"},
		{http.MethodDelete, "/v5/transaction_token/", "POST"},
		{http.MethodPost, "/v5/reports/settlement/", "GET, HEAD"},
	} {
		var allow string
		res := env.DoWith(c.method, c.path, m, nil, func(r *http.Response) { allow = r.Header.Get("Allow") })
		if res.Status != http.StatusMethodNotAllowed || allow != c.allow || res.Get("response_code") != paylink.CodeMethodNotAllowed {
			t.Errorf("%s %s: got %d, Allow %q, %s; want 405, Allow %q", c.method, c.path, res.Status, allow, res.Raw, c.allow)
		}
	}
	if res := env.Do(http.MethodGet, "/v5/no_such_endpoint/", m, nil); res.Status != http.StatusNotFound {
		t.Errorf("an unknown path: got %d %s, want 404", res.Status, res.Raw)
	}
	for _, method := range []string{http.MethodPut, http.MethodDelete} {
		for _, path := range []string{page, page + "/"} {
			req, err := http.NewRequest(method, env.Server.URL+path, nil)
			if err != nil {
				t.Fatal(err)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusMethodNotAllowed || res.Header.Get("Allow") != "GET, HEAD, POST" ||
				!strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") || res.Header.Get("Content-Security-Policy") == "" {
				t.Errorf("%s %s: got %d, Allow %q, %q; want the pages' HTML 405",
					method, path, res.StatusCode, res.Header.Get("Allow"), res.Header.Get("Content-Type"))
			}
		}
	}
}

// TestCustomerAddressesThatAreNoPage: an address under the customers'
// paths that no page serves (a truncated link) answers the pages' own
// HTML 404 with their security headers; other unknown paths keep the
// API's JSON 404.
func TestCustomerAddressesThatAreNoPage(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	tests := []struct {
		path, contentType string
	}{
		{"/pay", "text/html"}, {"/pay/", "text/html"}, {"/vt", "text/html"}, {"/pay/a/b/c", "text/html"},
		{"/checkout/return/", "text/html"}, {"/acs/challenge/", "text/html"},
		{"/payments", "application/json"}, {"/v5/nothing", "application/json"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			res, body := get(t, env, tt.path, "")
			if res.StatusCode != http.StatusNotFound || !strings.HasPrefix(res.Header.Get("Content-Type"), tt.contentType) {
				t.Fatalf("got %d %q, want 404 %s", res.StatusCode, res.Header.Get("Content-Type"), tt.contentType)
			}
			if tt.contentType == "text/html" && (!strings.Contains(body, "no payment page at this address") ||
				!strings.Contains(res.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'")) {
				t.Errorf("got %s with policy %q, want the pages' 404 page and policy", body, res.Header.Get("Content-Security-Policy"))
			}
		})
	}
}

// TestDoubledSlashesInAnAPIPath: a base URL ending in "/" joined to
// "/v5/..." (//v5/transaction_token) is served as the route itself, where
// the mux answered 307 with an empty body that PHP's curl and Java do not
// follow on a POST; the access log names the route. A path with "." or
// ".." segments under /v5, or an empty segment past /v5/ (a reference
// left out: /v5/purchase//refund was served as the status look-up of a
// payment whose invoice number was "refund", 200 "success" to a refund),
// is a JSON 400, never a redirect, and a reference's own escaped
// "%2F%2F" is no doubled slash.
func TestDoubledSlashesInAnAPIPath(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	body := `{"company_token":"` + m.Creds.CompanyToken + `"}`
	res, raw := env.Raw(env.RawRequest(http.MethodPost, "//v5/transaction_token", m, body, "Content-Type", "application/json"))
	if res.StatusCode != http.StatusOK || !strings.Contains(raw, `"transaction_token":"`) {
		t.Errorf("POST //v5/transaction_token: got %d %q %s, want a token", res.StatusCode, res.Header.Get("Location"), raw)
	}
	if !strings.Contains(env.LogText(), `"route":"POST /v5/transaction_token"`) {
		t.Errorf("the access log names no route POST /v5/transaction_token:\n%s", env.LogText())
	}
	res, raw = env.Raw(env.RawRequest(http.MethodGet, "/v5//balance?x=1", m, ""))
	if res.StatusCode != http.StatusOK || !strings.Contains(raw, `"balances"`) {
		t.Errorf("GET /v5//balance: got %d %s, want the balances", res.StatusCode, raw)
	}
	for _, c := range []struct {
		target string
		status int
		code   string
	}{
		{"/v5/./transaction_token", http.StatusBadRequest, paylink.CodeInvalidRequest},
		{"/v5/purchase//refund", http.StatusBadRequest, paylink.CodeInvalidRequest},
		{"//v5//purchase//capture", http.StatusBadRequest, paylink.CodeInvalidRequest},
		{"/v5/payment-links//cancel", http.StatusBadRequest, paylink.CodeInvalidRequest},
		{"//v5/purchase/a/../b", http.StatusBadRequest, paylink.CodeInvalidRequest},
		{"/v5/purchase/a%2F%2Fb", http.StatusNotFound, paylink.CodeNotFound},
		{"//v5/no_such_endpoint", http.StatusNotFound, paylink.CodeNotFound},
	} {
		res, raw := env.Raw(env.RawRequest(http.MethodPost, c.target, m, body, "Content-Type", "application/json"))
		if res.StatusCode != c.status || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") ||
			!strings.Contains(raw, `"response_code":"`+c.code+`"`) {
			t.Errorf("POST %s: got %d %q %s, want %d %s in JSON", c.target, res.StatusCode, res.Header.Get("Content-Type"), raw, c.status, c.code)
		}
	}
}

// TestRouteLabelsOutsideRoutes pins the route values operations.md lists
// for requests no route served (the access log's and the metrics'
// label): "/" for a 404 or 405 of the catch-all, "unmatched" for the 400
// of a /v5 path with a dot segment, "redirect" for the mux's redirects.
func TestRouteLabelsOutsideRoutes(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	noRedirects := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, c := range []struct {
		method, path string
		status       int
		route        string
	}{
		{http.MethodGet, "/no-such-page", 404, "/"},
		{http.MethodDelete, "/healthz", 405, "/"},
		{http.MethodPost, "/v5/purchase/a/../b", 400, "unmatched"},
		{http.MethodGet, "/dashboard/./x", 307, "redirect"},
	} {
		id := "route-label-" + strconv.Itoa(c.status)
		req, _ := http.NewRequest(c.method, env.Server.URL+c.path, nil)
		req.Header.Set("X-Request-Id", id)
		res, err := noRedirects.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		var seen bool
		for _, line := range strings.Split(env.LogText(), "\n") {
			var e struct {
				Msg, Route string
				Status     int
				RequestID  string `json:"request_id"`
			}
			if json.Unmarshal([]byte(line), &e) == nil && e.Msg == "request" && e.RequestID == id {
				seen = true
				if e.Route != c.route || e.Status != c.status {
					t.Errorf("%s %s: got route %q status %d, want %q %d", c.method, c.path, e.Route, e.Status, c.route, c.status)
				}
			}
		}
		if !seen {
			t.Errorf("%s %s: no access line with its request id (answered %d)", c.method, c.path, res.StatusCode)
		}
	}
}

// TestAccessLinesNameWhatTheRequestWasAbout: the access line of an API
// call names its merchant, the payment it made and, when refused, the
// code it was refused with, so that the request id a merchant quotes
// leads to the payment and its webhooks (the secrets sweep found only
// the route and status there).
func TestAccessLinesNameWhatTheRequestWasAbout(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	key := "" // an Idempotency-Key to send, when set
	accessLine := func(method, path string, body any) (map[string]any, apitest.Response) {
		t.Helper()
		raw, _ := json.Marshal(body)
		req, _ := http.NewRequest(method, env.Server.URL+path, bytes.NewReader(raw))
		req.Header.Set("Authorization", "Bearer "+m.Creds.APIKey)
		if key != "" {
			req.Header.Set("Idempotency-Key", key)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		answer, _ := io.ReadAll(res.Body)
		r := apitest.Response{Status: res.StatusCode, Raw: string(answer)}
		json.Unmarshal(answer, &r.Body)
		id := res.Header.Get("X-Request-Id")
		for _, line := range strings.Split(env.LogText(), "\n") {
			var e map[string]any
			if json.Unmarshal([]byte(line), &e) == nil && e["msg"] == "request" && e["request_id"] == id {
				return e, r
			}
		}
		t.Fatalf("%s %s: no access line with its request id %q", method, path, id)
		return nil, r
	}
	line, r := accessLine(http.MethodPost, "/v5/purchase", env.CardPurchase(m, "4111111111111111", "10.00"))
	if ref := r.Str("purchase.purchase_reference"); line["merchant"] != m.Merchant.ID || line["reference"] != ref || line["error_code"] != nil {
		t.Errorf("a purchase's access line: got %v, want merchant %s and reference %s", line, m.Merchant.ID, ref)
	}
	line, _ = accessLine(http.MethodPost, "/v5/purchase/pr_nosuchpurchase", map[string]any{"company_token": m.Creds.CompanyToken})
	if line["merchant"] != m.Merchant.ID || line["error_code"] != paylink.CodeNotFound || line["reference"] != nil {
		t.Errorf("a refused look-up's access line: got %v, want merchant %s and error_code %s", line, m.Merchant.ID, paylink.CodeNotFound)
	}
	line, _ = accessLine(http.MethodPost, "/v5/purchase", map[string]any{})
	if line["error_code"] != paylink.CodeInvalidRequest {
		t.Errorf("a refused purchase's access line: got %v, want error_code %s", line, paylink.CodeInvalidRequest)
	}
	// A replay names the payment of the answer it replays, and says it is
	// one (a verification sweep found it naming none).
	key = "order-replayed"
	body := env.CardPurchase(m, "4111111111111111", "11.00")
	_, first := accessLine(http.MethodPost, "/v5/purchase", body)
	line, _ = accessLine(http.MethodPost, "/v5/purchase", body)
	if ref := first.Str("purchase.purchase_reference"); line["reference"] != ref || line["replayed"] != "true" {
		t.Errorf("a replay's access line: got %v, want reference %s and replayed", line, ref)
	}
}
