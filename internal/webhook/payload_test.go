package webhook_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
	"github.com/paylink/paylink/internal/processor"
)

// TestPayloadGolden checks every field of real webhooks against golden
// files (spec 2.2 and 2.3). Values that differ per run are {{name}}
// placeholders filled from the stored transaction.
func TestPayloadGolden(t *testing.T) {
	customer := func(b map[string]any) {
		apitest.Set(b, "customer.first_name", "Jo")
		apitest.Set(b, "customer.last_name", "Citizen")
		apitest.Set(b, "customer.phone", "+61400000000")
		apitest.Set(b, "customer.reference", "CUST-9")
		apitest.Set(b, "purchase.invoice_number", "INV-42")
		apitest.Set(b, "purchase.should_service_apply_surcharge", true)
	}
	icPlus := &paylink.Pricing{Model: paylink.PricingICPlus, ICPlusPercent: 8000, ICPlusFixed: 50_000,
		ServiceTransFee: 150_000, ServiceProtectPercent: 1250, Billable: []string{paylink.FeeServiceTrans}}
	tests := []struct {
		name, golden, card, amount string
		settings                   func(*paylink.MerchantSettings)
	}{
		{name: "approved visa, default pricing", golden: "approved_visa.json", card: "4111111111111111", amount: "100.00"},
		{name: "approved amex with GST", golden: "approved_amex.json", card: "378282246310005", amount: "10.50"},
		{name: "declined", golden: "declined.json", card: processor.CardDecline, amount: "20.00"},
		{name: "failed", golden: "failed.json", card: processor.CardProcessingError, amount: "20.00"},
		{name: "interchange plus, billable line", golden: "ic_plus.json", card: "5555555555554444", amount: "33.33",
			settings: func(s *paylink.MerchantSettings) { s.Pricing = icPlus }},
		{name: "legacy 16 fields", golden: "legacy.json", card: "4111111111111111", amount: "100.00",
			settings: func(s *paylink.MerchantSettings) { s.Webhook.Legacy = true }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := apitest.Start(t, apitest.Options{})
			rc := newReceiver(t, 200)
			m := onboard(env, rc.URL+"/hook", func(n *paylink.NewMerchant) {
				if tt.settings != nil {
					tt.settings(&n.Settings)
				}
			})
			ref := purchase(t, env, m, tt.card, tt.amount, customer)
			env.WaitWebhooks()
			got := rc.requests()
			if len(got) != 1 {
				t.Fatalf("got %d webhooks, want 1", len(got))
			}
			tr, err := env.Service.TransactionStatus(context.Background(), m.Merchant, ref)
			if err != nil {
				t.Fatal(err)
			}
			compareGolden(t, decode(t, got[0].Body), tt.golden, map[string]string{
				"reference": ref, "mid": m.ID, "time": paylink.FormatSpecTime(tr.ProcessedAt),
				"auth_code": tr.Details.AuthCode, "acquirer_trans_id": tr.Details.AcquirerTransID,
				"expiry": tr.Details.Card.ExpiryString(),
			})
		})
	}
}

// compareGolden compares a payload with a golden file field by field.
func compareGolden(t *testing.T, got map[string]any, file string, vars map[string]string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	for k, v := range vars {
		text = strings.ReplaceAll(text, "{{"+k+"}}", v)
	}
	want := decode(t, []byte(text))
	keys := map[string]bool{}
	for k := range got {
		keys[k] = true
	}
	for k := range want {
		keys[k] = true
	}
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		g, gok := got[k]
		w, wok := want[k]
		switch {
		case !gok:
			t.Errorf("%s: got no field, want %s", k, show(w))
		case !wok:
			t.Errorf("%s: got unexpected field %s", k, show(g))
		case show(g) != show(w):
			t.Errorf("%s: got %s, want %s", k, show(g), show(w))
		}
	}
}

func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
