package client

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestBackoffStaysWithinItsWaits: the backoff after any attempt is
// between half and all of the first wait doubled per attempt, at most
// the longest, whatever the waits set; a first wait of 20 s overflowed
// the doubling at the 30th attempt and panicked (the twenty-fifth stop's
// client sweep, in a 30-second outage).
func TestBackoffStaysWithinItsWaits(t *testing.T) {
	for _, w := range []struct{ first, longest time.Duration }{
		{defaultFirstWait, defaultLongestWait}, {20 * time.Second, 50 * time.Second},
		{time.Second, 2 * time.Minute}, {90 * time.Second, 2 * time.Minute},
	} {
		c := New("http://127.0.0.1:1", "key", "company", WithRetryWaits(w.first, w.longest))
		for attempt := range 70 {
			ceiling := w.longest
			if attempt < 20 && w.first<<attempt < ceiling {
				ceiling = w.first << attempt
			}
			if d := c.backoff(attempt); d < ceiling/2 || d > ceiling {
				t.Errorf("waits %s to %s, attempt %d: backoff %s, want %s to %s", w.first, w.longest, attempt, d, ceiling/2, ceiling)
			}
		}
	}
}

// TestABackoffOverAMinuteIsWaited: the minute a call waits at most is a
// server's Retry-After's; a backoff the caller set longer is waited for
// (it returned at once, the retries silently skipped).
func TestABackoffOverAMinuteIsWaited(t *testing.T) {
	c := New("http://127.0.0.1:1", "key", "company", WithRetries(3), WithRetryWaits(90*time.Second, 2*time.Minute))
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	answer := &Error{HTTPStatus: 503, Code: "service_unavailable"}
	if err := c.sleep(ctx, 0, answer); !errors.Is(err, context.Canceled) {
		t.Errorf("a 90 s backoff: got %v, want it waited for until the context ended", err)
	}
	long := &Error{HTTPStatus: 503, Code: "service_unavailable", RetryAfter: 2 * time.Minute}
	if err := c.sleep(context.Background(), 0, long); err != long {
		t.Errorf("a Retry-After of 2 minutes: got %v, want the answer at once", err)
	}
}
