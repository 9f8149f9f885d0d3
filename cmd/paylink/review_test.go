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

// reviewDB is a database with one UNKNOWN transaction (pr_unknown, 12.34)
// and one UNKNOWN refund (rf_unknown) of an approved one (pr_fine).
func reviewDB(t *testing.T) (db string, m *paylink.Merchant) {
	t.Helper()
	db = filepath.Join(t.TempDir(), "p.db")
	st, err := sqlstore.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	m = storetest.NewMerchant(t, st)
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
	return db, m
}

// reviewVars is the environment of the review commands.
var reviewVars = map[string]string{"PAYLINK_MASTER_KEY": strings.Repeat("1a", 32)}

func TestReviewListsUnknownItems(t *testing.T) {
	db, _ := reviewDB(t)
	out, err := runCLIWith(t, reviewVars, "review", "--db", db)
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

// review resolve records an operator's answer: the item leaves review,
// and the audit log names the command as the actor. A resolution without
// a note is refused and changes nothing.
func TestReviewResolveRecordsTheAnswer(t *testing.T) {
	db, m := reviewDB(t)
	_, err := runCLIWith(t, reviewVars, "review", "resolve", "--db", db, "--merchant", m.ID,
		"--reference", "pr_unknown", "--answer", "not_received")
	if err == nil || !strings.Contains(err.Error(), "note: is required") {
		t.Errorf("resolve without a note: got %v, want the note asked for", err)
	}
	_, err = runCLIWith(t, reviewVars, "review", "--db", db, "resolve", "--merchant", m.ID)
	if err == nil || !strings.Contains(err.Error(), "write resolve right after review") {
		t.Errorf("resolve after a flag: got %v, want told where resolve goes", err)
	}
	out, err := runCLIWith(t, reviewVars, "review", "resolve", "--db", db, "--merchant", m.ID,
		"--reference", "pr_unknown", "--answer", "not_received", "--note", "acquirer support, case 7")
	if err != nil || !strings.Contains(out, "transaction pr_unknown of "+m.ID+" resolved as not_received: now FAILED") {
		t.Fatalf("resolve: %v\n%s", err, out)
	}
	out, err = runCLIWith(t, reviewVars, "review", "resolve", "--db", db, "--merchant", m.ID, "--refund",
		"--reference", "rf_unknown", "--answer", "approved", "--note", "acquirer support, case 8")
	if err != nil || !strings.Contains(out, "now APPROVED") {
		t.Fatalf("resolve the refund: %v\n%s", err, out)
	}
	out, err = runCLIWith(t, reviewVars, "review", "--db", db)
	if err != nil || !strings.Contains(out, "0 transactions and 0 refunds need review") {
		t.Errorf("review after resolving: %v\n%s", err, out)
	}
	out, err = runCLIWith(t, reviewVars, "audit", "export", "--db", db, "--since", "24h")
	if err != nil {
		t.Fatal(err)
	}
	var resolved int
	for _, l := range exportLines(t, out) {
		if strings.HasSuffix(l["action"].(string), ".resolve") {
			resolved++
			if l["actor_kind"] != "cli" || l["actor_id"] != "review resolve" {
				t.Errorf("the resolution's actor: got %v %v, want cli, review resolve", l["actor_kind"], l["actor_id"])
			}
		}
	}
	if resolved != 2 {
		t.Errorf("resolutions audited: got %d, want 2\n%s", resolved, out)
	}
}
