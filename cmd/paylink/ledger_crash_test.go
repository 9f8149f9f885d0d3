package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// tryPost is post without failing the test: requests in flight when the
// server is killed end with an error.
func (s *server) tryPost(key, path string, body any) (int, map[string]any, error) {
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, s.url+path, bytes.NewReader(raw))
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	var out map[string]any
	json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out, nil
}

// refundRace sends 16 refunds of 2.00 at once against each purchase of
// 10.00 and counts the approved ones; with kill set, the server is killed
// with SIGKILL while they are in flight.
func refundRace(t *testing.T, s *server, c creds, refs []string, kill bool) (approved int64) {
	var wg sync.WaitGroup
	var n atomic.Int64
	for _, ref := range refs {
		for range 16 {
			tok := s.token(c)
			wg.Go(func() {
				code, out, err := s.tryPost(c.APIKey, "/v5/purchase/"+ref+"/refund", map[string]any{
					"token":    map[string]any{"company_token": c.CompanyToken, "transaction_token": tok},
					"customer": map[string]any{"ip_address": "198.51.100.4", "timezone": "UTC"},
					"refund":   map[string]any{"amount": "2.00", "currency": "AUD"}})
				if err == nil && code == 200 && get(out, "refund.status") == "APPROVED" {
					n.Add(1)
				}
				if err == nil && code >= 500 {
					t.Errorf("refund: got %d %v", code, out)
				}
			})
		}
	}
	if kill {
		time.Sleep(20 * time.Millisecond)
		s.kill()
	}
	wg.Wait()
	return n.Load()
}

// TestLedgerVerifiesAfterRefundRacesAndKill9 runs the real binary on
// each engine: 16-way refund races against a batch of purchases, a
// SIGKILL in the middle of another race, a restart and more races; then
// `paylink ledger verify` must find every posting balanced and every
// payment with exactly its postings.
func TestLedgerVerifiesAfterRefundRacesAndKill9(t *testing.T) {
	engines := map[string]func(t *testing.T) string{
		"sqlite": func(t *testing.T) string { return filepath.Join(t.TempDir(), "ledger.db") },
		"postgres": func(t *testing.T) string {
			t.Setenv("PAYLINK_MASTER_KEY", strings.Repeat("ab", 32))
			return pg.Database(t)
		},
	}
	for name, open := range engines {
		t.Run(name, func(t *testing.T) {
			db := open(t)
			c := createMerchant(t, db)
			s := startServe(t, db, "--rate-limit", "0")
			purchases := func(s *server, n int) []string {
				refs := make([]string, n)
				for i := range refs {
					out := s.purchase(c, testCard("4111111111111111"), "10.00", nil)
					refs[i], _ = get(out, "purchase.purchase_reference").(string)
				}
				return refs
			}
			if got := refundRace(t, s, c, purchases(s, 4), false); got != 4*5 {
				t.Errorf("16 refunds of 2.00 against each of 4 purchases of 10.00: %d approved, want 20", got)
			}
			refundRace(t, s, c, purchases(s, 4), true)

			s2 := startServe(t, db, "--rate-limit", "0")
			if got := refundRace(t, s2, c, purchases(s2, 2), false); got != 2*5 {
				t.Errorf("after the restart: %d approved, want 10", got)
			}
			s2.cmd.Process.Signal(os.Interrupt)
			s2.cmd.Wait()

			var out bytes.Buffer
			err := run(context.Background(), []string{"ledger", "verify", "--db", db}, os.Getenv, &out, io.Discard)
			if err != nil {
				t.Fatalf("ledger verify: %v\n%s", err, out.String())
			}
		})
	}
}
