// Package client is a Go client for the paylink /v5 API.
//
//	c := client.New("https://pay.example.com", apiKey, companyToken)
//	res, err := c.Purchase(ctx, client.PurchaseRequest{
//		Customer: client.Customer{IPAddress: "203.0.113.7", Timezone: "Australia/Sydney"},
//		Card:     &client.Card{Number: "4111111111111111", ExpiryMonth: "12", ExpiryYear: "29", CVC: "123"},
//		Purchase: client.PurchaseDetails{Amount: "10.50", Currency: "AUD"},
//	})
//
// Amounts are decimal strings in requests ("10.50") and json.Number in
// most responses (Amount where paylink sends a decimal string, and
// strings in the ledger's types), so no amount ever passes through a
// float. Operations that
// need a transaction token fetch one automatically. A declined or failed
// payment is a result (check Purchase.Status), not an error; request-level
// failures are *Error, which carries the answer's Retry-After (429, 503)
// and X-Request-Id. Every result but CardRecord (a look-up without a
// response code) and SettlementReport's CSV (WriteSettlementReport
// returns its Result) embeds Result, whose Replayed says the answer is the
// replay of an earlier call under the same IdempotencyKey. Every call
// takes CallOptions: IdempotencyKey on the calls that change something
// (look-ups drop it, so that they always read the current state),
// RequestID (an X-Request-Id of the caller's own, echoed in the answer's
// RequestID and in paylink's logs) on any.
//
// Retries are off by default: a caller with a retry loop of its own
// would multiply its attempts, and a call without an IdempotencyKey would
// now carry a generated one. WithRetries(n) retries a call up to n times,
// after a backoff with jitter (WithRetryWaits) or the answer's
// Retry-After (up to a minute), until its ctx ends, and only where a
// retry cannot do the call twice:
//
//   - a call that changes nothing (a GET, a look-up, a surcharge or fee
//     preview, a transaction token), after no answer (a connection
//     refused, reset or closed, a timeout before the answer), a 429, or a
//     502, 503 or 504;
//   - a call that changes something (a purchase, capture, cancel, refund,
//     direct debit, payment link, card token, 3-D Secure completion), after
//     the same, and after a 409 saying its Idempotency-Key's first request
//     is still in progress; always under one Idempotency-Key with the same
//     body, its transaction token included, so paylink runs it at most once
//     and replays its answer to the retries. A call sent without an
//     IdempotencyKey gets a generated one ("paylink-go-" and 26 letters),
//     the same for all its attempts and named in the error when they all
//     fail; pass a key of your own to be able to retry later yourself.
//
// Never retried: any other 4xx (paylink's answer to the request); a 500 (a
// bug, which a retry would only meet again); a 409 saying an earlier
// request under the key never finished and may have completed (look the
// payment up first); operation_in_progress (another operation on the
// payment: retrying would run this one after it, a second refund, say);
// and a 2xx whose body could not be read (the call did what it was
// asked: the caller must know). No retry fetches a new transaction token:
// under a key whose first attempt charged and whose answer was lost, a
// new token could charge again. (Go's net/http resends a request that
// carries an Idempotency-Key once by itself when a reused connection
// closes before any answer, retries on or off: the same request, which
// paylink replays.)
//
// An answer lost as paylink's database stopped after the COMMIT (a 503
// that releases the key, then the retry refused transaction_token_used,
// the token spent by the first attempt) is not the call's error when the
// client fetched the token and only this request ever sent it: the
// call's own retry, or the caller repeating the same request (same path,
// same body) under the same IdempotencyKey. Nobody else had that token,
// so the operation the refusal names is this request's, and the call
// looks it up (PurchaseStatus for a purchase, capture, cancel or direct
// debit; RefundStatus for a refund) and returns it with Result.Recovered
// and Replayed set, the response code its answer had (declined for a
// decline, not the look-up's success; pending for anything found
// PENDING, a direct debit too, whose answer said success when the bank
// had lodged it: the look-up cannot tell that from a debit whose bank
// has not answered), only the look-up's fields filled in. A token the
// caller passed in Tokens, or one the client also sent with another
// request under the same key (a key reused for another
// order after the 503 released it, or racing calls with different
// bodies), may have been spent by that other request: the refusal is the
// call's error, and the caller looks the operation up. So is an attempt
// that awaits its 3-D Secure challenge: the challenge's address was in
// the lost answer alone.
//
// A call that gives up names its last answer and, when an earlier
// attempt was answered that whether it took effect cannot be told yet (a
// payment link or card token whose COMMIT's answer was lost), wraps that
// answer too: errors.Is(err, ErrInDoubt) and IsCode see it, and the last
// answer (409 "still in progress", say) does not mean nothing was made.
// Look for what it would have made before sending it under a new key.
//
// Statuses and response codes are constants (StatusApproved,
// CodeNotFound) to compare the responses' string fields with; the
// fields stay strings, so a status or code paylink adds later still
// decodes.
//
// A webhook receiver checks paylink's signatures with a WebhookVerifier
// (several secrets during a rotation, a timestamp tolerance, errors to
// test with errors.Is) and reads the payload as a Webhook.
//
// Formatting or logging a request, a Card, Tokens, a BankAccount, the
// Client or a WebhookVerifier (fmt's verbs, log/slog's text and JSON
// handlers) shows no card or account number, security code, API key,
// company or transaction token, card token sent to pay, or signing
// secret: a number its last four digits, the rest "[redacted]". What is
// sent is unchanged. Results show the card tokens paylink answered with
// (an identifier, docs/lifecycle.md, not a credential); a nil pointer to
// one of these types logged with log/slog shows slog's note of a panic.
// log/slog asks only the value logged itself for its LogValue: a slice,
// map or struct of requests or cards given to its JSON handler is encoded
// as sent, card numbers included, so log them one at a time (or with
// %+v, which hides them at any depth).
//
// The package is github.com/paylink/paylink/client (go get
// github.com/paylink/paylink/client): it imports nothing outside the
// standard library, but lives in paylink's module, so a program using it
// is built with the Go version that module's go.mod names.
package client

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Client calls one merchant's paylink API. It is safe for concurrent use.
type Client struct {
	baseURL      string
	apiKey       string
	companyToken string
	http         *http.Client
	keyed        keyedTokens // transaction tokens by idempotency key
	retries      int         // retries after a call's first attempt (WithRetries)
	firstWait    time.Duration
	longestWait  time.Duration
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient sets the HTTP client (default, and for nil: one with a
// timeout of DefaultTimeout).
func WithHTTPClient(h *http.Client) Option {
	return func(c *Client) {
		if h != nil {
			c.http = h
		}
	}
}

// DefaultTimeout bounds a call made with the default HTTP client. It is
// longer than paylink takes to answer any request (at most 90 seconds:
// a purchase waits up to a minute for its processor), so that a slow
// payment's answer arrives rather than a timeout that leaves its outcome
// to be looked up.
const DefaultTimeout = 2 * time.Minute

// New returns a client for baseURL (e.g. "https://pay.example.com").
func New(baseURL, apiKey, companyToken string, opts ...Option) *Client {
	c := &Client{baseURL: strings.TrimRight(baseURL, "/"), apiKey: apiKey, companyToken: companyToken,
		http: &http.Client{Timeout: DefaultTimeout}, firstWait: defaultFirstWait, longestWait: defaultLongestWait}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Error is a request-level failure (any non-2xx response).
type Error struct {
	HTTPStatus int
	Code       string            // stable response code, e.g. "invalid_request"
	Message    string            // human-readable explanation
	Fields     map[string]string // field path -> problem, for validation errors
	// RetryAfter is how long paylink asks the caller to wait before
	// retrying (Retry-After on a 429 rate_limited or a 503
	// service_unavailable); 0 when the answer did not say.
	RetryAfter time.Duration
	// RequestID is the answer's X-Request-Id: quote it when asking for
	// support, or find the request in paylink's logs under it.
	RequestID string
	// Replayed is true when the answer is the replay of an earlier call
	// under the same IdempotencyKey (Idempotent-Replayed: true): a
	// refusal is remembered like a success, so this call did nothing.
	Replayed bool
}

// Error is "paylink: STATUS CODE: MESSAGE".
func (e *Error) Error() string {
	return fmt.Sprintf("paylink: %d %s: %s", e.HTTPStatus, e.Code, e.Message)
}

// IsCode reports whether err is, or wraps, an *Error with the given
// response code: the last answer of a call, or an earlier answer its
// error keeps (see ErrInDoubt).
func IsCode(err error, code string) bool {
	if e, ok := err.(*Error); ok && e.Code == code {
		return true
	}
	switch u := err.(type) {
	case interface{ Unwrap() []error }:
		return slices.ContainsFunc(u.Unwrap(), func(err error) bool { return IsCode(err, code) })
	case interface{ Unwrap() error }:
		return IsCode(u.Unwrap(), code)
	}
	return false
}

// ErrInDoubt matches (errors.Is) paylink's 503 saying that whether a
// write took effect cannot be told yet: its database's answer to the
// COMMIT was lost, so it may have made what it was asked to (a payment
// link, a card token). A call's error matches it when any of its
// attempts was answered so, the last or an earlier one (whose answer
// the error then wraps besides the last: a 409 "still in progress"
// under the key does not mean that nothing was made). Do not send the
// call again under a new Idempotency-Key: look for what it would have
// made first, or retry under the same key (the generated one is named
// in the error).
var ErrInDoubt = errors.New("paylink: whether the request took effect cannot be told yet")

// Is reports whether e is the answer that ErrInDoubt stands for.
func (e *Error) Is(target error) bool { return target == ErrInDoubt && e.inDoubt() }

// inDoubt reports whether e is paylink's 503 for a write whose effect
// cannot be told. It shares its code with every 503 and is told apart
// by its words, which send the caller to look before using a new key.
func (e *Error) inDoubt() bool {
	return e.HTTPStatus == http.StatusServiceUnavailable && e.Code == CodeServiceUnavailable &&
		strings.Contains(e.Message, "do not send it again under a new Idempotency-Key")
}

// CallOption adjusts one call.
type CallOption func(*http.Request)

// IdempotencyKey makes a call safe to retry: paylink runs it at most once
// per key and replays the first response to retries. A money-moving call
// retried under the same key from the same Client reuses the transaction
// token fetched for its first attempt, so the retry is the same request;
// a retry from another process, with a token of its own, gets the first
// response too once paylink has finished the first attempt (paylink
// leaves the token out of a finished key's comparison), and a 409 while
// it has not. The one exception is an answer lost as paylink's database
// stopped after the COMMIT (a 503 that releases the key): only the same
// token then stops a second charge, and the Client remembers it in this
// process alone (for 24 hours, its 10,000 latest keys). After such a 503,
// a retry from another process or after a restart must look the payment
// up first (PurchaseStatus by invoice number), not send it again.
// That token lives only as long as paylink's token lifetime (5 minutes by
// default, --transaction-token-ttl): when no attempt reached paylink
// before then, a retry is refused with ErrReplaceIdempotencyKey, and the
// call needs a new key, after checking the payment's status
// (PurchaseStatus by invoice number) in case an attempt did run.
func IdempotencyKey(key string) CallOption {
	return func(r *http.Request) { r.Header.Set("Idempotency-Key", key) }
}

// ErrReplaceIdempotencyKey marks a money-moving call refused because the
// transaction token remembered under its IdempotencyKey has outlived
// paylink's token lifetime (transaction_token_expired, or
// transaction_token_invalid once paylink has cleaned it up). Nothing ran
// under the key, and paylink now remembers the refusal under it, so
// retrying under that key can never pay: check the payment's status
// (PurchaseStatus), then retry under a new key. The error also wraps the
// *Error paylink answered.
var ErrReplaceIdempotencyKey = errors.New("paylink: this Idempotency-Key cannot be retried")

// RequestID sends the caller's own X-Request-Id: paylink logs the request
// under it and answers with it, so one id follows an order through both
// systems' logs. paylink keeps an id of 1 to 64 characters of
// [A-Za-z0-9._-] and replaces any other with one it makes up, so the call
// refuses any other before sending anything. paylink also replaces an id
// that holds a card number (even grouped by "." or "_") or a paylink
// secret: the answer's RequestID then differs from id.
func RequestID(id string) CallOption {
	return func(r *http.Request) { r.Header.Set("X-Request-Id", id) }
}

// checkRequestID refuses an X-Request-Id paylink would replace.
func checkRequestID(h http.Header) error {
	ids, ok := h["X-Request-Id"]
	if !ok {
		return nil
	}
	for _, id := range ids {
		if len(id) < 1 || len(id) > 64 || strings.Trim(id, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") != "" {
			return fmt.Errorf("paylink: X-Request-Id %q: want 1 to 64 characters of [A-Za-z0-9._-] (paylink would replace it)", id)
		}
	}
	return nil
}

// Result is the outcome fields every response carries, and what the
// answer's headers say about it.
type Result struct {
	ResponseCode    string `json:"response_code"`
	ResponseMessage string `json:"response_message"`
	// RequestID is the answer's X-Request-Id: quote it when asking for
	// support, or find the request in paylink's logs under it.
	RequestID string `json:"-"`
	// Replayed is true when the answer is the replay of an earlier call
	// under the same IdempotencyKey (Idempotent-Replayed: true): the
	// first call's outcome, not a second one. It is also true when
	// Recovered is.
	Replayed bool `json:"-"`
	// Recovered is true when a money-moving call's answer was lost and
	// paylink then refused its transaction token, fetched by the client
	// for this call, as spent by an operation: this call's earlier
	// attempt, which the client looked up (PurchaseStatus, or
	// RefundStatus for a refund) and returns. Only what the look-up
	// tells is filled in: the response code (the outcome's, as the lost
	// answer had it, but CodePending for any PENDING, a direct debit's
	// too), status, references,
	// invoice number, time, currency and amount (for a purchase,
	// capture, cancel or direct debit, Purchase.TotalAmount: the
	// look-up's amount is the total; Amount and the surcharge or fee
	// stay empty), no card, bank account or customer.
	Recovered bool `json:"-"`
}

// fromHeaders fills in what the answer's headers say. The response types
// that embed Result get it through the pointer's method set.
func (r *Result) fromHeaders(h http.Header) {
	r.RequestID = h.Get("X-Request-Id")
	r.Replayed = replayed(h)
}

// headed is a response that reads the answer's headers.
type headed interface{ fromHeaders(http.Header) }

// replayed reports whether h marks an idempotent replay.
func replayed(h http.Header) bool { return h.Get("Idempotent-Replayed") == "true" }

// post sends body as JSON to path and decodes the answer into out; e
// says what the call changes (when it may be retried). The body is
// encoded once: every attempt sends the same bytes.
func (c *Client) post(ctx context.Context, e effect, path string, body, out any, opts ...CallOption) error {
	raw, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("paylink: encode request: %w", err)
	}
	data, h, err := c.send(ctx, e, http.MethodPost, path, raw, opts)
	if err != nil {
		return err
	}
	return decodeAnswer(data, h, out)
}

// decodeAnswer decodes a JSON answer into out and, when out reads them,
// its headers.
func decodeAnswer(data []byte, h http.Header, out any) error {
	if err := decodeInto(data, out); err != nil {
		return err
	}
	if o, ok := out.(headed); ok {
		o.fromHeaders(h)
	}
	return nil
}

// maxAnswer bounds a JSON answer read into memory: far above any page
// or result paylink sends, and an error when exceeded, never a cut body.
const maxAnswer = 4 << 20

// send makes a request (retried as openRetrying says) and returns the
// body (at most maxAnswer bytes) and headers of a 2xx answer, or the
// answer's *Error. A 2xx answer whose body cannot be read is an error,
// never retried: the call may have done what it was asked.
func (c *Client) send(ctx context.Context, e effect, method, path string, body []byte, opts []CallOption) ([]byte, http.Header, error) {
	res, err := c.openRetrying(ctx, e, method, path, body, opts)
	if err != nil {
		return nil, nil, err
	}
	defer res.Body.Close()
	data, err := readAtMost(res.Body, maxAnswer, "response")
	if err != nil {
		return nil, nil, fmt.Errorf("paylink: %s %s: %w", method, path, err)
	}
	return data, res.Header, nil
}

// open makes one request and returns a 2xx answer, its body unread (the
// caller closes it), the answer's *Error, or a *noAnswer when the
// request got none for a reason that may pass.
func (c *Client) open(ctx context.Context, method, path string, body []byte, opts []CallOption) (*http.Response, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.baseURL+path, r)
	if err != nil {
		return nil, fmt.Errorf("paylink: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+c.apiKey)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	for _, o := range opts {
		o(req)
	}
	if err := checkRequestID(req.Header); err != nil {
		return nil, err
	}
	res, err := c.http.Do(req)
	if err != nil {
		err = fmt.Errorf("paylink: %s %s: %w", method, path, err)
		if ctx.Err() == nil && transient(err) {
			err = &noAnswer{err: err}
		}
		return nil, err
	}
	if res.StatusCode/100 != 2 {
		defer res.Body.Close()
		// An error body is small; a cut one still has its headers.
		data, _ := io.ReadAll(io.LimitReader(res.Body, maxAnswer))
		return nil, decodeError(res.StatusCode, res.Header, data)
	}
	return res, nil
}

// readAtMost reads r whole, or fails when it holds more than limit
// bytes; what names r in the error ("response").
func readAtMost(r io.Reader, limit int64, what string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s larger than %d bytes", what, limit)
	}
	return data, nil
}

// decodeInto decodes a JSON answer, numbers as json.Number.
func decodeInto(data []byte, out any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(out); err != nil {
		return fmt.Errorf("paylink: decode response: %w", err)
	}
	return nil
}

// lookUp posts a look-up (a read the spec makes a POST) without an
// Idempotency-Key, whatever opts carry: under one, paylink would replay
// the first answer for a day instead of reading the state again.
func lookUp[T any](ctx context.Context, c *Client, path string, body any, opts []CallOption) (*T, error) {
	return request[T](ctx, c, reads, path, body, append(opts[:len(opts):len(opts)], withoutIdempotencyKey)...)
}

// withoutIdempotencyKey removes the Idempotency-Key the options before it set.
func withoutIdempotencyKey(r *http.Request) { r.Header.Del("Idempotency-Key") }

// call posts body to path, a call that changes something, and returns
// the decoded answer.
func call[T any](ctx context.Context, c *Client, path string, body any, opts ...CallOption) (*T, error) {
	return request[T](ctx, c, writes, path, body, opts...)
}

// request posts body to path, a call with effect e, and returns the
// decoded answer.
func request[T any](ctx context.Context, c *Client, e effect, path string, body any, opts ...CallOption) (*T, error) {
	var out T
	if err := c.post(ctx, e, path, body, &out, opts...); err != nil {
		return nil, err
	}
	return &out, nil
}

// decodeError is the *Error of a non-2xx answer: its body's code,
// message and fields (http_error when the body is not paylink's), and
// what its headers say.
func decodeError(status int, h http.Header, data []byte) error {
	var body struct {
		ErrorCode    string            `json:"error_code"`
		ErrorMessage string            `json:"error_message"`
		Fields       map[string]string `json:"fields"`
	}
	e := &Error{HTTPStatus: status, Code: CodeHTTPError, Message: http.StatusText(status),
		RetryAfter: retryAfter(h.Get("Retry-After"), time.Now()), RequestID: h.Get("X-Request-Id"), Replayed: replayed(h)}
	if json.Unmarshal(data, &body) == nil && body.ErrorCode != "" {
		e.Code, e.Message, e.Fields = body.ErrorCode, body.ErrorMessage, body.Fields
	}
	return e
}

// retryAfter reads a Retry-After value, seconds (what paylink sends) or
// an HTTP date, as a wait from now, at most a day (an absurd count of
// seconds would overflow a Duration); 0 when absent, unreadable or past.
func retryAfter(v string, now time.Time) time.Duration {
	const maxRetryAfter = int(24 * time.Hour / time.Second)
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil {
		return time.Duration(min(max(n, 0), maxRetryAfter)) * time.Second
	}
	if at, err := http.ParseTime(v); err == nil && at.After(now) {
		return at.Sub(now)
	}
	return 0
}

// ref escapes a reference for use in a path.
func ref(s string) string { return url.PathEscape(s) }

// TransactionToken obtains a single-use transaction token. An
// IdempotencyKey among opts is not sent: under it paylink would answer
// every later fetch with the token it issued first, and the money call
// that spends the token under the same key would be another request with
// that key (409 idempotency_key_conflict).
func (c *Client) TransactionToken(ctx context.Context, opts ...CallOption) (string, error) {
	var out struct {
		Result
		TransactionToken string `json:"transaction_token"`
	}
	opts = append(opts[:len(opts):len(opts)], withoutIdempotencyKey)
	if err := c.post(ctx, reads, "/v5/transaction_token", map[string]string{"company_token": c.companyToken}, &out, opts...); err != nil {
		return "", err
	}
	return out.TransactionToken, nil
}

// Tokens is the token object of money-moving calls. Leave it empty and
// the client fills it in, fetching a fresh transaction token.
type Tokens struct {
	CompanyToken     string `json:"company_token"`
	TransactionToken string `json:"transaction_token"`
}

// spend posts a money-moving request, body, whose token object is t: it
// fills t in, and when paylink refuses a token remembered from an
// earlier attempt under the call's key as expired, forgets it and says
// the key must be replaced (ErrReplaceIdempotencyKey). When paylink
// refuses as spent a token the client fetched and only this request
// sent (spentByThisRequest), the spender is this request's earlier
// attempt, which find looks up (spentByThisCall). A token the caller
// passed, or one also sent with another request under the key, is the
// caller's to account for: that request's payment is not this one's
// result.
func spend[T any](ctx context.Context, c *Client, path string, t *Tokens, body any, find finder[T], opts []CallOption) (*T, error) {
	key, source, err := c.fill(ctx, t, opts)
	if err != nil {
		return nil, err
	}
	sends, sig, encoded := c.noteSent(key, source, path, t.TransactionToken, body)
	if encoded != nil {
		body = encoded // sent as signed, not encoded a second time
	}
	out, err := call[T](ctx, c, path, body, opts...)
	if spentBy(err) != "" && c.spentByThisRequest(key, source, sends, sig) {
		return spentByThisCall(ctx, c, err, find, opts)
	}
	if source == tokenRemembered && (IsCode(err, "transaction_token_expired") || IsCode(err, "transaction_token_invalid")) {
		c.keyed.drop(key, t.TransactionToken)
		return nil, fmt.Errorf("%w: the transaction token fetched for its first attempt has expired, so nothing ran under it "+
			"and paylink now keeps this refusal under it: check the payment's status, then retry under a new Idempotency-Key: %w",
			ErrReplaceIdempotencyKey, err)
	}
	return out, err
}

// noteSent records, before a call under an idempotency key sends its
// token with body to path, that the token went out with this request,
// and returns the record of the requests that sent that token (nil when
// nothing was recorded: no key, or the caller's own token), this
// request's signature in it, and the body as encoded for it, which the
// call sends.
func (c *Client) noteSent(key string, source tokenSource, path, token string, body any) (*tokenSends, string, json.RawMessage) {
	if key == "" || source == tokenPassed {
		return nil, "", nil
	}
	data, err := json.Marshal(body)
	if err != nil {
		return nil, "", nil // the call itself fails to encode it
	}
	sum := sha256.Sum256(append([]byte(path+"\n"), data...))
	sig := string(sum[:])
	return c.keyed.sentWith(key, token, sig), sig, data
}

// spentByThisRequest says whether the operation that spent a call's
// token is this request's earlier attempt: a token fetched for a call
// without a key was sent by that call alone; one fetched or remembered
// under a key, when every request that sent it, in sends, was this one
// (same path, same body: signature sig). The call holds sends itself,
// so the answer stands when the key's entry has since left the cache
// (a later call under the key fetches another token). A token the
// caller passed may have been sent by anyone.
func (c *Client) spentByThisRequest(key string, source tokenSource, sends *tokenSends, sig string) bool {
	switch {
	case source == tokenPassed:
		return false
	case key == "":
		return source == tokenFetched
	}
	return c.keyed.onlySentWith(sends, sig)
}

// tokenSource says where the transaction token a call sent came from.
type tokenSource int

const (
	tokenPassed     tokenSource = iota // the caller's own
	tokenRemembered                    // fetched for an earlier call under the key
	tokenFetched                       // fetched by this call, and sent by it alone
)

// fill completes t with the company token and a fresh transaction token,
// and returns the call's idempotency key and where the token came from.
// Under an IdempotencyKey it reuses the token fetched for that key, so a
// retry sends the same body and gets the first response replayed (a new
// token would make it another request: 409 idempotency_key_conflict).
func (c *Client) fill(ctx context.Context, t *Tokens, opts []CallOption) (key string, source tokenSource, err error) {
	if t.CompanyToken == "" {
		t.CompanyToken = c.companyToken
	}
	if t.TransactionToken != "" {
		return "", tokenPassed, nil
	}
	key = idempotencyKeyOf(opts)
	if tok, ok := c.keyed.get(key); ok {
		t.TransactionToken = tok
		return key, tokenRemembered, nil
	}
	// The fetch carries the call's options (its RequestID: one id for
	// the whole payment); TransactionToken leaves its key out.
	tok, err := c.TransactionToken(ctx, opts...)
	if err != nil {
		return "", tokenPassed, err
	}
	// Calls racing under one key each fetch a token, but all send the
	// one stored first: one request, which paylink runs once.
	t.TransactionToken = c.keyed.putIfAbsent(key, tok, time.Now())
	if t.TransactionToken != tok {
		return key, tokenRemembered, nil
	}
	return key, tokenFetched, nil
}

// idempotencyKeyOf is the Idempotency-Key that opts set as paylink reads
// it, "" for none: HTTP drops the spaces and tabs around a header's
// value, so a blank key is no key (errors.md) and " k " is "k".
func idempotencyKeyOf(opts []CallOption) string {
	probe := &http.Request{Header: http.Header{}}
	for _, o := range opts {
		o(probe)
	}
	return strings.Trim(probe.Header.Get("Idempotency-Key"), " \t")
}

// keyedTokens remembers the transaction token fetched for each
// idempotency key for as long as paylink remembers the key (24 hours),
// at most maxKeyedTokens of them.
type keyedTokens struct {
	mu    sync.Mutex
	byKey map[string]keyedToken
}

// keyedToken is a remembered token, when it was fetched, and the
// requests it was sent with.
type keyedToken struct {
	token string
	at    time.Time
	sends *tokenSends
}

// tokenSends are the signatures of the requests a remembered token was
// sent with (see Client.noteSent), guarded by keyedTokens.mu. Two
// different requests are enough to say the token was not one request's:
// no more is kept.
type tokenSends struct{ sigs []string }

const (
	keyedTokenLife = 24 * time.Hour
	maxKeyedTokens = 10000
)

func (k *keyedTokens) get(key string) (string, bool) {
	if key == "" {
		return "", false
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	e, ok := k.byKey[key]
	if !ok || time.Since(e.at) > keyedTokenLife {
		return "", false
	}
	return e.token, true
}

// putIfAbsent remembers token for key unless a live token is already
// remembered for it, and returns the token remembered: the caller sends
// that one, not necessarily its own. A full cache first forgets expired
// entries, then the oldest.
func (k *keyedTokens) putIfAbsent(key, token string, now time.Time) string {
	if key == "" {
		return token
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if e, ok := k.byKey[key]; ok && now.Sub(e.at) <= keyedTokenLife {
		return e.token
	}
	if k.byKey == nil {
		k.byKey = map[string]keyedToken{}
	}
	if len(k.byKey) >= maxKeyedTokens {
		k.evict(now)
	}
	k.byKey[key] = keyedToken{token: token, at: now, sends: &tokenSends{}}
	return token
}

// sentWith records that key's token, token, was sent with the request
// sig, and returns the record it went into; nil, recording nothing, when
// the key no longer holds that token.
func (k *keyedTokens) sentWith(key, token, sig string) *tokenSends {
	k.mu.Lock()
	defer k.mu.Unlock()
	e, ok := k.byKey[key]
	if !ok || e.token != token {
		return nil
	}
	if len(e.sends.sigs) < 2 && !slices.Contains(e.sends.sigs, sig) {
		e.sends.sigs = append(e.sends.sigs, sig)
	}
	return e.sends
}

// onlySentWith says whether the token of sends was sent with the request
// sig alone.
func (k *keyedTokens) onlySentWith(sends *tokenSends, sig string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return sends != nil && len(sends.sigs) == 1 && sends.sigs[0] == sig
}

// drop forgets key's token if it is still token (a racing call may
// already have replaced it).
func (k *keyedTokens) drop(key, token string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if e, ok := k.byKey[key]; ok && e.token == token {
		delete(k.byKey, key)
	}
}

// evict drops expired entries, or the oldest one when none has expired.
func (k *keyedTokens) evict(now time.Time) {
	oldest := ""
	for key, e := range k.byKey {
		if now.Sub(e.at) > keyedTokenLife {
			delete(k.byKey, key)
		} else if oldest == "" || e.at.Before(k.byKey[oldest].at) {
			oldest = key
		}
	}
	if len(k.byKey) >= maxKeyedTokens {
		delete(k.byKey, oldest)
	}
}
