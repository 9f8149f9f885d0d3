package api_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
)

// TestQueryParameters: a read's query parameters are read as body keys
// are: trimmed, an empty one absent, camelCase or upper case read as the
// snake_case name, a parameter sent twice with one value read once and
// with two values refused (a proxy reading the first would see another
// page), as two spellings with two values are.
func TestQueryParameters(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	for _, amount := range []string{"1.00", "2.00", "3.00"} {
		if r := env.Post("/v5/purchase", m, env.CardPurchase(m, "4111111111111111", amount)); r.Status != http.StatusOK {
			t.Fatalf("setup: got %d %s", r.Status, r.Raw)
		}
	}
	all := env.Do(http.MethodGet, "/v5/balance_transactions", m, nil)
	data, _ := all.Get("data").([]any)
	if len(data) < 3 {
		t.Fatalf("setup: got %s, want 3 balance transactions", all.Raw)
	}
	first := data[0].(map[string]any)["id"].(string)
	tests := []struct {
		query  string
		status int
		rows   int    // of a 200
		says   string // of a 400
	}{
		{"limit=1", 200, 1, ""},
		{"limit=%201%20", 200, 1, ""},
		{"Limit=1", 200, 1, ""},
		{"LIMIT=1", 200, 1, ""},
		{"limit=1&limit=1", 200, 1, ""},
		{"limit=1&limit=", 200, 1, ""},
		{"limit=", 200, len(data), ""},
		{"limit=1&starting_after=" + url.QueryEscape(" "+first+" "), 200, 1, ""},
		{"startingAfter=" + first, 200, len(data) - 1, ""},
		{"limit=5&limit=500", 400, 0, "query parameter limit is sent twice with different values"},
		{"limit=1&Limit=2", 400, 0, "query parameter limit is sent twice with different values"},
		{"starting-after=" + first, 200, len(data) - 1, ""}, // read, not silently the first page
		{"limit=1&starting-after=bt_none&startingAfter=bt_other", 400, 0, "query parameter starting_after is sent twice"},
		{"limit=1;2", 400, 0, "the query string does not parse"},
		// A parameter read that does not parse is refused wherever it
		// stands in its piece, escaped or not (second verification sweep).
		{"_=1;limit=1", 400, 0, "the query string does not parse"},
		{"x=%zz;limit=1", 400, 0, "the query string does not parse"},
		{"li%6dit=1;2", 400, 0, "the query string does not parse"},
		{"x=1;starting_after=bt_none", 400, 0, "the query string does not parse"},
		// Parameters not read are ignored, whatever they hold.
		{"limit=1&_=1;2&a[]=3&_=4", 200, 1, ""},
		{"limit=0", 400, 0, `"fields":{"limit":"must be a whole number`},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			r := env.Do(http.MethodGet, "/v5/balance_transactions?"+tt.query, m, nil)
			rows, _ := r.Get("data").([]any)
			if r.Status != tt.status || tt.status == 200 && len(rows) != tt.rows ||
				tt.status != 200 && (r.Get("response_code") != paylink.CodeInvalidRequest || !strings.Contains(r.Raw, tt.says)) {
				t.Errorf("got %d %.300s, want %d with %d rows or saying %q", r.Status, r.Raw, tt.status, tt.rows, tt.says)
			}
		})
	}
	day := env.Clock.Now().UTC().Format("2006-01-02")
	for _, q := range []string{"date=" + day, "Date=%20" + day, "date=" + day + "&date=" + day} {
		if r := env.Do(http.MethodGet, "/v5/reports/settlement?"+q, m, nil); r.Status != http.StatusOK {
			t.Errorf("settlement report ?%s: got %d %s, want the report", q, r.Status, r.Raw)
		}
	}
	if r := env.Do(http.MethodGet, "/v5/reports/settlement?date="+day+"&date=2020-01-01", m, nil); r.Status != http.StatusBadRequest {
		t.Errorf("settlement report for two dates: got %d %s, want 400", r.Status, r.Raw)
	}
}

// TestACredentialSentOnAReadIsChecked: a read takes the API key alone,
// but a company token it sends anyway, in its query (under any name a
// body's is read by) or its body, is checked as a POST's is: a wrong
// one, or another merchant's, is 403, not ignored.
func TestACredentialSentOnAReadIsChecked(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m, other := env.Onboard(), env.Onboard()
	ref := env.Post("/v5/purchase", m, env.CardPurchase(m, "4111111111111111", "10.00")).Str("purchase.purchase_reference")
	refund := env.Post("/v5/purchase/"+ref+"/refund", m, map[string]any{
		"token":    map[string]any{"company_token": m.Creds.CompanyToken, "transaction_token": env.TransactionToken(m)},
		"customer": map[string]any{"ip_address": "203.0.113.9", "timezone": "UTC"},
		"refund":   map[string]any{"amount": "1.00", "currency": "AUD"},
	}).Str("refund.refund_reference")
	link := env.Post("/v5/payment-links", m, map[string]any{"amount": "5.00", "currency": "AUD", "merchantReference": "READ-1"}).Str("id")
	if ref == "" || refund == "" || link == "" {
		t.Fatal("setup failed")
	}
	right, wrong := url.QueryEscape(m.Creds.CompanyToken), url.QueryEscape(other.Creds.CompanyToken)
	for _, path := range []string{"/v5/purchase/" + ref, "/v5/refund/" + refund, "/v5/payment-links/" + link, "/v5/balance", "/v5/payouts"} {
		for _, tt := range []struct {
			query  string
			body   any
			status int
			code   string
		}{
			{"", nil, 200, "success"},
			{"company_token=" + right, nil, 200, "success"},
			{"company_token=", nil, 200, "success"},
			{"company_token=" + wrong, nil, 403, paylink.CodeCompanyTokenMismatch},
			{"company_token=WRONG", nil, 403, paylink.CodeCompanyTokenMismatch},
			{"companyToken=" + wrong, nil, 403, paylink.CodeCompanyTokenMismatch},
			{"token[company_token]=" + wrong, nil, 403, paylink.CodeCompanyTokenMismatch},
			{"company_token=" + right + "&company_token=" + wrong, nil, 400, paylink.CodeInvalidRequest},
			{"", map[string]any{"company_token": "WRONG"}, 403, paylink.CodeCompanyTokenMismatch},
			// What the read does not read never refuses it (verification
			// sweep: each was 400 once the whole query was read strictly).
			{"_=1&_=2", nil, 200, "success"},
			{"a[]=1", nil, 200, "success"},
			{"a=1;b=2", nil, 200, "success"},
			{"token=abc", nil, 200, "success"},
			{"a=1&a[b]=2&company_token=" + right, nil, 200, "success"},
			{"a=1;b=2&company_token=" + wrong, nil, 403, paylink.CodeCompanyTokenMismatch},
		} {
			r := env.Do(http.MethodGet, path+"?"+tt.query, m, tt.body)
			if r.Status != tt.status || r.Get("response_code") != tt.code {
				named := strings.NewReplacer(right, "RIGHT", wrong, "OTHER'S").Replace(tt.query) // no tokens in test output
				t.Errorf("GET %s?%s body %v: got %d %.200s, want %d %s", path, named, tt.body, r.Status, r.Raw, tt.status, tt.code)
			}
		}
	}
}
