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
