package main

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
)

// TestWebhooksListAttemptsAligned: webhooks list --attempts prints each
// attempt under its delivery in the list's own columns: the attempt's
// number under ATTEMPTS, its HTTP status under LAST CODE, how long it
// took under LATENCY, when it started under CREATED, its URL under URL,
// its error under LAST ERROR. Before, attempts were rows of six cells
// in the list's table, each under an unrelated header (the start time
// under MID, the URL under TARGET), and they widened those columns.
func TestWebhooksListAttemptsAligned(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	codes := map[string]int{"/ok": http.StatusOK, "/fails": http.StatusInternalServerError}
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(codes[r.URL.Path]) }))
	t.Cleanup(rc.Close)
	m := env.Onboard(func(n *paylink.NewMerchant) {
		n.Settings.Webhook.URL, n.Settings.Webhook.Domains = rc.URL+"/ok", []string{"127.0.0.1"}
	})
	fails := env.Onboard(func(n *paylink.NewMerchant) {
		n.Settings.Webhook.URL, n.Settings.Webhook.Domains = rc.URL+"/fails", []string{"127.0.0.1"}
	})
	for _, mm := range []*apitest.Merchant{m, fails} {
		if r := env.Post("/v5/purchase", mm, env.CardPurchase(mm, "4111111111111111", "10.00")); r.Status != http.StatusOK {
			t.Fatalf("purchase: %d %s", r.Status, r.Raw)
		}
	}
	env.WaitWebhooks()

	out, err := runCLIWith(t, map[string]string{"PAYLINK_MASTER_KEY": apitest.MasterKeyHex},
		"webhooks", "list", "--db", env.DBPath, "--attempts")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	header := lines[0]
	col := func(name string) int {
		i := strings.Index(header, name)
		if i < 0 {
			t.Fatalf("no column %s in the header %q", name, header)
		}
		return i
	}
	// cell is the text of line in the column starting at name, up to the
	// next run of two spaces.
	cell := func(line, name string) string {
		i := col(name)
		if i > len(line) {
			return ""
		}
		s := line[i:]
		if j := strings.Index(s, "  "); j >= 0 {
			s = s[:j]
		}
		return strings.TrimSpace(s)
	}
	attempt := regexp.MustCompile(`^  attempt `)
	var attempts, deliveries int
	for _, line := range lines[1:] {
		if !attempt.MatchString(line) {
			deliveries++
			if !strings.HasPrefix(cell(line, "ID"), "msg_") || !strings.HasPrefix(cell(line, "URL"), rc.URL) {
				t.Errorf("a delivery row out of its columns: %q\n%s", line, out)
			}
			continue
		}
		attempts++
		want := map[string]*regexp.Regexp{
			"ATTEMPTS": regexp.MustCompile(`^1$`), "LAST CODE": regexp.MustCompile(`^(200|500)$`),
			"LATENCY": regexp.MustCompile(`^\d+ms$`), "CREATED": regexp.MustCompile(`^\d{4}-\d\d-\d\dT`),
			"URL": regexp.MustCompile(`^` + regexp.QuoteMeta(rc.URL) + `/(ok|fails)$`),
		}
		for name, re := range want {
			if got := cell(line, name); !re.MatchString(got) {
				t.Errorf("attempt row %q: got %q under %s, want %s\n%s", line, got, name, re, out)
			}
		}
		if got := cell(line, "MID"); got != "" {
			t.Errorf("attempt row %q: got %q under MID, want nothing\n%s", line, got, out)
		}
	}
	if deliveries != 2 || attempts != 2 {
		t.Errorf("got %d deliveries and %d attempts, want 2 and 2:\n%s", deliveries, attempts, out)
	}
}
