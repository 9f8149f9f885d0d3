package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/sqlstore"
)

func runCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := run(context.Background(), args, func(string) string { return "" }, &out, io.Discard)
	return out.String(), err
}

// loadMerchant reads a merchant back from the database.
func loadMerchant(t *testing.T, db, mid string) *paylink.Merchant {
	t.Helper()
	st, err := sqlstore.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var m *paylink.Merchant
	err = st.View(context.Background(), func(tx paylink.Tx) error {
		m, err = tx.Merchant(mid)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// createdMerchant reads back the merchant that merchant create --json
// printed as out (err being the command's error).
func createdMerchant(t *testing.T, db, out string, err error) *paylink.Merchant {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	var creds paylink.Credentials
	if err := json.Unmarshal([]byte(out), &creds); err != nil {
		t.Fatal(err)
	}
	return loadMerchant(t, db, creds.MID)
}

func TestMerchantCreateWebhookAndPricingFlags(t *testing.T) {
	tests := []struct {
		name    string
		flags   []string
		want    *paylink.Pricing
		legacy  bool
		retries bool
		wantErr string
	}{
		{name: "defaults", want: nil},
		{name: "pricing and webhook options", flags: []string{"--pricing-model", "ic_plus", "--fee-ic-plus-percent", "0.85",
			"--fee-ic-plus-fixed", "0.05", "--fee-service-trans", "0.125", "--fee-billable", "service_trans_fee",
			"--webhook-legacy", "--webhook-retries"},
			want: func() *paylink.Pricing {
				p := paylink.DefaultPricing()
				p.Model, p.ICPlusPercent, p.ICPlusFixed, p.ServiceTransFee = paylink.PricingICPlus, 8500, 50_000, 125_000
				p.Billable = []string{paylink.FeeServiceTrans}
				return &p
			}(), legacy: true, retries: true},
		{name: "unknown fee code", flags: []string{"--fee-billable", "NOPE"}, wantErr: "--fee-billable"},
		{name: "bad model", flags: []string{"--pricing-model", "flat"}, wantErr: "--pricing-model"},
		{name: "too many decimals", flags: []string{"--fee-blended-fixed", "0.1234567"}, wantErr: "--fee-blended-fixed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "p.db")
			args := append([]string{"merchant", "create", "--db", db, "--name", "Acme Pty Ltd", "--trading-name", "Acme",
				"--webhook-url", "https://hooks.acme.example/x", "--json"}, tt.flags...)
			out, err := runCLI(t, args...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %v, want an error about %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var creds paylink.Credentials
			if err := json.Unmarshal([]byte(out), &creds); err != nil || !strings.HasPrefix(creds.WebhookSecret, "whsec_") {
				t.Fatalf("got %q, %v; want credentials with a whsec_ webhook secret", out, err)
			}
			m := loadMerchant(t, db, creds.MID)
			w := m.Settings.Webhook
			if !reflect.DeepEqual(m.Settings.Pricing, tt.want) || w.Legacy != tt.legacy || w.Retries != tt.retries || len(w.Secrets) != 1 {
				t.Errorf("got pricing %+v legacy %v retries %v %d secrets, want %+v %v %v 1",
					m.Settings.Pricing, w.Legacy, w.Retries, len(w.Secrets), tt.want, tt.legacy, tt.retries)
			}
		})
	}
}

func TestRotateWebhookSecretCommand(t *testing.T) {
	db := filepath.Join(t.TempDir(), "p.db")
	out, err := runCLI(t, "merchant", "create", "--db", db, "--name", "Acme Pty Ltd", "--trading-name", "Acme", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var creds paylink.Credentials
	if err := json.Unmarshal([]byte(out), &creds); err != nil {
		t.Fatal(err)
	}
	out, err = runCLI(t, "merchant", "rotate-webhook-secret", "--db", db, "--merchant", creds.MID, "--overlap", "2h")
	if err != nil || !strings.Contains(out, "webhook_secret: whsec_") || strings.Contains(out, creds.WebhookSecret) {
		t.Fatalf("got %q, %v; want a new secret printed", out, err)
	}
	if w := loadMerchant(t, db, creds.MID).Settings.Webhook; len(w.Secrets) != 2 || w.PreviousUntil == 0 {
		t.Errorf("got %d secrets, previous until %d; want 2 and an overlap end", len(w.Secrets), w.PreviousUntil)
	}
	if _, err := runCLI(t, "merchant", "rotate-webhook-secret", "--db", db, "--merchant", "MNOPE"); err == nil {
		t.Error("unknown merchant: got nil, want an error")
	}
	if _, err := runCLI(t, "webhooks", "resend", "--db", db, "msg_missing"); err == nil {
		t.Error("resend unknown delivery: got nil, want an error")
	}
}

func TestMerchantCreateFixedAmountsPerCurrency(t *testing.T) {
	withFixed := func(model string, trans int64, in map[string]paylink.FixedFees) *paylink.Pricing {
		p := paylink.DefaultPricing()
		p.Model, p.ServiceTransFee, p.FixedIn = model, trans, in
		return &p
	}
	tests := []struct {
		name    string
		flags   []string
		want    *paylink.Pricing
		wantErr string
	}{
		{name: "JPY and KWD", flags: []string{"--fee-fixed-in", "JPY:blended=30,amex=30", "--fee-fixed-in", "kwd: amex=0.1 , blended=0.1005"},
			want: withFixed(paylink.PricingBlended, 0, map[string]paylink.FixedFees{
				"JPY": {Blended: 30_000_000, Amex: 30_000_000}, "KWD": {Blended: 100_500, Amex: 100_000}})},
		{name: "interchange plus with a transaction fee", flags: []string{"--pricing-model", "ic_plus", "--fee-service-trans", "0.10",
			"--fee-fixed-in", "JPY:ic_plus=10,amex=30,service_trans=10"},
			want: withFixed(paylink.PricingICPlus, 100_000, map[string]paylink.FixedFees{
				"JPY": {ICPlus: 10_000_000, Amex: 30_000_000, ServiceTrans: 10_000_000}})},
		{name: "unknown currency", flags: []string{"--fee-fixed-in", "XYZ:blended=1,amex=1"}, wantErr: `"XYZ" is not an ISO 4217`},
		{name: "no amounts", flags: []string{"--fee-fixed-in", "JPY"}, wantErr: "want CUR:part=amount"},
		{name: "negative", flags: []string{"--fee-fixed-in", "JPY:blended=-1,amex=1"}, wantErr: "blended: want a non-negative amount"},
		{name: "finer than a micro-unit", flags: []string{"--fee-fixed-in", "KWD:blended=0.1234567,amex=1"}, wantErr: "up to 6 decimals"},
		{name: "no amount", flags: []string{"--fee-fixed-in", "JPY:blended,amex=1"}, wantErr: "blended: want a non-negative amount"},
		{name: "unknown part", flags: []string{"--fee-fixed-in", "JPY:blended=1,amex=1,visa=1"}, wantErr: `unknown part "visa"`},
		{name: "part twice", flags: []string{"--fee-fixed-in", "JPY:blended=1,amex=1,blended=2"}, wantErr: "blended is given twice"},
		{name: "currency twice", flags: []string{"--fee-fixed-in", "JPY:blended=1,amex=1", "--fee-fixed-in", "jpy:blended=2,amex=2"},
			wantErr: "JPY is given twice"},
		{name: "amex left out", flags: []string{"--fee-fixed-in", "JPY:blended=30"}, wantErr: "amex is missing"},
		{name: "interchange plus part left out", flags: []string{"--pricing-model", "ic_plus", "--fee-fixed-in", "JPY:blended=30,amex=30"},
			wantErr: "ic_plus is missing"},
		{name: "transaction fee left out", flags: []string{"--fee-service-trans", "0.10", "--fee-fixed-in", "JPY:blended=30,amex=30"},
			wantErr: "service_trans is missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "p.db")
			args := append([]string{"merchant", "create", "--db", db, "--name", "Acme Pty Ltd", "--trading-name", "Acme", "--json"}, tt.flags...)
			out, err := runCLI(t, args...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "--fee-fixed-in") {
					t.Fatalf("got %v, want an error about --fee-fixed-in: %s", err, tt.wantErr)
				}
				if _, err := os.Stat(db); !os.IsNotExist(err) {
					t.Errorf("a refused merchant created the database (%v)", err)
				}
				return
			}
			if got := createdMerchant(t, db, out, err).Settings.Pricing; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got pricing %+v, want %+v", got, tt.want)
			}
		})
	}
}
