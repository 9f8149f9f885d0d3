package client

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"
)

// WithRetries lets the client retry a call up to n times after its first
// attempt (0, the default, and below: never), when, and only when, a
// retry cannot run the call twice; the package doc says which answers
// are retried. Waits grow from WithRetryWaits' first to its longest,
// with jitter, or are the answer's Retry-After; a call stops retrying
// when its ctx ends, and when paylink asks for a wait longer than a
// minute or past ctx's deadline.
func WithRetries(n int) Option {
	return func(c *Client) { c.retries = max(n, 0) }
}

// WithRetryWaits sets the wait before a first retry and the longest
// backoff between two (defaults 500 ms and 8 s; a value of 0 or less
// keeps the default). An answer's Retry-After replaces the backoff, up
// to a minute: a longer one is not waited for, the call returns the
// answer.
func WithRetryWaits(first, longest time.Duration) Option {
	return func(c *Client) {
		if first > 0 {
			c.firstWait = first
		}
		if longest > 0 {
			c.longestWait = longest
		}
	}
}

const (
	defaultFirstWait   = 500 * time.Millisecond
	defaultLongestWait = 8 * time.Second
	// longestRetryAfter is the longest Retry-After a call waits for.
	longestRetryAfter = time.Minute
)

// effect is what a call does to paylink's state, which decides when it
// may be retried.
type effect int

const (
	// reads changes nothing: a GET, a look-up, a preview, a new
	// transaction token (a second one costs nothing).
	reads effect = iota
	// writes changes state or moves money: retried only under an
	// Idempotency-Key, with the same body.
	writes
)

// noAnswer is a request that got no answer (the connection was refused,
// reset or closed, or timed out before the answer's headers): it may or
// may not have reached paylink.
type noAnswer struct{ err error }

func (e *noAnswer) Error() string { return e.err.Error() }
func (e *noAnswer) Unwrap() error { return e.err }

// openRetrying is open with the client's retries: it makes the request
// again while the answer says a retry is safe and useful. A write sent
// without an Idempotency-Key gets a generated one when retries are on,
// the same for every attempt, so that paylink replays the first
// attempt's answer rather than running it again.
func (c *Client) openRetrying(ctx context.Context, e effect, method, path string, body []byte, opts []CallOption) (*http.Response, error) {
	generated := ""
	if e == writes && c.retries > 0 && idempotencyKeyOf(opts) == "" {
		generated = newIdempotencyKey()
		opts = append(opts[:len(opts):len(opts)], IdempotencyKey(generated))
	}
	var doubt *Error // the first attempt answered "cannot be told yet"
	for attempt := 0; ; attempt++ {
		res, err := c.open(ctx, method, path, body, opts)
		if err == nil || attempt == c.retries || !retryable(e, err) {
			return res, gaveUp(err, attempt, generated, doubt)
		}
		if pe := (*Error)(nil); doubt == nil && errors.As(err, &pe) && pe.inDoubt() {
			doubt = pe
		}
		if err := c.sleep(ctx, attempt, err); err != nil {
			return nil, gaveUp(err, attempt, generated, doubt)
		}
	}
}

// gaveUp is err of a call's last attempt, saying how many it made and
// under which generated Idempotency-Key (to look the call up by). When
// an earlier attempt was answered that whether it took effect cannot be
// told (doubt), err wraps that answer too: the last answer (a 409 "still
// in progress", say) does not undo its warning.
func gaveUp(err error, attempt int, generated string, doubt *Error) error {
	if err == nil || attempt == 0 && generated == "" {
		return err
	}
	prefix := fmt.Sprintf("paylink: after %d attempts", attempt+1)
	if generated != "" {
		prefix += " under the generated Idempotency-Key " + generated
	}
	if doubt == nil || errors.Is(err, doubt) {
		return fmt.Errorf("%s: %w", prefix, err)
	}
	return fmt.Errorf("%s: %w; an earlier attempt was answered that it may have taken effect (%w)", prefix, err, doubt)
}

// retryable reports whether the answer err makes a retry of a call with
// effect e safe and useful. Any call is retried after no answer, a 429
// or a 502, 503 or 504 (nothing ran, or a write's key replays what did).
// A write also after a 409 saying its key's first request is still in
// progress. Nothing else: another 4xx is an answer, a 500 may be a bug,
// a 409 "never finished, and it may have completed" asks the caller to
// look the payment up, and operation_in_progress is another operation's
// (a retry would run this one after it, a second refund, say).
func retryable(e effect, err error) bool {
	var pe *Error
	if !errors.As(err, &pe) {
		var na *noAnswer
		return errors.As(err, &na)
	}
	switch pe.HTTPStatus {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	case http.StatusConflict:
		return e == writes && stillInProgress(pe)
	}
	return false
}

// stillInProgress reports whether pe is paylink's 409 for a key whose
// first request is running. It shares its code with "a different
// request" and "never finished", which are not retried, and is the one
// of them paylink sends with Retry-After; a paylink from before that
// header is recognised by its words (TestARetryWaitsForAKeyStillInProgress
// meets it on a real server).
func stillInProgress(pe *Error) bool {
	return pe.Code == CodeIdempotencyConflict && (pe.RetryAfter > 0 || strings.Contains(pe.Message, "is still in progress"))
}

// transient reports whether err, from sending a request, means the
// request got no answer for a reason a retry may not meet again: a
// network error, a connection closed or reset, a timeout. (A bad URL or
// certificate would fail again.)
func transient(err error) bool {
	var op *net.OpError
	var ne net.Error
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) ||
		errors.As(err, &op) || errors.As(err, &ne) && ne.Timeout()
}

// sleep waits before the retry that follows attempt, whose answer was
// err: the answer's Retry-After, or a backoff with jitter. It returns an
// error instead when ctx ends first, or when the wait would end past
// ctx's deadline or is a Retry-After over longestRetryAfter.
func (c *Client) sleep(ctx context.Context, attempt int, err error) error {
	var wait time.Duration
	var pe *Error
	if errors.As(err, &pe) && pe.RetryAfter > 0 {
		wait = pe.RetryAfter
		if wait > longestRetryAfter {
			return err
		}
	} else {
		wait = c.backoff(attempt)
	}
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < wait {
		return err
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return fmt.Errorf("paylink: stopped retrying: %w (last attempt: %w)", ctx.Err(), err)
	case <-t.C:
		return nil
	}
}

// backoff is the wait after attempt: the first wait doubled for each
// attempt before it, at most the longest, of which a random half is
// taken off so that clients failed together do not retry together.
func (c *Client) backoff(attempt int) time.Duration {
	d := c.longestWait
	if attempt < 63 && c.firstWait <= d>>attempt {
		d = c.firstWait << attempt
	}
	return d/2 + mrand.N(d/2+1)
}

// newIdempotencyKey is a random key for a write the caller sent without
// one: 128 bits, in letters only, so that it can never hold what paylink
// would read as a card number (and refuse).
func newIdempotencyKey() string {
	letters := strings.Map(func(r rune) rune {
		if r >= '2' && r <= '7' {
			return 'a' + r - '2'
		}
		return r
	}, rand.Text())
	return "paylink-go-" + letters
}
