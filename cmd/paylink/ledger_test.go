package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/paylink/paylink/internal/apitest"
)

// paylinkCmd runs the binary's run() and returns its output.
func paylinkCmd(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	vars := map[string]string{"PAYLINK_MASTER_KEY": apitest.MasterKeyHex} // the Env's databases are sealed under it
	err := run(context.Background(), args, func(k string) string { return vars[k] }, &out, io.Discard)
	return out.String(), err
}

// A day of sandbox traffic is settled, paid out, reported and reconciled
// from the command line, and a settlement file with one altered amount
// shows exactly that variance. The traffic is stamped ten minutes ago: a
// cut-off is at the latest SettlementGrace before now (a later one is
// refused, settling nothing).
func TestSettleReportReconcile(t *testing.T) {
	e := apitest.Start(t, apitest.Options{Clock: apitest.NewClock(time.Now().Add(-10 * time.Minute))})
	m := e.Onboard()
	var refs []string
	for _, amount := range []string{"10.50", "20.00", "7.25"} {
		r := e.Post("/v5/purchase", m, e.CardPurchase(m, "4111111111111111", amount))
		if r.Str("purchase.status") != "APPROVED" {
			t.Fatalf("purchase: %s", r.Raw)
		}
		refs = append(refs, r.Str("purchase.purchase_reference"))
	}
	rf := e.Post("/v5/purchase/"+refs[1]+"/refund", m, map[string]any{
		"token":    map[string]any{"company_token": m.Creds.CompanyToken, "transaction_token": e.TransactionToken(m)},
		"customer": map[string]any{"ip_address": "203.0.113.9", "timezone": "UTC"},
		"refund":   map[string]any{"amount": "5.00", "currency": "AUD"}})
	if rf.Str("refund.status") != "APPROVED" {
		t.Fatalf("refund: %s", rf.Raw)
	}
	day := e.Clock.Now().UTC().Format(time.DateOnly)
	db := e.DBPath

	if out, err := paylinkCmd(t, "ledger", "verify", "--db", db); err != nil {
		t.Fatalf("ledger verify: %v\n%s", err, out)
	}
	out, err := paylinkCmd(t, "settle", "--db", db, "--before", time.Now().Format(time.RFC3339))
	if err == nil || !strings.Contains(err.Error(), "may still be committing") || out != "" {
		t.Fatalf("settle before now: got %v\n%s, want it refused, nothing settled", err, out)
	}
	out, err = paylinkCmd(t, "settle", "--db", db, "--before", e.Clock.Now().Add(time.Minute).Format(time.RFC3339))
	if err != nil || !strings.Contains(out, "settled 1 batches, 1 payouts") {
		t.Fatalf("settle: %v\n%s", err, out)
	}
	out, err = paylinkCmd(t, "settle", "--db", db, "--before", e.Clock.Now().Add(time.Minute).Format(time.RFC3339))
	if err != nil || !strings.Contains(out, "settled 0 batches, 0 payouts") {
		t.Fatalf("second settle: %v\n%s", err, out)
	}

	report, err := paylinkCmd(t, "report", "settlement", "--db", db, "--merchant", m.ID, "--date", day)
	if err != nil {
		t.Fatalf("report: %v", err)
	}
	rows, err := csv.NewReader(strings.NewReader(report)).ReadAll()
	if err != nil {
		t.Fatalf("report is not CSV: %v\n%s", err, report)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	var total, payout string
	for _, r := range rows[1:] {
		switch r[col["type"]] {
		case "total":
			total = r[col["net"]]
		case "payout":
			payout = r[col["net"]]
		}
	}
	// Net: 10.50 - 0.48 + 20.00 - 0.65 - 5.00 + 7.25 - 0.43 (fees 1.75% + 0.30, half up).
	if want := "31.19"; len(rows) != 1+4+1+1 || total != want || payout != want {
		t.Errorf("report: got %d rows, total net %q, payout %q; want 4 balance transactions, total and payout %s\n%s", len(rows)-1, total, payout, want, report)
	}

	file, err := paylinkCmd(t, "acquirer", "settlement-file", "--db", db, "--date", day)
	if err != nil || strings.Count(file, "\n") != 5 {
		t.Fatalf("settlement file: %v\n%s", err, file)
	}
	path := filepath.Join(t.TempDir(), "settlement.csv")
	os.WriteFile(path, []byte(file), 0o600)
	if out, err := paylinkCmd(t, "reconcile", "--db", db, "--file", path); err != nil || !strings.Contains(out, "4 matched, 0 variances") {
		t.Fatalf("reconcile: %v\n%s", err, out)
	}
	altered := strings.Replace(file, ",20.00\n", ",20.01\n", 1)
	os.WriteFile(path, []byte(altered), 0o600)
	out, err = paylinkCmd(t, "reconcile", "--db", db, "--file", path)
	if err == nil || strings.Count(out, "variance\t") != 1 || !strings.Contains(out, "amount_differs\t"+refs[1]) ||
		!strings.Contains(out, "file 20.01 AUD\tledger 20.00 AUD") {
		t.Errorf("altered file: got %v\n%s\nwant exactly the 20.00 -> 20.01 variance", err, out)
	}
	// Each side in its own currency, and no amount for a side that has
	// none: the ledger's was "in another currency", and missing_in_file
	// printed "line 0  file 0.00 AUD".
	sides := "date,reference,currency,amount\n" + day + "," + refs[0] + ",NZD,10.50\n" + day + ",pr_nobody,AUD,1.00\n"
	os.WriteFile(path, []byte(sides), 0o600)
	out, _ = paylinkCmd(t, "reconcile", "--db", db, "--file", path)
	for _, want := range []string{
		"variance\tcurrency_differs\t" + refs[0] + "\tline 2\tfile 10.50 NZD\tledger 10.50 AUD\n",
		"variance\tmissing_in_ledger\tpr_nobody\tline 3\tfile 1.00 AUD\n",
		"variance\tmissing_in_file\t" + refs[1] + "\tledger 20.00 AUD\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("sides: want %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "line 0") || strings.Contains(out, "another currency") {
		t.Errorf("sides: a missing side has an amount:\n%s", out)
	}
	// The operator's view of past runs: the latest, as reconcile printed it.
	runs, err := paylinkCmd(t, "reconcile", "--db", db, "--runs", "1")
	if err != nil || !strings.HasPrefix(runs, filepath.Base(path)+", ") || !strings.Contains(runs, out) {
		t.Errorf("reconcile --runs 1: got %v\n%s\nwant the latest run, as reconcile printed it:\n%s", err, runs, out)
	}
	for _, bad := range [][]string{{"--runs", "1", "--file", path}, {"--runs", "201"}} {
		if _, err := paylinkCmd(t, append([]string{"reconcile", "--db", db}, bad...)...); err == nil {
			t.Errorf("reconcile %v: no error", bad)
		}
	}
	os.WriteFile(path, []byte("date,reference,currency,amount\n"+day+",x,AUD,1.001\n"), 0o600)
	if _, err := paylinkCmd(t, "reconcile", "--db", db, "--file", path); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("malformed file: got %v, want an error naming line 2", err)
	}
}

