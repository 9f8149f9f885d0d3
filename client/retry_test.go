package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/client"
	"github.com/paylink/paylink/internal/api"
	"github.com/paylink/paylink/internal/apitest"
)

// action is what the test proxy does with one request.
type action int

const (
	forward        action = iota // passes the request and paylink's answer on
	loseAnswer                   // passes the request on, waits for paylink's answer, then closes the connection without it
	cutAtOnce                    // passes the request on and closes the connection once paylink holds the key, the request still running
	cutBody                      // passes paylink's 200 on, cut half-way through its body
	unavailable                  // answers 503 with Retry-After: 1 itself, as a gateway would, passing nothing on
	badGateway                   // answers 502 itself, without Retry-After
	paidUnanswered               // passes the request on without its Idempotency-Key, then answers paylink's 503 "briefly unavailable", which releases the key, for paylink's answer
	inDoubt                      // passes the request on, the request still running, and answers paylink's 503 "cannot be told yet"
)

// proxy stands between a Client and a real paylink, the network where
// answers get lost: act decides what it does with the nth (from 1)
// request to a path, and it records the status of every answer paylink
// sent.
type proxy struct {
	*httptest.Server
	target string
	act    func(path string, n int) action
	held   func() bool // for cutAtOnce: paylink holds the key now
	mu     sync.Mutex
	count  map[string]int
	status map[string][]int
	wg     sync.WaitGroup // requests left running by cutAtOnce
}

func newProxy(t *testing.T, env *apitest.Env, act func(path string, n int) action) *proxy {
	p := &proxy{target: env.Server.URL, act: act, count: map[string]int{}, status: map[string][]int{}}
	p.Server = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(func() { p.Close(); p.wg.Wait() })
	return p
}

// attempts is how many requests to path reached the proxy.
func (p *proxy) attempts(path string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.count[path]
}

// wantAttempts fails t unless n requests to path reached p.
func wantAttempts(t *testing.T, p *proxy, path string, n int) {
	t.Helper()
	if got := p.attempts(path); got != n {
		t.Errorf("attempts at %s: got %d, want %d", path, got, n)
	}
}

// statuses are the statuses paylink answered requests to path with.
func (p *proxy) statuses(path string) []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]int(nil), p.status[path]...)
}

func (p *proxy) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	p.mu.Lock()
	p.count[r.URL.Path]++
	a := p.act(r.URL.Path, p.count[r.URL.Path])
	p.mu.Unlock()
	switch a {
	case unavailable:
		w.Header().Set("Retry-After", "1")
		http.Error(w, "upstream unavailable", http.StatusServiceUnavailable)
		return
	case badGateway:
		http.Error(w, "bad gateway", http.StatusBadGateway)
		return
	case cutAtOnce, inDoubt:
		p.wg.Go(func() { p.pass(r, body) })
		for !p.held() {
			time.Sleep(5 * time.Millisecond)
		}
		if a == inDoubt {
			answerAsPaylink(w, paylink.ErrCommitInDoubt)
			return
		}
		hangUp(w)
		return
	case paidUnanswered:
		r.Header.Del("Idempotency-Key")
		p.pass(r, body)
		answerAsPaylink(w, paylink.ErrUnavailable)
		return
	}
	res, data := p.pass(r, body)
	if res == nil {
		hangUp(w)
		return
	}
	switch a {
	case loseAnswer:
		hangUp(w)
	case cutBody:
		w.Header().Set("Content-Length", "1000000")
		w.WriteHeader(res.StatusCode)
		_, _ = w.Write(data[:len(data)/2])
		w.(http.Flusher).Flush()
		hangUp(w)
	default:
		for k, v := range res.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(res.StatusCode)
		_, _ = w.Write(data)
	}
}

// pass sends the request to paylink, whatever becomes of the client's
// connection, and records the answer's status.
func (p *proxy) pass(r *http.Request, body []byte) (*http.Response, []byte) {
	out, err := http.NewRequestWithContext(context.WithoutCancel(r.Context()), r.Method, p.target+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		return nil, nil
	}
	out.Header = r.Header.Clone()
	res, err := http.DefaultTransport.RoundTrip(out)
	if err != nil {
		return nil, nil
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	p.mu.Lock()
	p.status[r.URL.Path] = append(p.status[r.URL.Path], res.StatusCode)
	p.mu.Unlock()
	return res, data
}

// answerAsPaylink answers err as paylink's API does (its code, message
// and Retry-After), for the answers a test cannot get paylink to give:
// those of a database that stops at a COMMIT.
func answerAsPaylink(w http.ResponseWriter, err error) {
	e := paylink.AsError(err)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Retry-After", "1")
	w.WriteHeader(http.StatusServiceUnavailable)
	_ = json.NewEncoder(w).Encode(map[string]string{"response_code": e.Code, "response_message": e.Message,
		"error_code": e.Code, "error_message": e.Message})
}

// hangUp closes the client's connection without (the rest of) an answer.
func hangUp(w http.ResponseWriter) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err == nil {
		_ = conn.Close()
	}
}

