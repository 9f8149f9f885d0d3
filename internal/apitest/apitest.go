// Package apitest runs a real paylink API over loopback HTTP for tests:
// a real SQLite (or PostgreSQL) store, the real vault and the sandbox
// processor, with a clock the test controls. Nothing of paylink's own is
// faked.
package apitest

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/api"
	"github.com/paylink/paylink/internal/dashboard"
	"github.com/paylink/paylink/internal/httpx"
	"github.com/paylink/paylink/internal/metrics"
	"github.com/paylink/paylink/internal/passwords"
	"github.com/paylink/paylink/internal/processor"
	"github.com/paylink/paylink/internal/site"
	"github.com/paylink/paylink/internal/sqlstore"
	"github.com/paylink/paylink/internal/vault"
	"github.com/paylink/paylink/internal/webhook"
)

// Clock is a settable clock, safe for concurrent use.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock starts a clock at t.
func NewClock(t time.Time) *Clock { return &Clock{now: t} }

// Now returns the current time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// Passwords is argon2id with parameters cheap enough for tests that
// sign in many times; the hashing code is the production one.
func Passwords() passwords.Argon2id {
	return passwords.Argon2id{P: passwords.Params{Time: 1, Memory: 1024, Threads: 1}}
}

// Env is a running API with its parts exposed to the test.
type Env struct {
	T       testing.TB
	Server  *httptest.Server
	Service *paylink.Service
	Store   *sqlstore.Store
	Clock   *Clock
	// Sandbox and Bank are the service's acquirer and bank (Bank unless
	// Options.Bank replaced it): tests make them slow or silent.
	Sandbox *processor.Sandbox
	Bank    *processor.Bank
	DBPath  string // SQLite file, "" on PostgreSQL
	Logs    *bytes.Buffer
	logMu   *sync.Mutex
}

// Options adjust an Env.
type Options struct {
	DSN    string // default: a fresh SQLite file in t.TempDir()
	Config paylink.Config
	// API options (rate limits).
	API []api.Option
	// Registry, when set, receives the metrics a serving instance
	// registers (HTTP, payments, webhooks, outbox, database).
	Registry *prometheus.Registry
	// Bank replaces the sandbox direct-entry bank (an outer edge), for
	// tests of an unreachable bank.
	Bank paylink.BankProcessor
	// Processor replaces the sandbox acquirer (an outer edge), for tests
	// of a processor that answers late.
	Processor paylink.Processor
	// WebhookTimeout bounds one webhook delivery attempt (default 30s).
	WebhookTimeout time.Duration
	// WebhookConcurrency bounds the webhook attempts in flight (default:
	// the dispatcher's).
	WebhookConcurrency int
	// WebhookHeldRefresh is how often the dispatcher reads which
	// receivers webhooks are held for (default: the dispatcher's).
	WebhookHeldRefresh time.Duration
	// Clock, when set, is shared with another Env (two instances on one
	// database); default: a new clock at the current time.
	Clock *Clock
	// Dashboard adjusts the merchant dashboard mounted at /dashboard/.
	Dashboard []dashboard.Option
}

// MasterKeyHex is the vault key of every Env, as PAYLINK_MASTER_KEY spells
// it: a command run on an Env's database needs it.
var MasterKeyHex = strings.Repeat("07", vault.KeySize)

