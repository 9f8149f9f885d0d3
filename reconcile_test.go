package paylink

import (
	"strings"
	"testing"
)

// TestParseSettlementFile: a spreadsheet's byte order mark is not part
// of the first column's name; a file with no line after its header is
// refused (a truncated file must not reconcile clean); a reference must
// be one line of text, so that it cannot forge lines in the report.
func TestParseSettlementFile(t *testing.T) {
	const head = "date,reference,type,currency,amount\n"
	const line = "2026-11-27,pr_1,purchase,AUD,10.00\n"
	if rs, err := ParseSettlementFile(strings.NewReader("\ufeff" + head + line)); err != nil || len(rs) != 1 {
		t.Errorf("with a byte order mark: got %v, %v; want one record", rs, err)
	}
	for name, file := range map[string]string{
		"header only":          head,
		"reference of 2 lines": head + "2026-11-27,\"pr_1\nreconciliation rc_FAKE\",purchase,AUD,10.00\n",
	} {
		if _, err := ParseSettlementFile(strings.NewReader(file)); err == nil {
			t.Errorf("%s: got nil error, want it refused", name)
		}
	}
}

// TestMatchNamesEachVariance: a reference the file names twice is a
// duplicate (not missing from the ledger), and one settled in another
// currency is told apart from an amount that differs.
func TestMatchNamesEachVariance(t *testing.T) {
	ledger := map[string]*Posting{
		"pr_1": {Reference: "pr_1", Currency: "AUD", Amount: 1000},
		"pr_2": {Reference: "pr_2", Currency: "AUD", Amount: 2000},
		"pr_3": {Reference: "pr_3", Currency: "AUD", Amount: 3000},
	}
	rec := &Reconciliation{}
	rec.match([]AcquirerRecord{
		{Line: 2, Reference: "pr_1", Currency: "AUD", Amount: 1000},
		{Line: 3, Reference: "pr_1", Currency: "AUD", Amount: 1000},
		{Line: 4, Reference: "pr_2", Currency: "NZD", Amount: 2000},
		{Line: 5, Reference: "pr_3", Currency: "AUD", Amount: 2999},
	}, ledger)
	var kinds []string
	for _, v := range rec.Variances {
		kinds = append(kinds, v.Kind)
	}
	want := []string{VarianceDuplicate, VarianceCurrency, VarianceAmount}
	if rec.Matched != 1 || strings.Join(kinds, ",") != strings.Join(want, ",") {
		t.Errorf("got %d matched and %v, want 1 and %v", rec.Matched, kinds, want)
	}
}
