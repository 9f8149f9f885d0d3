package sqlstore_test

import (
	"context"
	"testing"

	"github.com/paylink/paylink/internal/sqlstore"
)

// TestFlowRoundTripsPostgres guards the PostgreSQL round trips of the
// flow's Service calls (docs/performance.md, "PostgreSQL"): each was 3
// (token) and 14 (purchase) before writes were pipelined, the purchase 5
// while it was two database transactions, and 3 while the token's
// spending and the posting waited for their answers. A count, not a
// speed: it is the same on any machine. The fewest of a few flows is
// taken, as database/sql pings a connection idle for over a second.
func TestFlowRoundTripsPostgres(t *testing.T) {
	var rt sqlstore.RoundTrips
	st, err := sqlstore.OpenCounted(context.Background(), pg.Database(t), &rt)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	svc, m, creds := benchMerchant(t, st)
	ctx := context.Background()
	token, purchase := int64(1<<62), int64(1<<62)
	for range 5 {
		start := rt.Load()
		tok, err := svc.IssueTransactionToken(ctx, m, creds.CompanyToken)
		if err != nil {
			t.Fatal(err)
		}
		issued := rt.Load()
		if err := benchPurchase(ctx, svc, m, creds, tok); err != nil {
			t.Fatal(err)
		}
		token, purchase = min(token, issued-start), min(purchase, rt.Load()-issued)
	}
	tests := []struct {
		call      string
		got, most int64
	}{
		// A stateless token: issuing it touches no database.
		{"IssueTransactionToken", token, 0},
		// One database transaction (the sandbox answers in process),
		// sent at once: BEGIN, the spent token's insert, the
		// transaction, its posting and lines, its event, COMMIT.
		{"Purchase", purchase, 1},
	}
	for _, tt := range tests {
		t.Run(tt.call, func(t *testing.T) {
			if tt.got > tt.most {
				t.Errorf("got %d round trips, want at most %d", tt.got, tt.most)
			}
		})
	}
}