// on is an act that does a to the first n requests to path and passes
// everything else on.
func on(path string, n int, a action) func(string, int) action {
	return func(p string, i int) action {
		if p == path && i <= n {
			return a
		}
		return forward
	}
}

// retryingClient is a client of m through p, with retries and short waits.
func retryingClient(p *proxy, m *apitest.Merchant, retries int) *client.Client {
	return client.New(p.URL, m.Creds.APIKey, m.Creds.CompanyToken,
		client.WithRetries(retries), client.WithRetryWaits(10*time.Millisecond, 100*time.Millisecond))
}

func retryPurchase(env *apitest.Env, invoice string) client.PurchaseRequest {
	return client.PurchaseRequest{
		Customer: client.Customer{IPAddress: "203.0.113.7", Timezone: "UTC"},
		Card:     &client.Card{Number: "4111111111111111", ExpiryMonth: "12", ExpiryYear: year(env), CVC: "123"},
		Purchase: client.PurchaseDetails{Amount: "7.00", Currency: "AUD", InvoiceNumber: invoice},
	}
}

// oneAuthorisation fails t unless the acquirer was asked to authorise
// exactly once.
func oneAuthorisation(t *testing.T, env *apitest.Env) {
	t.Helper()
	if got := env.Sandbox.Received(paylink.OpAuthorize); got != 1 {
		t.Errorf("authorisations: got %d, want 1", got)
	}
}

// cutWhileRunning is a proxy that closes the connection of the first
// purchase while paylink runs it, the acquirer taking delay to answer.
func cutWhileRunning(t *testing.T, env *apitest.Env, delay time.Duration) *proxy {
	env.Sandbox.SetDelay(delay)
	p := newProxy(t, env, on("/v5/purchase", 1, cutAtOnce))
	p.held = func() bool { return env.Sandbox.Received(paylink.OpAuthorize) > 0 }
	return p
}

// charges counts the merchant's charges in its ledger.
func charges(t *testing.T, env *apitest.Env, m *apitest.Merchant) int {
	t.Helper()
	c := client.New(env.Server.URL, m.Creds.APIKey, m.Creds.CompanyToken)
	page, err := c.BalanceTransactions(context.Background(), client.Page{Limit: 100})
	if err != nil {
		t.Fatalf("balance transactions: %v", err)
	}
	n := 0
	for _, bt := range page.Data {
		if bt.Type == "charge" {
			n++
		}
	}
	return n
}

// TestARetryReplaysAPurchaseWhoseAnswerWasLost: paylink charges, the
// connection closes before its answer reaches the client, and the
// client's retry (same body, same transaction token, same key: the
// caller's, or one it generated) gets the first answer replayed: one
// authorisation at the acquirer, one charge in the ledger, the same
// reference as a status look-up finds.
func TestARetryReplaysAPurchaseWhoseAnswerWasLost(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts []client.CallOption
	}{
		{"the caller's key", []client.CallOption{client.IdempotencyKey("lost-1")}},
		{"a generated key", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env := apitest.Start(t, apitest.Options{})
			m := env.Onboard()
			p := newProxy(t, env, on("/v5/purchase", 1, loseAnswer))
			c := retryingClient(p, m, 3)
			res, err := c.Purchase(context.Background(), retryPurchase(env, "LOST-1"), tt.opts...)
			if err != nil || res.Purchase.Status != client.StatusApproved || !res.Replayed {
				t.Fatalf("got %+v, %v; want the first attempt's approval replayed", res, err)
			}
			wantAttempts(t, p, "/v5/purchase", 2)
			wantAttempts(t, p, "/v5/transaction_token", 1) // no new token for the retry
			oneAuthorisation(t, env)
			if got := charges(t, env, m); got != 1 {
				t.Errorf("charges in the ledger: got %d, want 1", got)
			}
			st, err := c.PurchaseStatus(context.Background(), "LOST-1")
			if err != nil || st.PurchaseReference != res.Purchase.PurchaseReference {
				t.Errorf("status look-up: got %+v, %v; want %s", st, err, res.Purchase.PurchaseReference)
			}
		})
	}
}

// TestRetriesAreOffByDefault: without WithRetries a lost answer is the
// caller's error after one attempt, as before.
func TestRetriesAreOffByDefault(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	p := newProxy(t, env, on("/v5/purchase", 1, loseAnswer))
	c := client.New(p.URL, m.Creds.APIKey, m.Creds.CompanyToken)
	if _, err := c.Purchase(context.Background(), retryPurchase(env, "OFF-1")); err == nil {
		t.Fatal("got no error, want the lost answer's")
	}
	wantAttempts(t, p, "/v5/purchase", 1)
}

