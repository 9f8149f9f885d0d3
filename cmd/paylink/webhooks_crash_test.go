package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/sqlstore"
)

// crashReceiver blocks every webhook while hold is set (the process is
// killed meanwhile), and acknowledges them once it is cleared.
type crashReceiver struct {
	mu      sync.Mutex
	hold    bool
	held    int
	acked   map[string]int
	changed chan struct{}
}

func (c *crashReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	c.mu.Lock()
	hold := c.hold
	if hold {
		c.held++
	} else {
		c.acked[r.Header.Get("webhook-id")]++
	}
	c.mu.Unlock()
	c.changed <- struct{}{}
	if hold {
		<-r.Context().Done() // never answers; the sender dies first
		return
	}
	w.WriteHeader(http.StatusOK)
}

// waitFor waits until cond holds, failing after a minute.
func (c *crashReceiver) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		c.mu.Lock()
		ok := cond()
		c.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-c.changed:
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// server is a running "paylink serve" process.
type server struct {
	cmd  *exec.Cmd
	base string
}

func startServe(t *testing.T, bin, db string) *server {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--db", db, "--addr", "127.0.0.1:0", "--webhook-timeout", "1s")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			var line struct{ Msg, Addr string }
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "paylink listening" {
				addr <- line.Addr
			}
		}
	}()
	select {
	case a := <-addr:
		return &server{cmd: cmd, base: "http://" + a}
	case <-time.After(time.Minute):
		t.Fatal("paylink serve did not start")
	}
	return nil
}

func (s *server) post(t *testing.T, path, key string, body any) map[string]any {
	t.Helper()
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, s.base+path, bytes.NewReader(raw))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("%s: got %d %v %v, want 200", path, res.StatusCode, out, err)
	}
	return out
}

func (s *server) approve(t *testing.T, c paylink.Credentials, invoice string) {
	t.Helper()
	tok := s.post(t, "/v5/transaction_token", c.APIKey, map[string]any{"company_token": c.CompanyToken})
	r := s.post(t, "/v5/purchase", c.APIKey, map[string]any{
		"token":    map[string]any{"company_token": c.CompanyToken, "transaction_token": tok["transaction_token"]},
		"customer": map[string]any{"ip_address": "203.0.113.7", "timezone": "UTC"},
		"card": map[string]any{"number": "4111111111111111", "expiry_month": "12",
			"expiry_year": fmt.Sprint(time.Now().Year() + 2), "cvc": "123"},
		"purchase": map[string]any{"amount": "12.34", "currency": "AUD", "invoice_number": invoice},
	})
	if st := r["purchase"].(map[string]any)["status"]; st != "APPROVED" {
		t.Fatalf("purchase: got status %v, want APPROVED", st)
	}
}

// TestWebhooksSurviveKill9 runs the real binary, kills it with SIGKILL
// while every webhook is in flight, restarts it, and checks that each
// outbox row is then delivered, exactly once.
func TestWebhooksSurviveKill9(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "paylink")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	rc := &crashReceiver{hold: true, acked: map[string]int{}, changed: make(chan struct{}, 100)}
	hook := httptest.NewServer(rc)
	defer hook.Close()
	db := filepath.Join(dir, "paylink.db")
	var out bytes.Buffer
	err := run(context.Background(), []string{"merchant", "create", "--db", db, "--name", "Crash Pty Ltd",
		"--trading-name", "Crash", "--webhook-url", hook.URL + "/hook", "--json"}, func(string) string { return "" }, &out, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var creds paylink.Credentials
	if err := json.Unmarshal(out.Bytes(), &creds); err != nil {
		t.Fatal(err)
	}

	const n = 5
	first := startServe(t, bin, db)
	for i := range n {
		first.approve(t, creds, fmt.Sprintf("INV-%d", i))
	}
	rc.waitFor(t, "every webhook in flight", func() bool { return rc.held == n })
	if err := first.cmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	first.cmd.Wait()
	rc.mu.Lock()
	rc.hold = false
	rc.mu.Unlock()

	second := startServe(t, bin, db)
	rc.waitFor(t, "every webhook acknowledged after the restart", func() bool { return len(rc.acked) == n })
	second.cmd.Process.Signal(os.Interrupt)
	second.cmd.Wait()

	for id, k := range rc.acked {
		if k != 1 {
			t.Errorf("webhook %s: got acknowledged %d times, want once", id, k)
		}
	}
	st, err := sqlstore.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	st.View(context.Background(), func(tx paylink.Tx) error {
		ds, err := tx.ListWebhookDeliveries(paylink.WebhookFilter{MerchantID: creds.MID})
		if err != nil || len(ds) != n {
			t.Fatalf("got %d deliveries, %v; want %d", len(ds), err, n)
		}
		for _, d := range ds {
			if d.State != paylink.DeliveryDelivered || d.Attempts != 1 || rc.acked[d.ID] != 1 {
				t.Errorf("delivery %s: got state %s after %d recorded attempts, acknowledged %d times; want delivered once",
					d.ID, d.State, d.Attempts, rc.acked[d.ID])
			}
		}
		return nil
	})
	var list bytes.Buffer
	if err := run(context.Background(), []string{"webhooks", "list", "--db", db, "--merchant", creds.MID, "--attempts"},
		func(string) string { return "" }, &list, io.Discard); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(list.String(), " delivered "); got != n {
		t.Errorf("webhooks list: got %d delivered rows, want %d:\n%s", got, n, list.String())
	}
}
