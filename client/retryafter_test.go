package client

import (
	"net/http"
	"testing"
	"time"
)

// TestRetryAfter: seconds or an HTTP date, as a wait from now; nothing
// for what is absent, unreadable or past; a day at most, where a huge
// count of seconds would overflow.
func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"", 0},
		{"30", 30 * time.Second},
		{"-5", 0},
		{"soon", 0},
		{"99999999999", 24 * time.Hour},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0},
	}
	for _, tt := range tests {
		if got := retryAfter(tt.in, now); got != tt.want {
			t.Errorf("retryAfter(%q): got %v, want %v", tt.in, got, tt.want)
		}
	}
}
