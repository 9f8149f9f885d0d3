package paylink

import (
	"strings"
	"testing"
)

// TestParseSettlementFile: a spreadsheet's byte order mark is not part
// of the first column's name; a file with no line after its header is
// refused (a truncated file must not reconcile clean); a reference must
// be one line of text, so that it cannot forge lines in the report; a
// column named twice is refused rather than one of them read; a line
// carries a payment's total, which may exceed MaxAmount up to MaxTotal.
func TestParseSettlementFile(t *testing.T) {
	const head = "date,reference,type,currency,amount\n"
	const line = "2026-11-27,pr_1,purchase,AUD,10.00\n"
	if rs, err := ParseSettlementFile(strings.NewReader("\ufeff" + head + line)); err != nil || len(rs) != 1 {
		t.Errorf("with a byte order mark: got %v, %v; want one record", rs, err)
	}
	big := head + "2026-11-27,pr_1,purchase,AUD,15000000000.00\n" // a maximum amount with a 50% surcharge
	if rs, err := ParseSettlementFile(strings.NewReader(big)); err != nil || len(rs) != 1 || rs[0].Amount != 1_500_000_000_000 {
		t.Errorf("a total above MaxAmount: got %v, %v; want 15000000000.00", rs, err)
	}
	for name, file := range map[string]string{
		"header only":          head,
		"reference of 2 lines": head + "2026-11-27,\"pr_1\nreconciliation rc_FAKE\",purchase,AUD,10.00\n",
		"a column named twice": "date,reference,amount,currency,Amount\n2026-11-27,pr_1,10.00,AUD,99.00\n",
		"above any total":      head + "2026-11-27,pr_1,purchase,AUD,20000000000.01\n",
	} {
		if _, err := ParseSettlementFile(strings.NewReader(file)); err == nil {
			t.Errorf("%s: got nil error, want it refused", name)
		}
	}
}

// TestParseSettlementFileFieldCount: a line with fewer or more fields
// than the header is refused as such, not read with its missing columns
// empty ("unknown currency \"\"") or its extra ones dropped (an amount
// written 1,234.00 without quotes would be read as 1).
func TestParseSettlementFileFieldCount(t *testing.T) {
	const head = "date,reference,type,currency,amount\n"
	for _, tt := range []struct{ line, want string }{
		{"2026-11-27,pr_1\n", "settlement file line 2 has 2 fields, the header names 5"},
		{"2026-11-27,pr_1,capture,AUD,1,234.00\n", "settlement file line 2 has 6 fields, the header names 5"},
	} {
		_, err := ParseSettlementFile(strings.NewReader(head + tt.line))
		if err == nil || AsError(err).Kind != KindInvalid || AsError(err).Message != tt.want {
			t.Errorf("%q: got %v, want %q", tt.line, err, tt.want)
		}
	}
}

// TestMatchNamesEachVariance: a reference the file names twice is a
// duplicate (not missing from the ledger), one settled in another
// currency is told apart from an amount that differs, and a refund
// matches whichever sign the file gives it, a charge only if positive.
func TestMatchNamesEachVariance(t *testing.T) {
	ledger := map[string]*Posting{
		"pr_1": {Reference: "pr_1", Currency: "AUD", Amount: 1000},
		"pr_2": {Reference: "pr_2", Currency: "AUD", Amount: 2000},
		"pr_3": {Reference: "pr_3", Currency: "AUD", Amount: 3000},
		"pr_4": {Reference: "pr_4", Currency: "AUD", Amount: 4000},
		"rf_1": {Reference: "pr_1", RefundReference: "rf_1", Currency: "AUD", Amount: -500},
		"rf_2": {Reference: "pr_2", RefundReference: "rf_2", Currency: "AUD", Amount: -700},
	}
	rec := &Reconciliation{}
	rec.match([]AcquirerRecord{
		{Line: 2, Reference: "pr_1", Currency: "AUD", Amount: 1000},
		{Line: 3, Reference: "pr_1", Currency: "AUD", Amount: 1000},
		{Line: 4, Reference: "pr_2", Currency: "NZD", Amount: 2000},
		{Line: 5, Reference: "pr_3", Currency: "AUD", Amount: 2999},
		{Line: 6, Reference: "pr_4", Currency: "AUD", Amount: -4000}, // a charge's sign counts
		{Line: 7, Reference: "rf_1", Currency: "AUD", Amount: 500},
		{Line: 8, Reference: "rf_2", Currency: "AUD", Amount: -700}, // a refund may be negative
	}, ledger, nil)
	var kinds []string
	for _, v := range rec.Variances {
		kinds = append(kinds, v.Kind)
	}
	want := []string{VarianceDuplicate, VarianceCurrency, VarianceAmount, VarianceAmount}
	if rec.Matched != 3 || strings.Join(kinds, ",") != strings.Join(want, ",") {
		t.Errorf("got %d matched and %v, want 3 and %v", rec.Matched, kinds, want)
	}
}
