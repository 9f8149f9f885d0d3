package webhook

import (
	"testing"
	"time"
)

// TestDeferral: rows wait a timeout for a receiver that has just hung,
// twice that after its next probe also times out, and so on, at most
// maxDeferral.
func TestDeferral(t *testing.T) {
	for _, tt := range []struct {
		hangs int
		want  time.Duration
	}{
		{1, 30 * time.Second}, {2, time.Minute}, {3, 2 * time.Minute}, {5, 8 * time.Minute}, {6, maxDeferral}, {1000, maxDeferral},
	} {
		if got := deferral(30*time.Second, tt.hangs); got != tt.want {
			t.Errorf("deferral(30s, %d): got %v, want %v", tt.hangs, got, tt.want)
		}
	}
}
