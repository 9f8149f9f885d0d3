package main

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/sqlstore"
)

func TestMerchantCreateDirectDebitFeeFlags(t *testing.T) {
	tests := []struct {
		name  string
		flags []string
		want  *paylink.DirectDebitFeeConfig
		bad   bool
	}{
		{name: "no flags: defaults, not stored", want: nil},
		{name: "percent only", flags: []string{"--dd-fee-percent", "1.25"},
			want: &paylink.DirectDebitFeeConfig{Percent: 12500, Fixed: 30, Cap: 500}},
		{name: "all three", flags: []string{"--dd-fee-percent", "0", "--dd-fee-fixed", "0.99", "--dd-fee-cap", "0"},
			want: &paylink.DirectDebitFeeConfig{Percent: 0, Fixed: 99, Cap: 0}},
		{name: "negative fixed", flags: []string{"--dd-fee-fixed", "-1"}, bad: true},
		{name: "three decimals", flags: []string{"--dd-fee-cap", "1.005"}, bad: true},
		{name: "percent above 100", flags: []string{"--dd-fee-percent", "101"}, bad: true},
		{name: "above the largest amount, no cap", flags: []string{"--dd-fee-percent", "100", "--dd-fee-fixed", "0.01", "--dd-fee-cap", "0"}, bad: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "p.db")
			args := append([]string{"merchant", "create", "--db", db, "--name", "Acme", "--trading-name", "Acme", "--json"}, tt.flags...)
			var stdout bytes.Buffer
			err := run(context.Background(), args, func(string) string { return "" }, &stdout, io.Discard)
			if (err != nil) != tt.bad {
				t.Fatalf("got err %v, want bad=%v", err, tt.bad)
			}
			if tt.bad {
				return
			}
			if got := storedDirectDebitFee(t, db); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("stored fee config: got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// storedDirectDebitFee reads the only merchant's direct debit settings.
func storedDirectDebitFee(t *testing.T, db string) *paylink.DirectDebitFeeConfig {
	t.Helper()
	st, err := sqlstore.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var ms []*paylink.Merchant
	err = st.View(context.Background(), func(tx paylink.Tx) error {
		ms, err = tx.ListMerchants()
		return err
	})
	if err != nil || len(ms) != 1 {
		t.Fatalf("list merchants: got %d, %v; want 1", len(ms), err)
	}
	return ms[0].Settings.DirectDebit
}
