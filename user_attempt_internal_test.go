package paylink

import (
	"fmt"
	"testing"
	"time"
)

// TestLockoutLogIsBounded: the lock-outs remembered stay at most
// lockoutLogSize; a new one past it goes unaudited until older ones
// leave the window, and then it is audited.
func TestLockoutLogIsBounded(t *testing.T) {
	var l lockoutLog
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range lockoutLogSize {
		if !l.first(fmt.Sprint(i), now) {
			t.Fatalf("lock-out %d: got not first, want first", i)
		}
	}
	if l.first("0", now.Add(time.Minute)) || l.first("new", now.Add(time.Minute)) {
		t.Error("within the window: got a repeated or an over-the-bound lock-out audited, want neither")
	}
	if later := now.Add(SignInFailureWindow); !l.first("new", later) || len(l.seen) != 1 {
		t.Errorf("a window later: got %d remembered, want the new lock-out audited and the old ones dropped", len(l.seen))
	}
}
