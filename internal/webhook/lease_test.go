package webhook

import (
	"testing"
	"time"

	"github.com/paylink/paylink"
)

// TestALeaseOutlastsItsAttemptByMoreThanTheClockSkew: whatever the
// attempt timeout, a lease lasts beyond it by more than the skew two
// instances may have (paylink.ClockSkewTolerance) plus 5 s for the
// claim's and the result's commits, so an instance whose clock is ahead
// by that skew does not see the lease run out while the attempt is in
// flight or being recorded. With the former 5 s minimum a 1 s or 5 s
// timeout left 1 s for those commits.
func TestALeaseOutlastsItsAttemptByMoreThanTheClockSkew(t *testing.T) {
	want := paylink.ClockSkewTolerance + 5*time.Second
	for _, timeout := range []time.Duration{time.Millisecond, time.Second, 5 * time.Second, DefaultTimeout, 2 * time.Minute} {
		d := New(nil, Options{Timeout: timeout})
		if got := d.lease() - timeout; got < want {
			t.Errorf("timeout %v: got a lease of %v, %v beyond the attempt; want at least %v beyond it", timeout, d.lease(), got, want)
		}
	}
}
