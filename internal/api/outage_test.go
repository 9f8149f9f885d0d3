package api_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
	"github.com/paylink/paylink/internal/pgtest"
)

// outcomes tallies what clients saw during a drill.
type outcomes struct {
	mu       sync.Mutex
	status   map[int]int
	approved []string
	bad      []string // responses that break the contract
}

func (o *outcomes) record(r apitest.Response, retryAfter string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.status[r.Status]++
	switch r.Status {
	case http.StatusOK:
		if r.Str("purchase.status") == "APPROVED" {
			o.approved = append(o.approved, r.Str("purchase.purchase_reference"))
		}
	case http.StatusServiceUnavailable:
		if retryAfter == "" || r.Str("response_code") != paylink.CodeServiceUnavailable {
			o.bad = append(o.bad, "503 without Retry-After or service_unavailable: "+r.Raw)
		}
	default:
		o.bad = append(o.bad, r.Raw)
	}
}

func (o *outcomes) approvals() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.approved)
}

// post is env.Post that also returns the Retry-After header.
func post(t *testing.T, env *apitest.Env, path string, m *apitest.Merchant, body map[string]any) (apitest.Response, string) {
	t.Helper()
	var retryAfter string
	r := env.DoWith(http.MethodPost, path, m, body, func(res *http.Response) { retryAfter = res.Header.Get("Retry-After") })
	return r, retryAfter
}

// buy makes one purchase as a client would: a transaction token, then
// the purchase; either may meet the outage.
func buy(t *testing.T, env *apitest.Env, m *apitest.Merchant, o *outcomes) {
	r, ra := post(t, env, "/v5/transaction_token", m, map[string]any{"company_token": m.Creds.CompanyToken})
	if r.Status != http.StatusOK {
		o.record(r, ra)
		return
	}
	o.record(post(t, env, "/v5/purchase", m, map[string]any{
		"token":    map[string]any{"company_token": m.Creds.CompanyToken, "transaction_token": r.Str("transaction_token")},
		"customer": map[string]any{"ip_address": "203.0.113.7", "timezone": "Australia/Sydney"},
		"card": map[string]any{"number": "4111111111111111", "expiry_month": "12", "expiry_year": env.Clock.Now().Year()%100 + 3,
			"cvc": "123", "holder_name": "Jo Citizen"},
		"purchase": map[string]any{"amount": "10.00", "currency": "AUD"},
	}))
}