// TestRetriesAreBounded: a gateway that answers 502 to everything gets
// the first attempt and n retries, and the caller its last answer.
func TestRetriesAreBounded(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	p := newProxy(t, env, on("/v5/balance", 1000, badGateway))
	_, err := retryingClient(p, m, 2).Balances(context.Background())
	var e *client.Error
	if !errors.As(err, &e) || e.HTTPStatus != http.StatusBadGateway || !strings.Contains(err.Error(), "after 3 attempts") {
		t.Errorf("got %v, want the 502 after 3 attempts", err)
	}
	wantAttempts(t, p, "/v5/balance", 3)
}

// TestA503IsRetriedAfterItsRetryAfter: a 503 is retried once its
// Retry-After has passed, and the purchase is made once.
func TestA503IsRetriedAfterItsRetryAfter(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	p := newProxy(t, env, on("/v5/purchase", 1, unavailable))
	start := time.Now()
	res, err := retryingClient(p, m, 3).Purchase(context.Background(), retryPurchase(env, "U-1"))
	if err != nil || res.Purchase.Status != client.StatusApproved || res.Replayed {
		t.Fatalf("got %+v, %v; want an approval", res, err)
	}
	if waited := time.Since(start); waited < time.Second {
		t.Errorf("retried after %v, before the Retry-After of 1 s", waited)
	}
	wantAttempts(t, p, "/v5/purchase", 2)
}

// TestA429IsRetriedAfterItsRetryAfter: paylink's rate limit answers the
// purchase 429 with Retry-After; the retry after it pays.
func TestA429IsRetriedAfterItsRetryAfter(t *testing.T) {
	env := apitest.Start(t, apitest.Options{API: []api.Option{api.WithRateLimit(1, 1)}})
	m := env.Onboard()
	p := newProxy(t, env, func(string, int) action { return forward })
	res, err := retryingClient(p, m, 3).Purchase(context.Background(), retryPurchase(env, "RL-1"))
	if err != nil || res.Purchase.Status != client.StatusApproved {
		t.Fatalf("got %+v, %v; want an approval", res, err)
	}
	got := p.statuses("/v5/purchase")
	if len(got) < 2 || got[0] != http.StatusTooManyRequests || got[len(got)-1] != http.StatusOK {
		t.Errorf("purchase answers: got %v, want 429 then 200", got)
	}
	oneAuthorisation(t, env)
}

// TestARetryWaitsForAKeyStillInProgress: the connection closes while
// paylink still runs the purchase; the retry is told the key is still in
// progress, waits, and gets the purchase's answer once it is done.
func TestARetryWaitsForAKeyStillInProgress(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	p := cutWhileRunning(t, env, 500*time.Millisecond)
	res, err := retryingClient(p, m, 30).Purchase(context.Background(), retryPurchase(env, "IP-1"))
	if err != nil || res.Purchase.Status != client.StatusApproved || !res.Replayed {
		t.Fatalf("got %+v, %v; want the first attempt's approval replayed", res, err)
	}
	if got := p.statuses("/v5/purchase"); !slices.Contains(got, http.StatusConflict) {
		t.Errorf("purchase answers: got %v, want a 409 in progress among them", got)
	}
	oneAuthorisation(t, env)
}

// TestANeverFinishedKeyIsNotRetried: another process's attempt under the
// key is still unfinished past the key's lock; a call under that key
// with a token of its own is told it never finished and may have
// completed, once: the caller must look the payment up.
func TestANeverFinishedKeyIsNotRetried(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	p := cutWhileRunning(t, env, time.Second)
	key := client.IdempotencyKey("nf-1")
	first := client.New(p.URL, m.Creds.APIKey, m.Creds.CompanyToken)
	if _, err := first.Purchase(context.Background(), retryPurchase(env, "NF-1"), key); err == nil {
		t.Fatal("the first attempt got its answer")
	}
	env.Clock.Advance(paylink.IdempotencyLock + time.Minute)
	before := p.attempts("/v5/purchase") // net/http resends a keyed request itself when a reused connection closes
	_, err := retryingClient(p, m, 5).Purchase(context.Background(), retryPurchase(env, "NF-1"), key)
	if !client.IsCode(err, client.CodeIdempotencyConflict) || !strings.Contains(err.Error(), "never finished") {
		t.Fatalf("got %v, want the 409 never finished", err)
	}
	if got := p.attempts("/v5/purchase") - before; got != 1 {
		t.Errorf("attempts: got %d, want 1", got)
	}
}