// Start runs an API for the test; it is stopped by t.Cleanup.
func Start(t testing.TB, opts Options) *Env {
	t.Helper()
	e := &Env{T: t, Clock: opts.Clock, Logs: &bytes.Buffer{}, logMu: &sync.Mutex{}}
	if e.Clock == nil {
		e.Clock = NewClock(time.Now().UTC())
	}
	dsn := opts.DSN
	if dsn == "" {
		e.DBPath = filepath.Join(t.TempDir(), "paylink.db")
		dsn = e.DBPath
	}
	st, err := sqlstore.Open(context.Background(), dsn)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	e.Store = st
	v, err := vault.New(bytes.Repeat([]byte{7}, vault.KeySize)) // MasterKeyHex
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(httpx.LogHandler{Handler: slog.NewJSONHandler(lockedWriter{w: e.Logs, mu: e.logMu}, nil)})
	e.Server = httptest.NewUnstartedServer(nil)
	cfg := opts.Config
	cfg.BaseURL = "http://" + e.Server.Listener.Addr().String()
	e.Sandbox, e.Bank = &processor.Sandbox{}, &processor.Bank{}
	var bank paylink.BankProcessor = e.Bank
	if opts.Bank != nil {
		bank = opts.Bank
	}
	var proc paylink.Processor = e.Sandbox
	if opts.Processor != nil {
		proc = opts.Processor
	}
	deps := paylink.Deps{Store: st, Vault: v, Processor: proc, Bank: bank, Logger: log, Clock: e.Clock.Now, Passwords: Passwords()}
	so := site.Options{Logger: log, API: opts.API, Dashboard: opts.Dashboard}
	var whMetrics *webhook.Metrics
	if opts.Registry != nil {
		so.Registry = opts.Registry
		deps.Observer = metrics.NewPayments(opts.Registry)
		whMetrics = webhook.NewMetrics(opts.Registry)
	}
	if e.Service, err = paylink.NewService(cfg, deps); err != nil {
		t.Fatal(err)
	}
	if opts.Registry != nil {
		metrics.RegisterStore(opts.Registry, e.Service, st)
	}
	h, err := site.Handler(e.Service, so)
	if err != nil {
		t.Fatal(err)
	}
	e.Server.Config.Handler = h
	e.Server.Start()
	dctx, stopDispatcher := context.WithCancel(context.Background())
	dispatcherDone := make(chan struct{})
	go func() {
		defer close(dispatcherDone)
		webhook.New(e.Service, webhook.Options{Timeout: opts.WebhookTimeout, Concurrency: opts.WebhookConcurrency,
			HeldRefresh: opts.WebhookHeldRefresh,
			Logger:      log, Metrics: whMetrics}).Run(dctx)
	}()
	t.Cleanup(func() {
		e.Server.Close()
		stopDispatcher()
		<-dispatcherDone
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := e.Service.Close(ctx); err != nil {
			t.Errorf("close the service: %v", err)
		}
		st.Close()
	})
	return e
}

// WaitWebhooks waits until no webhook delivery is due: every row
// enqueued so far has been attempted (and, with retries, is waiting for a
// later time). It fails the test after a minute.
func (e *Env) WaitWebhooks() {
	e.T.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		n, err := e.Service.DueWebhooks(context.Background())
		if err != nil {
			e.T.Fatalf("wait webhooks: %v", err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			e.T.Fatalf("wait webhooks: %d deliveries still due after a minute", n)
		}
		e.Service.WakeWebhooks()
		time.Sleep(10 * time.Millisecond)
	}
}

// lockedWriter serialises log writes into a shared buffer.
type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// For returns the same running API reporting to t: a fuzz target must not
// report through the *testing.F that started the API.
func (e *Env) For(t testing.TB) *Env {
	c := *e
	c.T = t
	return &c
}

// LogText returns everything logged so far.
func (e *Env) LogText() string {
	e.logMu.Lock()
	defer e.logMu.Unlock()
	return e.Logs.String()
}

