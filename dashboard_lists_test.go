package paylink_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
)

// Lists the dashboard shows: a merchant's links and its payouts' days.

func TestListLinks(t *testing.T) {
	onEngines(t, func(t *testing.T, env *apitest.Env) {
		ctx := context.Background()
		m, other := env.Onboard(), env.Onboard()
		if _, _, err := env.Service.CreateLink(ctx, other.Merchant, paylink.NewLink{Amount: 100, Currency: "AUD", MerchantReference: "THEIRS"}); err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, ref := range []string{"A", "B", "C"} {
			env.Clock.Advance(time.Second)
			l, _, err := env.Service.CreateLink(ctx, m.Merchant, paylink.NewLink{Amount: 100, Currency: "AUD", MerchantReference: ref})
			if err != nil {
				t.Fatal(err)
			}
			want = append([]string{l.ID}, want...)
		}
		for _, c := range []struct {
			name  string
			limit int
			want  []string
		}{{"default", 0, want}, {"two", 2, want[:2]}, {"above the maximum", paylink.MaxLinkList + 1, want}} {
			t.Run(c.name, func(t *testing.T) {
				got, err := env.Service.ListLinks(ctx, m.Merchant, c.limit)
				if err != nil {
					t.Fatal(err)
				}
				var ids []string
				for _, l := range got {
					ids = append(ids, l.ID)
				}
				if !slices.Equal(ids, c.want) {
					t.Errorf("got %v, want %v", ids, c.want)
				}
			})
		}
	})
}

func TestPayoutDays(t *testing.T) {
	onEngines(t, func(t *testing.T, env *apitest.Env) {
		ctx := context.Background()
		m := env.Onboard()
		first := pay(t, env, m, payment{"4111111111111111", "", "", "", 1000, "AUD"})
		env.Clock.Advance(24 * time.Hour)
		second := pay(t, env, m, payment{"4111111111111111", "", "", "", 2000, "AUD"})
		if _, err := env.Service.Settle(ctx, env.Clock.Now().Add(time.Second)); err != nil {
			t.Fatal(err)
		}
		payouts, _, err := env.Service.Payouts(ctx, m.Merchant, "", 10)
		if err != nil || len(payouts) != 1 {
			t.Fatalf("got %v, %v, want one payout", payouts, err)
		}
		want := []string{first.CreatedAt.UTC().Format(time.DateOnly), second.CreatedAt.UTC().Format(time.DateOnly)}
		if got := payouts[0].Days; !slices.Equal(got, want) {
			t.Errorf("got days %v, want %v", got, want)
		}
	})
}