// waitFor polls cond until it holds; it fails the test after a minute.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestPostgresRestartUnderLoad is the outage drill: purchases from
// several clients while PostgreSQL stops at once and comes back 1.5 s
// later. Clients see only 200 or 503 with Retry-After (never a 500), every
// approved purchase is kept and gets its webhook, /readyz and the hosted
// page report the outage, and service resumes by itself.
func TestPostgresRestartUnderLoad(t *testing.T) {
	srv, dsn := pgtest.DurableDatabase(t)
	var hookMu sync.Mutex
	var hooks []string
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		hookMu.Lock()
		hooks = append(hooks, string(b))
		hookMu.Unlock()
	}))
	defer receiver.Close()
	reg := prometheus.NewRegistry()
	env := apitest.Start(t, apitest.Options{DSN: dsn, Registry: reg})
	m := env.Onboard(func(n *paylink.NewMerchant) {
		n.Settings.Webhook.URL, n.Settings.Webhook.Domains = receiver.URL+"/hooks", []string{"127.0.0.1"}
	})

	link := env.Post("/v5/payment-links", m, map[string]any{"amount": "10.50", "currency": "AUD", "merchantReference": "ORDER-1",
		"customer": map[string]any{"first_name": "Jo", "last_name": "Citizen", "email": "jo@example.com"}})
	if link.Status != http.StatusOK {
		t.Fatalf("create link: got %d %s", link.Status, link.Raw)
	}

	o := &outcomes{status: map[int]int{}}
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				buy(t, env, m, o)
			}
		}()
	}
	waitFor(t, "approvals before the outage", func() bool { return o.approvals() >= 10 })
	if err := srv.Halt(); err != nil {
		t.Fatal(err)
	}
	before := o.approvals()
	ready, readyRetry := get(t, env, "/readyz")
	page, err := env.Server.Client().Get(link.Str("url"))
	if err != nil {
		t.Fatal(err)
	}
	page.Body.Close()
	time.Sleep(1500 * time.Millisecond)
	if err := srv.Resume(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "approvals after the restart", func() bool { return o.approvals() >= before+10 })
	stop.Store(true)
	wg.Wait()

	if ready.Status != http.StatusServiceUnavailable || readyRetry == "" || ready.Str("status") != "unavailable" {
		t.Errorf("/readyz during the outage: got %d %s (Retry-After %q), want 503 unavailable with Retry-After", ready.Status, ready.Raw, readyRetry)
	}
	if page.StatusCode != http.StatusServiceUnavailable || page.Header.Get("Retry-After") == "" ||
		!strings.HasPrefix(page.Header.Get("Content-Type"), "text/html") {
		t.Errorf("hosted page during the outage: got %d %q (Retry-After %q), want a 503 page with Retry-After",
			page.StatusCode, page.Header.Get("Content-Type"), page.Header.Get("Retry-After"))
	}
	if n := unavailableCount(t, reg); n == 0 {
		t.Error("paylink_database_unavailable_total: got 0 after the outage, want the outage counted")
	}
	if o.status[http.StatusServiceUnavailable] == 0 {
		t.Errorf("got statuses %v, want some 503s: the drill did not meet the outage", o.status)
	}
	for _, b := range o.bad {
		t.Errorf("got a response outside the contract (only 200, or 503 with Retry-After): %s", b)
	}
	if len(o.bad) > 0 {
		for _, l := range strings.Split(env.LogText(), "\n") {
			if strings.Contains(l, `"err":`) && !strings.Contains(l, paylink.CodeServiceUnavailable) {
				t.Log("server log: ", l) // the unclassified error, to classify it
			}
		}
	}
	// A delivery leased just before the outage whose attempt could not be
	// recorded is sent again once its lease runs out (at least once).
	env.Clock.Advance(2 * time.Minute)
	env.WaitWebhooks()
	hookMu.Lock()
	all := strings.Join(hooks, "\n")
	hookMu.Unlock()
	for _, ref := range o.approved {
		if r := env.Do(http.MethodGet, "/v5/purchase/"+ref, m, nil); r.Status != http.StatusOK || r.Str("status") != "APPROVED" {
			t.Errorf("approved purchase %s after the restart: got %d %s, want 200 APPROVED", ref, r.Status, r.Raw)
		}
		if !strings.Contains(all, ref) {
			t.Errorf("approved purchase %s: got no webhook, want one", ref)
		}
	}
	t.Logf("statuses %v, %d approvals", o.status, len(o.approved))
}