// WriterDB returns a handle on which a test writes by hand, as an
// operator would: on PostgreSQL the store's own pool; on SQLite a
// connection of its own (the store's pool there only reads), which waits
// for the running service's writes rather than failing at once with
// SQLITE_BUSY. It is closed when the test ends.
func (e *Env) WriterDB(t testing.TB) *sql.DB {
	t.Helper()
	if e.DBPath == "" {
		return e.Store.DB()
	}
	db, err := sql.Open("sqlite", "file:"+e.DBPath+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatalf("open %s: %v", e.DBPath, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// Merchant is an onboarded merchant with its credentials.
type Merchant struct {
	*paylink.Merchant
	Creds paylink.Credentials
}

// Onboard creates a merchant (AU, default surcharge rates) and returns it.
func (e *Env) Onboard(mutate ...func(*paylink.NewMerchant)) *Merchant {
	e.T.Helper()
	n := paylink.NewMerchant{Name: "Acme Pty Ltd", TradingName: "Acme Coffee", Country: "AU",
		Settings: paylink.MerchantSettings{Surcharge: paylink.DefaultSurchargeRates()}}
	for _, f := range mutate {
		f(&n)
	}
	m, c, err := e.Service.CreateMerchant(context.Background(), n)
	if err != nil {
		e.T.Fatalf("onboard: %v", err)
	}
	return &Merchant{Merchant: m, Creds: c}
}

// WebhookSecretVersion is the version of merchant mid's signing secret
// in force now (paylink.WebhookConfig.CurrentSecret), which a rotation is
// made from; "" when it has none.
func (e *Env) WebhookSecretVersion(mid string) string {
	e.T.Helper()
	m, err := e.Service.Merchant(context.Background(), mid)
	if err != nil {
		e.T.Fatalf("merchant %s: %v", mid, err)
	}
	return m.Settings.Webhook.CurrentSecret()
}

// Response is a decoded JSON response.
type Response struct {
	Status int
	Body   map[string]any
	Raw    string
}

// Get follows a dotted path into the body ("purchase.status").
func (r Response) Get(path string) any {
	var cur any = r.Body
	for _, p := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	return cur
}

// Str is Get as a string ("" when absent or not a string; numbers as text).
func (r Response) Str(path string) string {
	switch v := r.Get(path).(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	}
	return ""
}

// Do sends a request with the merchant's API key (m may be nil for none)
// and decodes the JSON answer. body may be a string, []byte or a value to
// marshal.
func (e *Env) Do(method, path string, m *Merchant, body any) Response {
	e.T.Helper()
	return e.DoWith(method, path, m, body, nil)
}

// DoWith is Do that also hands the raw response (headers) to inspect,
// when set.
func (e *Env) DoWith(method, path string, m *Merchant, body any, inspect func(*http.Response)) Response {
	e.T.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			e.T.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, e.Server.URL+path, rd)
	if err != nil {
		e.T.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if m != nil {
		req.Header.Set("Authorization", "Bearer "+m.Creds.APIKey)
	}
	res, err := e.Server.Client().Do(req)
	if err != nil {
		e.T.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	if inspect != nil {
		inspect(res)
	}
	raw, _ := io.ReadAll(res.Body)
	out := Response{Status: res.StatusCode, Raw: string(raw)}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	dec.Decode(&out.Body)
	return out
}

// Raw sends a request written out in full (request line, headers and
// body, "\r\n" line ends) over a new connection, byte for byte, and
// returns the answer with its body read. It is for what Go's client
// would normalise or follow: a path with "//", a redirect, a body the
// test encodes itself.
func (e *Env) Raw(request string) (*http.Response, string) {
	e.T.Helper()
	conn, err := net.Dial("tcp", e.Server.Listener.Addr().String())
	if err != nil {
		e.T.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, request); err != nil {
		e.T.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		e.T.Fatalf("reading the answer to %q: %v", strings.SplitN(request, "\r\n", 2)[0], err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return res, string(raw)
}

// RawRequest writes out a request for Raw: method and target as sent,
// the merchant's API key (m may be nil), the headers given as
// name/value pairs, and body with its Content-Length.
func (e *Env) RawRequest(method, target string, m *Merchant, body string, headers ...string) string {
	var b strings.Builder
	b.WriteString(method + " " + target + " HTTP/1.1\r\nHost: " + e.Server.Listener.Addr().String() + "\r\nConnection: close\r\n")
	if m != nil {
		b.WriteString("Authorization: Bearer " + m.Creds.APIKey + "\r\n")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		b.WriteString(headers[i] + ": " + headers[i+1] + "\r\n")
	}
	b.WriteString("Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body)
	return b.String()
}

// Post is Do with POST.
func (e *Env) Post(path string, m *Merchant, body any) Response {
	e.T.Helper()
	return e.Do(http.MethodPost, path, m, body)
}

// TransactionToken obtains a fresh transaction token for m.
func (e *Env) TransactionToken(m *Merchant) string {
	e.T.Helper()
	r := e.Post("/v5/transaction_token", m, map[string]any{"company_token": m.Creds.CompanyToken})
	if r.Status != http.StatusOK {
		e.T.Fatalf("transaction token: %d %s", r.Status, r.Raw)
	}
	return r.Str("transaction_token")
}

// CardPurchase is a purchase body with a fresh transaction token, the
// given card number and amount (AUD), and a security code of the card's
// brand (4 digits on American Express, 3 on the others); mutate adjusts it.
func (e *Env) CardPurchase(m *Merchant, number, amount string, mutate ...func(map[string]any)) map[string]any {
	e.T.Helper()
	b := map[string]any{
		"token":    map[string]any{"company_token": m.Creds.CompanyToken, "transaction_token": e.TransactionToken(m)},
		"customer": map[string]any{"ip_address": "203.0.113.7", "timezone": "Australia/Sydney", "email": "jo@example.com"},
		"card": map[string]any{"number": number, "expiry_month": "12", "expiry_year": e.Clock.Now().Year()%100 + 3,
			"cvc": "123", "holder_name": "Jo Citizen"},
		"purchase": map[string]any{"amount": json.Number(amount), "currency": "AUD"},
	}
	if paylink.CVCLength(paylink.BrandOf(number)) == 4 {
		Set(b, "card.cvc", "1234")
	}
	for _, f := range mutate {
		f(b)
	}
	return b
}

// Set sets a dotted path in a request body, creating objects on the way.
func Set(b map[string]any, path string, v any) {
	parts := strings.Split(path, ".")
	cur := b
	for _, p := range parts[:len(parts)-1] {
		next, ok := cur[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			cur[p] = next
		}
		cur = next
	}
	cur[parts[len(parts)-1]] = v
}

// Delete removes a dotted path from a request body.
func Delete(b map[string]any, path string) {
	parts := strings.Split(path, ".")
	cur := b
	for _, p := range parts[:len(parts)-1] {
		next, ok := cur[p].(map[string]any)
		if !ok {
			return
		}
		cur = next
	}
	delete(cur, parts[len(parts)-1])
}
