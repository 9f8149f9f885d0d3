package api

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/paylink/paylink"
)

// TestKeptAs: what a request's answer does to its Idempotency-Key. A
// request that took the key over from the same request that never
// finished (which may have charged) leaves the key claimed when it fails
// in passing (an outage, the client gone) and keeps a refusal: only a
// fresh claim frees its key for a retry (a verification sweep found a
// passing failure of a take-over freeing the key for another token).
func TestKeptAs(t *testing.T) {
	fresh, tookOver := &paylink.IdempotencyClaim{}, &paylink.IdempotencyClaim{TookOver: true}
	outage := fmt.Errorf("purchase: %w", paylink.ErrUnavailable)
	refused := paylink.Errorf(paylink.KindInvalid, paylink.CodeInvalidRequest, "card.expiry_year: card has expired")
	inDoubt := fmt.Errorf("commit: %w", paylink.ErrCommitInDoubt)
	declined := paylink.Errorf(paylink.KindConflict, paylink.CodeTransactionTokenUsed, "spent")
	for _, tt := range []struct {
		name   string
		status int
		err    error
		claim  *paylink.IdempotencyClaim
		keep   int
		leave  bool
	}{
		{"an answer", http.StatusOK, nil, fresh, http.StatusOK, false},
		{"a kept refusal", http.StatusConflict, declined, fresh, http.StatusConflict, false},
		{"an outage frees the key", http.StatusServiceUnavailable, outage, fresh, 0, false},
		{"the client gone frees the key", 499, context.Canceled, fresh, 0, false},
		{"a refusal as sent frees the key", http.StatusBadRequest, refused, fresh, 0, false},
		{"a commit in doubt leaves the claim", http.StatusServiceUnavailable, inDoubt, fresh, 0, true},
		{"a take-over's outage leaves the claim", http.StatusServiceUnavailable, outage, tookOver, 0, true},
		{"a take-over's client gone leaves the claim", 499, context.Canceled, tookOver, 0, true},
		{"a take-over's refusal as sent is kept", http.StatusBadRequest, refused, tookOver, http.StatusBadRequest, false},
	} {
		if keep, leave := keptAs(tt.status, tt.err, tt.claim); keep != tt.keep || leave != tt.leave {
			t.Errorf("%s: got keep %d, leave %v; want %d, %v", tt.name, keep, leave, tt.keep, tt.leave)
		}
	}
}