// unavailableCount reads paylink_database_unavailable_total.
func unavailableCount(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == "paylink_database_unavailable_total" {
			return f.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatal("paylink_database_unavailable_total is not registered")
	return 0
}

// get is a GET that also returns Retry-After.
func get(t *testing.T, env *apitest.Env, path string) (apitest.Response, string) {
	t.Helper()
	var retryAfter string
	r := env.DoWith(http.MethodGet, path, nil, nil, func(res *http.Response) { retryAfter = res.Header.Get("Retry-After") })
	return r, retryAfter
}

// TestSQLiteBusyIsUnavailable: a purchase that waits out SQLite's busy
// timeout behind another process's lock answers 503 with Retry-After,
// and the next one succeeds once the lock is gone.
func TestSQLiteBusyIsUnavailable(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	other, err := sql.Open("sqlite", "file:"+env.DBPath+"?_pragma=busy_timeout(10000)") // waits for paylink's own writes
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	r, retryAfter := post(t, env, "/v5/purchase", m, env.CardPurchase(m, "4111111111111111", "10.00"))
	if r.Status != http.StatusServiceUnavailable || retryAfter == "" || r.Str("response_code") != paylink.CodeServiceUnavailable {
		t.Errorf("write behind a held lock: got %d %s (Retry-After %q), want 503 service_unavailable with Retry-After", r.Status, r.Raw, retryAfter)
	}
	// The database still answers reads; it is not ready, as it commits nothing.
	if ready, retry := get(t, env, "/readyz"); ready.Status != http.StatusServiceUnavailable || retry == "" {
		t.Errorf("/readyz behind a held write lock: got %d %s (Retry-After %q), want 503 with Retry-After", ready.Status, ready.Raw, retry)
	}
	if _, err := conn.ExecContext(context.Background(), "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if r := env.Post("/v5/purchase", m, env.CardPurchase(m, "4111111111111111", "10.00")); r.Status != http.StatusOK || r.Str("purchase.status") != "APPROVED" {
		t.Errorf("after the lock is released: got %d %s, want 200", r.Status, r.Raw)
	}
	if ready, _ := get(t, env, "/readyz"); ready.Status != http.StatusOK {
		t.Errorf("/readyz after the lock is released: got %d %s, want 200", ready.Status, ready.Raw)
	}
}

// TestARetryAfterAnOutageRunsWithItsKey: a purchase under way when the
// database stops cannot record its Idempotency-Key's end while the
// database is down (its answer: 200 in progress, since the acquirer was
// asked). Once the database is back, the key is finished within seconds,
// so the client's retry with the key gets that answer replayed instead of
// 409 "still in progress" for the rest of the key's 3-minute lock. The
// end left to the background is logged at WARN, not as an error.
func TestARetryAfterAnOutageRunsWithItsKey(t *testing.T) {
	srv, dsn := pgtest.DurableDatabase(t)
	env := apitest.Start(t, apitest.Options{DSN: dsn})
	m := env.Onboard()
	body, _ := json.Marshal(env.CardPurchase(m, visa, "10.00"))
	// The purchase is under way when the database stops: the acquirer
	// has its request and answers after the delay, which outlasts the
	// halt even on a slow machine.
	env.Sandbox.SetDelay(3 * time.Second)
	asked := env.Sandbox.Received(paylink.OpAuthorize)
	first := make(chan string)
	go func() {
		_, raw := postKey(t, env, m, "order-after-outage", body)
		first <- raw
	}()
	waitFor(t, "the purchase to reach the acquirer", func() bool { return env.Sandbox.Received(paylink.OpAuthorize) > asked })
	if err := srv.Halt(); err != nil {
		t.Fatal(err)
	}
	answer := <-first
	if !strings.Contains(answer, `"PENDING"`) {
		t.Fatalf("the purchase during the outage: got %s, want it in progress", answer)
	}
	env.Sandbox.SetDelay(0)
	if err := srv.Resume(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the retry to be answered", func() bool {
		res, raw := postKey(t, env, m, "order-after-outage", body)
		if res.StatusCode == http.StatusConflict && strings.Contains(raw, paylink.CodeIdempotencyConflict) {
			return false
		}
		if res.Header.Get("Idempotent-Replayed") != "true" || raw != answer {
			t.Fatalf("the retry: got %d %s, want the first answer replayed", res.StatusCode, raw)
		}
		return true
	})
	// The key's end that the outage kept from being written is logged at
	// WARN (it was an ERROR "idempotency key not recorded"): no bug.
	for _, line := range strings.Split(env.LogText(), "\n") {
		if strings.Contains(line, "idempotency key") && strings.Contains(line, `"level":"ERROR"`) {
			t.Errorf("an outage logged as an error: %s", line)
		}
	}
	if !strings.Contains(env.LogText(), "idempotency key's end not written: the database is unavailable") {
		t.Errorf("the key's end left to the background is not logged:\n%s", env.LogText())
	}
}

