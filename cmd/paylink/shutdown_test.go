package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/paylink/paylink"
)

// TestSIGTERMAnswersARequestSlowerThanFifteenSeconds: a purchase waiting
// on a PostgreSQL lock when serve gets SIGTERM still gets its answer,
// though it takes longer than the 15 s the drain used to allow (which cut
// it off unanswered, exited 1 and let it commit after the process had
// gone); /readyz answers 503 from the drain's start while the instance
// still serves; and serve exits cleanly once the purchase is answered.
func TestSIGTERMAnswersARequestSlowerThanFifteenSeconds(t *testing.T) {
	if testing.Short() {
		t.Skip("holds a request 17 s past SIGTERM")
	}
	t.Setenv("PAYLINK_MASTER_KEY", strings.Repeat("ab", 32))
	dsn := pg.Database(t)
	c := createMerchant(t, dsn)
	s := startServe(t, dsn, "--shutdown-delay", "1s")
	tok := s.token(c)

	raw, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	ctx := context.Background()
	lock, err := raw.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Rollback()
	if _, err := lock.Exec(`LOCK TABLE transactions IN EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}

	type answer struct {
		status int
		body   map[string]any
		err    error
	}
	answered := make(chan answer, 1)
	go func() {
		body, _ := json.Marshal(map[string]any{
			"token":    map[string]any{"company_token": c.CompanyToken, "transaction_token": tok},
			"customer": map[string]any{"ip_address": "198.51.100.4", "timezone": "Australia/Perth"},
			"card":     testCard("4111111111111111"), "purchase": map[string]any{"amount": "10.00", "currency": "AUD"},
		})
		req, _ := http.NewRequest(http.MethodPost, s.url+"/v5/purchase", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+c.APIKey)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			answered <- answer{err: err}
			return
		}
		defer res.Body.Close()
		var out map[string]any
		err = json.NewDecoder(res.Body).Decode(&out)
		answered <- answer{status: res.StatusCode, body: out, err: err}
	}()
	if !waitForLockWait(t, raw) {
		select {
		case a := <-answered:
			t.Fatalf("the purchase did not wait on the held lock: answered %d %v (%v)", a.status, a.body, a.err)
		default:
			t.Fatal("the purchase never waited on the held lock")
		}
	}

	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	termAt := time.Now()
	exited := make(chan error, 1)
	go func() { exited <- s.cmd.Wait() }()
	s.waitLog(t, "shutting down")
	res, err := http.Get(s.url + "/readyz")
	if err != nil {
		t.Fatalf("/readyz during --shutdown-delay: %v, want 503 from a listener still open", err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" {
		t.Errorf("/readyz once the drain started: got %d (Retry-After %q), want 503 with Retry-After", res.StatusCode, res.Header.Get("Retry-After"))
	}

	// Hold the purchase past the old drain's 15 s, and past 15 s after
	// the delay.
	select {
	case err := <-exited:
		t.Fatalf("serve exited (%v) while a purchase was in flight; log:\n%s", err, s.logText())
	case a := <-answered:
		t.Fatalf("the purchase was answered while its lock was held: %+v", a)
	case <-time.After(time.Until(termAt.Add(17 * time.Second))):
	}
	if err := lock.Rollback(); err != nil {
		t.Fatal(err)
	}
	select {
	case a := <-answered:
		if a.err != nil || a.status != http.StatusOK || get(a.body, "purchase.status") != "APPROVED" {
			t.Errorf("purchase after SIGTERM: got %d %v (%v), want 200 APPROVED; log:\n%s", a.status, a.body, a.err, s.logText())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no answer to the purchase 30 s after its lock was released")
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("serve exited with %v after draining, want a clean exit; log:\n%s", err, s.logText())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not exit after its last request was answered")
	}
}

// waitForLockWait reports whether a purchase's INSERT came to wait on the
// held lock within 30 s.
func waitForLockWait(t *testing.T, db *sql.DB) bool {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var n int
		if err := db.QueryRow(`SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database()
			AND wait_event_type = 'Lock' AND query LIKE '%INSERT INTO transactions%'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestDrainGivingUpLogsTheRequestsItCuts: when in-flight requests outlast
// --shutdown-timeout, the drain logs at WARN how many it cut off and
// returns an error saying so, not a bare "context deadline exceeded".
func TestDrainGivingUpLogsTheRequestsItCuts(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	release, started := make(chan struct{}), make(chan struct{}, 2)
	running := &inFlight{}
	srv := &http.Server{Handler: running.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started <- struct{}{}
		<-release
	}))}
	go srv.Serve(ln)
	defer close(release)
	for range 2 {
		go func() {
			if res, err := http.Get("http://" + ln.Addr().String() + "/"); err == nil {
				res.Body.Close()
			}
		}()
		<-started
	}
	var logs bytes.Buffer
	d := drainer{log: newLoggerAt(&logs, slog.LevelInfo), srv: srv, draining: make(chan struct{}), running: running,
		timeout: 200 * time.Millisecond}
	err = d.drain()
	if err == nil || errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "2 requests still running after --shutdown-timeout 200ms") {
		t.Errorf("drain: got %v, want an error naming the 2 requests cut off", err)
	}
	var warned bool
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var e struct {
			Level    string
			Msg      string
			InFlight int `json:"in_flight"`
		}
		if json.Unmarshal([]byte(line), &e) == nil && e.Level == "WARN" && strings.HasPrefix(e.Msg, "shutdown: requests still running") && e.InFlight == 2 {
			warned = true
		}
	}
	if !warned {
		t.Errorf("no WARN line with in_flight 2 when the drain gave up; log:\n%s", logs.String())
	}
	select {
	case <-d.draining:
	default:
		t.Error("the drain did not mark the instance as draining (/readyz 503)")
	}
}

