package checkout

import (
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/paylink/paylink"
)

// TestCSRFCookieSecureFromBaseURL: the CSRF cookie is Secure when the
// public base URL is https, even though a TLS-terminating proxy forwards
// plain HTTP, and not Secure for an http base URL.
func TestCSRFCookieSecureFromBaseURL(t *testing.T) {
	tests := []struct {
		name, base, request string
		want                bool
	}{
		{"https base URL, plain HTTP request behind a proxy", "https://pay.example.com", "http://10.0.0.5:8080/pay/x", true},
		{"HTTPS base URL in capitals", "HTTPS://pay.example.com", "http://10.0.0.5:8080/pay/x", true},
		{"http base URL", "http://127.0.0.1:8080", "http://127.0.0.1:8080/pay/x", false},
		{"http base URL, TLS request", "http://127.0.0.1:8080", "https://127.0.0.1:8080/pay/x", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc, err := paylink.NewService(paylink.Config{BaseURL: tt.base}, paylink.Deps{})
			if err != nil {
				t.Fatal(err)
			}
			h, err := New(svc, slog.New(slog.DiscardHandler), Options{})
			if err != nil {
				t.Fatal(err)
			}
			rec := httptest.NewRecorder()
			ls := &paylink.LinkSession{Link: &paylink.PaymentLink{ID: "lnk_1", CSRFSecret: "secret"}, Mode: paylink.ChannelHPP}
			if _, err := h.csrfToken(rec, httptest.NewRequest("GET", tt.request, nil), ls); err != nil {
				t.Fatal(err)
			}
			cookies := rec.Result().Cookies()
			if len(cookies) != 1 || cookies[0].Name != csrfCookie {
				t.Fatalf("got cookies %v, want the CSRF cookie", cookies)
			}
			if got := cookies[0].Secure; got != tt.want {
				t.Errorf("Secure: got %v, want %v", got, tt.want)
			}
		})
	}
}
