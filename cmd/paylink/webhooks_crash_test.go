package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
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

// TestWebhooksSurviveKill9 runs the real binary, kills it with SIGKILL
// while every webhook is in flight, restarts it, and checks that each
// outbox row is then delivered, exactly once.
func TestWebhooksSurviveKill9(t *testing.T) {
	dir := t.TempDir()
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
	var c creds
	if err := json.Unmarshal(out.Bytes(), &c); err != nil {
		t.Fatal(err)
	}

	const n = 5
	first := startServe(t, db, "--webhook-timeout", "1s")
	for i := range n {
		out := first.purchase(c, testCard("4111111111111111"), "12.34", map[string]any{"invoice_number": fmt.Sprintf("INV-%d", i)})
		if get(out, "purchase.status") != "APPROVED" {
			t.Fatalf("purchase: got %v, want APPROVED", out)
		}
	}
	rc.waitFor(t, "every webhook in flight", func() bool { return rc.held == n })
	first.kill() // SIGKILL
	rc.mu.Lock()
	rc.hold = false
	rc.mu.Unlock()

	second := startServe(t, db, "--webhook-timeout", "1s")
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
		ds, err := tx.ListWebhookDeliveries(paylink.WebhookFilter{MerchantID: c.MID})
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
	if err := run(context.Background(), []string{"webhooks", "list", "--db", db, "--merchant", c.MID, "--attempts"},
		func(string) string { return "" }, &list, io.Discard); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(list.String(), " delivered "); got != n {
		t.Errorf("webhooks list: got %d delivered rows, want %d:\n%s", got, n, list.String())
	}
}