// TestReadsAreRetried: look-ups, a GET and a POST, whose connection
// closed before their answer are made again.
func TestReadsAreRetried(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	p := newProxy(t, env, func(path string, n int) action {
		if n == 1 && (path == "/v5/balance" || strings.HasPrefix(path, "/v5/purchase/")) {
			return loseAnswer
		}
		return forward
	})
	c := retryingClient(p, m, 2)
	if _, err := c.Balances(context.Background()); err != nil {
		t.Errorf("balances: %v", err)
	}
	if _, err := c.PurchaseStatus(context.Background(), "NONE"); !client.IsCode(err, client.CodeNotFound) {
		t.Errorf("status look-up: got %v, want not_found (a 4xx is not retried)", err)
	}
	wantAttempts(t, p, "/v5/balance", 2)
	wantAttempts(t, p, "/v5/purchase/NONE", 2)
}

// TestACutSuccessIsNotRetried: a 200 whose body is cut is the caller's
// error, never retried: the purchase may be made, and was.
func TestACutSuccessIsNotRetried(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	p := newProxy(t, env, on("/v5/purchase", 1, cutBody))
	if _, err := retryingClient(p, m, 3).Purchase(context.Background(), retryPurchase(env, "CUT-1")); err == nil {
		t.Fatal("got no error, want the cut body's")
	}
	wantAttempts(t, p, "/v5/purchase", 1)
}

// TestRetriesStopWithTheContext: a call waiting to retry returns when
// its context is cancelled, with the context's error.
func TestRetriesStopWithTheContext(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := newProxy(t, env, func(path string, n int) action {
		if path == "/v5/balance" {
			time.AfterFunc(100*time.Millisecond, cancel) // once the 502 is back, most likely
			return badGateway
		}
		return forward
	})
	c := client.New(p.URL, m.Creds.APIKey, m.Creds.CompanyToken, client.WithRetries(5), client.WithRetryWaits(10*time.Second, 10*time.Second))
	if _, err := c.Balances(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
	wantAttempts(t, p, "/v5/balance", 1)
}

// TestGivingUpKeepsAnInDoubtAnswer: the first attempt is answered that
// whether it took effect cannot be told yet (paylink's answer when its
// database's answer to a COMMIT is lost and cannot be read back, made
// here by the proxy from paylink's own error: this test's purchase, kept
// running by a slow acquirer, stands in for the link or card token it
// concerns), and the only retry is told the key is still in progress.
// The call's error must keep the first answer's warning: a caller told
// only "retry later" would retry under a new key and make a second one.
func TestGivingUpKeepsAnInDoubtAnswer(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	env.Sandbox.SetDelay(3 * time.Second)
	p := newProxy(t, env, on("/v5/purchase", 1, inDoubt))
	p.held = func() bool { return env.Sandbox.Received(paylink.OpAuthorize) > 0 }
	_, err := retryingClient(p, m, 1).Purchase(context.Background(), retryPurchase(env, "DOUBT-1"))
	var last *client.Error
	if !errors.As(err, &last) || last.Code != client.CodeIdempotencyConflict {
		t.Fatalf("got %v, want the last answer, 409 still in progress, first", err)
	}
	if !errors.Is(err, client.ErrInDoubt) || !client.IsCode(err, client.CodeServiceUnavailable) ||
		!strings.Contains(err.Error(), "do not send it again under a new Idempotency-Key") {
		t.Errorf("got %v, want it to keep the first answer, 503 cannot be told yet", err)
	}
	wantAttempts(t, p, "/v5/purchase", 2)
}

// TestABlankKeyIsNoKey: an Idempotency-Key of spaces is no key to
// paylink (HTTP drops the spaces around a header's value; errors.md), so
// the client treats it as none: a retried write gets a generated key
// (one payment link for one call whose first answer was lost), and two
// purchases sent with it are two requests, each with its own token.
func TestABlankKeyIsNoKey(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	p := newProxy(t, env, on("/v5/payment-links", 1, loseAnswer))
	c := retryingClient(p, m, 3)
	blank := client.IdempotencyKey(" \t ")
	ctx := context.Background()
	if _, err := c.CreatePaymentLink(ctx, client.PaymentLinkRequest{Amount: "5", Currency: "AUD", MerchantReference: "BLANK-1"}, blank); err != nil {
		t.Fatalf("payment link: %v", err)
	}
	var links int
	if err := env.WriterDB(t).QueryRow(`SELECT count(*) FROM payment_links`).Scan(&links); err != nil {
		t.Fatal(err)
	}
	if links != 1 {
		t.Errorf("payment links made by one call: got %d, want 1", links)
	}
	for _, invoice := range []string{"BLANK-2", "BLANK-3"} {
		if res, err := c.Purchase(ctx, retryPurchase(env, invoice), blank); err != nil || res.Purchase.Status != client.StatusApproved {
			t.Errorf("purchase %s under a blank key: got %+v, %v; want approved", invoice, res, err)
		}
	}
}
