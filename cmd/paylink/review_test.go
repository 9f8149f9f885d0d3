package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/sqlstore"
	"github.com/paylink/paylink/internal/storetest"
)

func TestReviewListsUnknownItems(t *testing.T) {
	db := filepath.Join(t.TempDir(), "p.db")
	st, err := sqlstore.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	m := storetest.NewMerchant(t, st)
	unknown := storetest.NewTransaction(m, "pr_unknown", "", 1234)
	unknown.Status = paylink.StatusUnknown
	approved := storetest.NewTransaction(m, "pr_fine", "", 500)
	refund := &paylink.Refund{Reference: "rf_unknown", MerchantID: m.ID, TransactionReference: approved.Reference,
		Status: paylink.StatusUnknown, Currency: "AUD", Amount: 200, CreatedAt: approved.CreatedAt}
	err = st.Update(context.Background(), func(tx paylink.Tx) error {
		for _, tr := range []*paylink.Transaction{unknown, approved} {
			if err := tx.CreateTransaction(tr); err != nil {
				return err
			}
		}
		return tx.CreateRefund(refund)
	})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	out, err := runCLIWith(t, map[string]string{"PAYLINK_MASTER_KEY": strings.Repeat("1a", 32)}, "review", "--db", db)
	if err != nil {
		t.Fatalf("review: %v", err)
	}
	for _, want := range []string{"pr_unknown", "12.34", "rf_unknown", "2.00", "1 transactions and 1 refunds need review"} {
		if !strings.Contains(out, want) {
			t.Errorf("review output:\n%s\nwant it to contain %q", out, want)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "transaction") && strings.Contains(line, "pr_fine") {
			t.Errorf("review output lists an APPROVED transaction: %s", line)
		}
	}
}
