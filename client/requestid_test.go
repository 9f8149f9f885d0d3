package client_test

import (
	"context"
	"strings"
	"testing"

	"github.com/paylink/paylink/client"
)

// TestRequestIDs: an id paylink keeps (1 to 64 of [A-Za-z0-9._-]) is
// echoed in the answer; one it would replace is refused before anything
// is sent, so the caller's correlation id is never lost in silence.
func TestRequestIDs(t *testing.T) {
	c, _ := newClient(t)
	ctx := context.Background()
	for _, id := range []string{"order-7.try_1", strings.Repeat("a", 64)} {
		st, err := c.DirectDebitFee(ctx, "10.00", "AUD", client.RequestID(id))
		if err != nil || st.RequestID != id {
			t.Errorf("RequestID(%q): got %+v, %v; want it echoed", id, st, err)
		}
	}
	for _, id := range []string{"", "order 7/try#1", strings.Repeat("a", 65), "ordér-7"} {
		if _, err := c.DirectDebitFee(ctx, "10.00", "AUD", client.RequestID(id)); err == nil || !strings.Contains(err.Error(), "X-Request-Id") {
			t.Errorf("RequestID(%q): got %v, want an error naming X-Request-Id", id, err)
		}
	}
}
