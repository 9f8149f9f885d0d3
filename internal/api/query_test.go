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
		{"limit=1&Limit=2", 400, 0, "differs from the value sent as limit"},
		{"limit=1;2", 400, 0, "the query string does not parse"},
		{"limit=0", 400, 0, "limit must be a whole number"},
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
