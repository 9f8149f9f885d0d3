package paylink

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestACallEndsBeforeRecoveryAsks: a processor call's deadline is the
// processor timeout, cut short to end CallWindow after its item's claim,
// so that a claim whose commit took long (a lock wait, a paused process)
// never has its call still running when recovery, ProcessingTimeout
// after the claim, asks the processor about it; past the window no call
// is made, whatever the processor would do with a done context, and the
// operation is recorded as not done rather than left for an inquiry (the
// crash sweep found the call given a fresh deadline after a commit of up
// to MaxRequestTime; the verification sweep found the sandbox acting on
// a done context).
func TestACallEndsBeforeRecoveryAsks(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	s := &Service{cfg: Config{ProcessorTimeout: 30 * time.Second}, clock: func() time.Time { return now }}
	for _, tt := range []struct {
		claimedAgo time.Duration
		want       time.Duration // the call's time left; 0: none
	}{
		{0, 30 * time.Second},
		{CallWindow - 45*time.Second, 30 * time.Second},
		{CallWindow - 10*time.Second, 10 * time.Second},
		{CallWindow, 0},
		{CallWindow + time.Minute, 0},
	} {
		_, call, cancel := s.callContext(context.Background(), now.Add(-tt.claimedAgo))
		deadline, ok := call.Deadline()
		left := time.Until(deadline)
		asked := false
		_, err := ask(call, func(context.Context, string) (string, error) { asked = true; return "done", nil }, "a request")
		if tt.want == 0 {
			if call.Err() == nil {
				t.Errorf("claimed %s ago: the call's context is live (%s left), want it done before any call", tt.claimedAgo, left)
			}
			if asked || !errors.Is(err, errNotSent) || answerLost(call, err) {
				t.Errorf("claimed %s ago: asked %v, got %v (answer lost: %v); want no call, errNotSent, and it not taken for a lost answer",
					tt.claimedAgo, asked, err, answerLost(call, err))
			}
		} else if !asked || err != nil {
			t.Errorf("claimed %s ago: asked %v, %v; want the call made", tt.claimedAgo, asked, err)
		} else if !ok || left > tt.want || left < tt.want-5*time.Second {
			t.Errorf("claimed %s ago: the call has %s left (deadline %v), want %s", tt.claimedAgo, left, ok, tt.want)
		}
		cancel()
	}
}