// TestShutdownTimeoutCoversTheLongestRequest: --shutdown-timeout
// defaults to more than paylink.MaxRequestTime and refuses less, which
// would cut off requests paylink allows.
func TestShutdownTimeoutCoversTheLongestRequest(t *testing.T) {
	cfg, err := parseServe(envWith(nil), nil)
	if err != nil || cfg.shutdownTimeout <= paylink.MaxRequestTime || cfg.shutdownDelay != 0 {
		t.Errorf("defaults: got timeout %s, delay %s (%v), want more than %s and 0", cfg.shutdownTimeout, cfg.shutdownDelay, err, paylink.MaxRequestTime)
	}
	for _, args := range [][]string{{"--shutdown-timeout", "15s"}, {"--shutdown-timeout", (paylink.MaxRequestTime - time.Second).String()}, {"--shutdown-delay", "-1s"}} {
		if _, err := parseServe(envWith(nil), args); err == nil || !strings.Contains(err.Error(), args[0]) {
			t.Errorf("serve %v: got %v, want an error naming %s", args, err, args[0])
		}
	}
	if cfg, err := parseServe(envWith(nil), []string{"--shutdown-timeout", paylink.MaxRequestTime.String()}); err != nil || cfg.shutdownTimeout != paylink.MaxRequestTime {
		t.Errorf("--shutdown-timeout %s: got %s, %v, want it taken", paylink.MaxRequestTime, cfg.shutdownTimeout, err)
	}
}

// TestASecondSignalEndsTheProcessAtOnce: serve drains on the first
// SIGTERM (here, sitting out a long --shutdown-delay); a second SIGTERM
// ends it at once, as SIGKILL would (verification sweep: further signals
// were swallowed, and only SIGKILL ended the delay or the drain).
func TestASecondSignalEndsTheProcessAtOnce(t *testing.T) {
	t.Setenv("PAYLINK_MASTER_KEY", strings.Repeat("ab", 32))
	s := startServe(t, t.TempDir()+"/paylink.db", "--shutdown-delay", "4m")
	exited := make(chan error, 1)
	go func() { exited <- s.cmd.Wait() }()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	s.waitLog(t, "shutting down")
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err == nil {
			t.Errorf("serve exited cleanly, want it ended by the second signal")
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("serve still running 10 s after a second SIGTERM; log:\n%s", s.logText())
	}
}
