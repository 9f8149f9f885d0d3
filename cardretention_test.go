package paylink_test

import (
	"context"
	"testing"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
)

// TestWipeSpentCardsWorksThroughABacklog: one run of the job wipes every
// card past CardRetention, more than one transaction's batch, so that
// numbers are never kept beyond the hour promised because cards were
// spent faster than one batch per run.
func TestWipeSpentCardsWorksThroughABacklog(t *testing.T) {
	onEngines(t, func(t *testing.T, env *apitest.Env) {
		ctx := context.Background()
		m := env.Onboard()
		const spent = 501 // one more than a transaction wipes
		card := &paylink.CardDetails{Number: "4111111111111111", ExpiryMonth: 7, ExpiryYear: env.Clock.Now().Year() + 2}
		for range spent {
			c, err := env.Service.TokenizeCard(ctx, m.Merchant, paylink.TokenizeRequest{CompanyToken: m.Creds.CompanyToken, Card: card})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := env.Service.InvalidateCardToken(ctx, m.Merchant, m.Creds.CompanyToken, c.Token); err != nil {
				t.Fatal(err)
			}
		}
		kept, err := env.Service.TokenizeCard(ctx, m.Merchant, paylink.TokenizeRequest{CompanyToken: m.Creds.CompanyToken, Card: card, MultiUse: true})
		if err != nil {
			t.Fatal(err)
		}
		if n, err := env.Service.WipeSpentCards(ctx); err != nil || n != 0 {
			t.Fatalf("within CardRetention: wiped %d, %v; want 0", n, err)
		}
		env.Clock.Advance(paylink.CardRetention + time.Second)
		if n, err := env.Service.WipeSpentCards(ctx); err != nil || n != spent {
			t.Fatalf("wiped %d, %v; want all %d in one run", n, err, spent)
		}
		if n, err := env.Service.WipeSpentCards(ctx); err != nil || n != 0 {
			t.Errorf("again: wiped %d, %v; want 0", n, err)
		}
		if _, err := env.Service.LookupCard(ctx, m.Merchant, m.Creds.CompanyToken, kept.Token); err != nil {
			t.Errorf("the card that can still pay: %v", err)
		}
	})
}
