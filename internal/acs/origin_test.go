package acs

import (
	"net/http/httptest"
	"testing"
)

func TestPlainOriginKeepsTheCSPIntact(t *testing.T) {
	tests := []struct {
		origin string
		want   bool
	}{
		{"https://shop.example.com", true},
		{"https://127.0.0.1:8443", true},
		{"http://localhost:8080", true},
		{"", false},
		{"https://", false},
		{"javascript://x", false},
		{"https://a.example; script-src *", false},
		{"https://a.example'", false},
		{"https://a.example/path", false},
	}
	for _, tc := range tests {
		if got := plainOrigin(tc.origin); got != tc.want {
			t.Errorf("plainOrigin(%q): got %v, want %v", tc.origin, got, tc.want)
		}
	}
}

func TestSameOrigin(t *testing.T) {
	tests := []struct {
		name           string
		site, origin   string
		wantSameOrigin bool
	}{
		{"browser, same origin", "same-origin", "null", true},
		{"browser, typed address", "none", "", true},
		{"browser, cross site", "cross-site", "https://evil.example", false},
		{"browser, same site other origin", "same-site", "http://other.127.0.0.1", false},
		{"old browser, own origin", "", "http://paylink.test", true},
		{"old browser, other origin", "", "https://evil.example", false},
		{"old browser, no-referrer", "", "null", true},
		{"not a browser", "", "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "http://paylink.test/acs/challenge/x", nil)
			if tc.site != "" {
				r.Header.Set("Sec-Fetch-Site", tc.site)
			}
			if tc.origin != "" {
				r.Header.Set("Origin", tc.origin)
			}
			if got := sameOrigin(r); got != tc.wantSameOrigin {
				t.Errorf("got %v, want %v", got, tc.wantSameOrigin)
			}
		})
	}
}
