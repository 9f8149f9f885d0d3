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

// crashReceiver blocks every webhook while hold is set: until the sender
// gives up (the process is killed meanwhile), or until release is closed,
// when it acknowledges it. Once hold is cleared it acknowledges at once.
type crashReceiver struct {
	mu      sync.Mutex
	hold    bool
	held    int
	acked   map[string]int
	changed chan struct{}
	release chan struct{}
}

func newCrashReceiver() *crashReceiver {
	return &crashReceiver{hold: true, acked: map[string]int{}, changed: make(chan struct{}, 100), release: make(chan struct{})}
}

func (c *crashReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	c.mu.Lock()
	hold := c.hold
	if hold {
		c.held++
	}
	c.mu.Unlock()
	c.changed <- struct{}{}
	if hold {
		select {
		case <-r.Context().Done(): // the sender died first
			return
		case <-c.release:
		}
	}
	c.mu.Lock()
	c.acked[r.Header.Get("webhook-id")]++
	c.mu.Unlock()
	c.changed <- struct{}{}
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
	const n = 5
	rc, db, c := webhookMerchant(t)
	first := startServe(t, db, "--webhook-timeout", "1s")
	payAndHold(t, first, c, rc, n)
	first.kill() // SIGKILL
	rc.mu.Lock()
	rc.hold = false
	rc.mu.Unlock()

	second := startServe(t, db, "--webhook-timeout", "1s")
	rc.waitFor(t, "every webhook acknowledged after the restart", func() bool { return len(rc.acked) == n })
	second.cmd.Process.Signal(os.Interrupt)
	second.cmd.Wait()

	checkDeliveredOnce(t, db, c.MID, rc, n)
	var list bytes.Buffer
	if err := run(context.Background(), []string{"webhooks", "list", "--db", db, "--merchant", c.MID, "--attempts"},
		func(string) string { return "" }, &list, io.Discard); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(list.String(), " delivered "); got != n {
		t.Errorf("webhooks list: got %d delivered rows, want %d:\n%s", got, n, list.String())
	}
}

// TestWebhooksInFlightAreRecordedOnShutdown stops the real binary with
// SIGINT while every webhook is in flight: it waits for the attempts,
// records their answers, and exits, so each webhook is delivered once
// and none is due again.
func TestWebhooksInFlightAreRecordedOnShutdown(t *testing.T) {
	const n = 5
	rc, db, c := webhookMerchant(t)
	s := startServe(t, db, "--webhook-timeout", "30s")
	payAndHold(t, s, c, rc, n)
	s.cmd.Process.Signal(os.Interrupt)
	s.waitLog(t, "webhook dispatcher stopping")
	close(rc.release)
	if err := s.cmd.Wait(); err != nil {
		t.Fatalf("serve: got exit %v after SIGINT, want a clean exit; log:\n%s", err, s.logText())
	}
	checkDeliveredOnce(t, db, c.MID, rc, n)
}

// webhookMerchant onboards a merchant whose company webhook goes to a
// new crashReceiver, in a new SQLite database.
func webhookMerchant(t *testing.T) (*crashReceiver, string, creds) {
	t.Helper()
	rc := newCrashReceiver()
	hook := httptest.NewServer(rc)
	t.Cleanup(hook.Close)
	db := filepath.Join(t.TempDir(), "paylink.db")
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
	return rc, db, c
}

// payAndHold makes n approved purchases at s and waits until the
// receiver holds all n webhooks.
func payAndHold(t *testing.T, s *server, c creds, rc *crashReceiver, n int) {
	t.Helper()
	for i := range n {
		out := s.purchase(c, testCard("4111111111111111"), "12.34", map[string]any{"invoice_number": fmt.Sprintf("INV-%d", i)})
		if get(out, "purchase.status") != "APPROVED" {
			t.Fatalf("purchase: got %v, want APPROVED", out)
		}
	}
	rc.waitFor(t, "every webhook in flight", func() bool { return rc.held == n })
}

// checkDeliveredOnce checks that the merchant's n deliveries are each
// recorded as delivered after one attempt and were acknowledged once.
func checkDeliveredOnce(t *testing.T, db, mid string, rc *crashReceiver, n int) {
	t.Helper()
	rc.mu.Lock()
	defer rc.mu.Unlock()
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
		ds, err := tx.ListWebhookDeliveries(paylink.WebhookFilter{MerchantID: mid})
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
}
