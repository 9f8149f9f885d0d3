package api

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/httpx"
)

// TestClientGoneIsNotAServerError: a request that failed because its
// client hung up (its context cancelled) is answered 499
// client_closed_request, logged as no error, and releases an
// Idempotency-Key (paylink.Retryable); the same cancellation while the
// client is still there is an internal error.
func TestClientGoneIsNotAServerError(t *testing.T) {
	var logged bytes.Buffer
	s := &Server{log: slog.New(slog.NewTextHandler(&logged, nil))}
	gone, hangUp := context.WithCancel(context.Background())
	hangUp()
	err := fmt.Errorf("commit: begin: %w", context.Canceled)

	r := httptest.NewRequest("POST", "/v5/purchase", nil).WithContext(gone)
	status, body := s.errorResponse(httptest.NewRecorder(), r, err)
	if status != httpx.StatusClientClosedRequest || !strings.Contains(string(body), paylink.CodeClientClosedRequest) {
		t.Errorf("client gone: got %d %s, want 499 %s", status, body, paylink.CodeClientClosedRequest)
	}
	if logged.Len() != 0 {
		t.Errorf("client gone: logged %q, want nothing (not a server error)", logged.String())
	}
	if !paylink.Retryable(err) {
		t.Errorf("Retryable(%v) = false, want true: the key is released for the client's retry", err)
	}

	r = httptest.NewRequest("POST", "/v5/purchase", nil)
	if status, _ := s.errorResponse(httptest.NewRecorder(), r, err); status != 500 || !strings.Contains(logged.String(), "internal error") {
		t.Errorf("client still there: got %d, logged %q; want 500 logged as an internal error", status, logged.String())
	}
}