// TestSettleAndReconcileAreAudited: paylink settle records, in the audit
// log and by its command, each settlement batch and payout it makes with
// what it settled and paid; paylink reconcile records its run with its
// counts. Before, neither wrote a row, where every other operator command
// does.
func TestSettleAndReconcileAreAudited(t *testing.T) {
	e := apitest.Start(t, apitest.Options{Clock: apitest.NewClock(time.Now().Add(-10 * time.Minute))})
	m := e.Onboard()
	if r := e.Post("/v5/purchase", m, e.CardPurchase(m, "4111111111111111", "10.50")); r.Str("purchase.status") != "APPROVED" {
		t.Fatalf("purchase: %s", r.Raw)
	}
	day := e.Clock.Now().UTC().Format(time.DateOnly)
	db := e.DBPath
	out, err := paylinkCmd(t, "settle", "--db", db, "--before", e.Clock.Now().Add(time.Minute).Format(time.RFC3339))
	if err != nil || !strings.Contains(out, "settled 1 batches, 1 payouts") {
		t.Fatalf("settle: %v\n%s", err, out)
	}
	file, err := paylinkCmd(t, "acquirer", "settlement-file", "--db", db, "--date", day)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "settlement.csv")
	os.WriteFile(path, []byte(file), 0o600)
	if out, err := paylinkCmd(t, "reconcile", "--db", db, "--file", path); err != nil {
		t.Fatalf("reconcile: %v\n%s", err, out)
	}
	export, err := paylinkCmd(t, "audit", "export", "--db", db, "--since", "2000-01-01T00:00:00Z")
	if err != nil {
		t.Fatal(err)
	}
	type row struct{ action, actorID, merchant, detail string }
	var got []row
	for _, l := range exportLines(t, export) {
		switch a := l["action"].(string); a {
		case "settlement_batch.create", "payout.create", "reconciliation.run":
			if l["actor_kind"] != "cli" || l["outcome"] != "success" || l["object_id"] == "" {
				t.Errorf("%s: got %v, want by the cli, success, naming its object", a, l)
			}
			got = append(got, row{a, l["actor_id"].(string), l["merchant_id"].(string), l["detail"].(string)})
		}
	}
	// 10.50 less its fee of 0.48 (1.75% + 0.30).
	want := []row{
		{"settlement_batch.create", "settle", m.ID, "day=" + day + " balance_transactions=1 amount=10.02 currency=AUD"},
		{"payout.create", "settle", m.ID, "batches=1 amount=10.02 currency=AUD"},
		{"reconciliation.run", "reconcile", "", "matched=1 variances=0 days=1 from=" + day + " to=" + day},
	}
	if !slices.Equal(got, want) {
		t.Errorf("got audit rows %v, want %v", got, want)
	}
}
