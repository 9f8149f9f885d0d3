package paylink

import (
	"errors"
	"fmt"
	"testing"
)

func TestAsErrorMapsAnUnreachableDatabaseTo503(t *testing.T) {
	down := fmt.Errorf("%w: dial tcp: connection refused", ErrUnavailable)
	tests := []struct {
		name     string
		err      error
		wantKind Kind
		wantCode string
	}{
		{"wrapped as internal by the Service", Internal("record authorisation", down), KindUnavailable, CodeServiceUnavailable},
		{"returned as is", fmt.Errorf("count due webhooks: %w", down), KindUnavailable, CodeServiceUnavailable},
		{"a real bug", Internal("save", errors.New("not a transition")), KindInternal, CodeInternal},
		{"a client error keeps its kind", &Error{Kind: KindConflict, Code: CodeInvalidState, Err: down}, KindConflict, CodeInvalidState},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := AsError(tt.err)
			if e.Kind != tt.wantKind || e.Code != tt.wantCode {
				t.Errorf("got %v %q, want %v %q", e.Kind, e.Code, tt.wantKind, tt.wantCode)
			}
		})
	}
}

// TestServiceErrorsKeepUnavailability: a store error inside one of our
// own errors (fn returned Internal, the store marked it unavailable) is
// still a 503 after asServiceError unwraps it.
func TestServiceErrorsKeepUnavailability(t *testing.T) {
	inner := Internal("consume transaction token", errors.New("read tcp: connection reset by peer"))
	tests := []struct {
		name string
		err  error
		want Kind
	}{
		{"marked unavailable by the store", fmt.Errorf("%w: %w", ErrUnavailable, inner), KindUnavailable},
		{"not marked", inner, KindInternal},
		{"a client error", Errorf(KindConflict, CodeTransactionTokenUsed, "used"), KindConflict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := AsError(asServiceError("purchase", tt.err)).Kind; got != tt.want {
				t.Errorf("got kind %v, want %v", got, tt.want)
			}
		})
	}
}