// TestAnOutageLogsReadinessChangesAtWarn: while PostgreSQL is down,
// /readyz answers 503 at every probe but logs one WARN line when
// readiness is lost and one line when it comes back, never an ERROR (an
// outage is no bug); and the webhook dispatcher, unable to record an
// attempt it made, logs that at WARN too, once, and once that the
// database answers again.
func TestAnOutageLogsReadinessChangesAtWarn(t *testing.T) {
	srv, dsn := pgtest.DurableDatabase(t)
	arrived, answer := make(chan struct{}, 1), make(chan struct{})
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case arrived <- struct{}{}:
			<-answer // the first attempt is answered once the database is down
		default:
		}
	}))
	defer receiver.Close()
	env := apitest.Start(t, apitest.Options{DSN: dsn})
	m := env.Onboard(func(n *paylink.NewMerchant) {
		n.Settings.Webhook.URL, n.Settings.Webhook.Domains = receiver.URL+"/hooks", []string{"127.0.0.1"}
	})
	o := &outcomes{status: map[int]int{}}
	buy(t, env, m, o)
	if o.approvals() != 1 {
		t.Fatalf("purchase before the outage: got %v %v, want APPROVED", o.status, o.bad)
	}
	link := env.Post("/v5/payment-links", m, map[string]any{"amount": "5.00", "currency": "AUD", "merchantReference": "outage"})
	page, err := url.Parse(link.Str("url"))
	if link.Status != http.StatusOK || err != nil {
		t.Fatalf("link: got %d %s", link.Status, link.Raw)
	}
	<-arrived
	if r, _ := get(t, env, "/readyz"); r.Status != http.StatusOK {
		t.Fatalf("/readyz before the outage: got %d %s", r.Status, r.Raw)
	}
	if err := srv.Halt(); err != nil {
		t.Fatal(err)
	}
	close(answer)
	for i := range 3 {
		if r, _ := get(t, env, "/readyz"); r.Status != http.StatusServiceUnavailable {
			t.Errorf("/readyz probe %d during the outage: got %d %s, want 503", i+1, r.Status, r.Raw)
		}
	}
	outageLines := func() []logLine {
		return slices.Concat(logLines(env, "record webhook attempts"), logLines(env, "exchange webhooks"),
			logLines(env, "webhook receivers held for"))
	}
	waitFor(t, "the webhook attempt's failed recording", func() bool { return len(outageLines()) > 0 })
	// Customers keep coming: the payment page, a 3-D Secure challenge
	// page and the API answer 503, logged at WARN as the API's are (the
	// pages logged them at ERROR: the secrets sweep).
	for _, path := range []string{page.Path, paylink.ChallengePath + "pr_nosuchpurchase.secret"} {
		if r, retry := get(t, env, path); r.Status != http.StatusServiceUnavailable || retry == "" {
			t.Errorf("GET %s during the outage: got %d (Retry-After %q), want 503 with Retry-After", path, r.Status, retry)
		}
	}
	if r := env.Post("/v5/purchase/pr_nosuchpurchase", m, map[string]any{"company_token": m.Creds.CompanyToken}); r.Status != http.StatusServiceUnavailable {
		t.Errorf("a status look-up during the outage: got %d %s, want 503", r.Status, r.Raw)
	}
	if err := srv.Resume(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "/readyz 200 after the restart", func() bool { r, _ := get(t, env, "/readyz"); return r.Status == http.StatusOK })
	get(t, env, "/readyz")

	for msg, want := range map[string]string{"not ready: ": "WARN", "ready again": "INFO"} {
		if lines := logLines(env, msg); len(lines) != 1 || lines[0].Level != want {
			t.Errorf("%q: got %+v, want one line at %s (once per change, not per probe)", msg, lines, want)
		}
	}
	if lines := logLines(env, "readiness check failed"); len(lines) > 0 {
		t.Errorf("got %d lines \"readiness check failed\" (%s), want none: a probe during an outage logs nothing new", len(lines), lines[0].Level)
	}
	for _, l := range outageLines() {
		if l.Level != "WARN" {
			t.Errorf("%q with the database down logged at %s, want WARN", l.Msg, l.Level)
		}
	}
	if lines := logLines(env, "unavailable"); len(lines) < 3 {
		t.Errorf("got %d lines \"unavailable\", want one for each of the page, the challenge page and the API", len(lines))
	}
	for _, l := range logLines(env, "") {
		if l.Level == "ERROR" {
			t.Errorf("%q logged at ERROR during an outage, want WARN: ERROR is for bugs", l.Msg)
		}
	}
	// The dispatcher, retrying at every turn, logs the outage once and
	// its end once (it logged a WARN line at every turn).
	waitFor(t, "the dispatcher's line that the database answers again", func() bool {
		return len(logLines(env, "webhook outbox: the database answers again")) > 0
	})
	if n := len(outageLines()); n != 1 {
		t.Errorf("the dispatcher logged the outage %d times, want once", n)
	}
}

// logLine is one JSON line of an Env's log.
type logLine struct{ Level, Msg string }

// logLines are the lines of env's log whose message starts with msg.
func logLines(env *apitest.Env, msg string) []logLine {
	var out []logLine
	for _, raw := range strings.Split(env.LogText(), "\n") {
		var l logLine
		if json.Unmarshal([]byte(raw), &l) == nil && strings.HasPrefix(l.Msg, msg) {
			out = append(out, l)
		}
	}
	return out
}
