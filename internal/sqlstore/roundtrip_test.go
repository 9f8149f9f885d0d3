package sqlstore_test

import (
	"context"
	"testing"

	"github.com/paylink/paylink/internal/sqlstore"
)

// TestFlowRoundTripsPostgres guards the PostgreSQL round trips of the
// flow's Service calls (docs/performance.md, "PostgreSQL"): each was 3
// (token) and 14 (purchase) before writes were pipelined. A count, not a
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
		// BEGIN and the insert, then COMMIT (the token's store
		// functions are not pipelined).
		{"IssueTransactionToken", token, 2},
		// BEGIN + token; card + transaction + COMMIT; BEGIN + update
		// returning the merchant; posting; lines + event + COMMIT.
		{"Purchase", purchase, 5},
	}
	for _, tt := range tests {
		t.Run(tt.call, func(t *testing.T) {
			if tt.got > tt.most {
				t.Errorf("got %d round trips, want at most %d", tt.got, tt.most)
			}
		})
	}
}
