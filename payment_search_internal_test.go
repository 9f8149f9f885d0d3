package paylink

import "testing"

// TestCSVTextDefusesEveryCellStart: a formula character is quoted at the
// start and wherever a spreadsheet splitting on ';' or ',' would start a
// cell; other text is kept as it is.
func TestCSVTextDefusesEveryCellStart(t *testing.T) {
	for in, want := range map[string]string{
		"=1+1":               "'=1+1",
		"-5":                 "'-5",
		"@SUM(A1)":           "'@SUM(A1)",
		";=1+1":              ";'=1+1",
		"INV-7;=HYPERLINK()": "INV-7;'=HYPERLINK()",
		"a, +1":              "a, '+1",
		"INV-7":              "INV-7",
		"jo@example.com":     "jo@example.com",
		"":                   "",
		"a;b":                "a;b",
		// A quote opens a quoted cell: the formula after it still starts
		// the cell (the reports sweep: e;"=2+3 read as =2+3).
		`e;"=2+3;y`:    `e;"'=2+3;y`,
		`b; "@SUM(A1)`: `b; "'@SUM(A1)`,
	} {
		if got := csvText(in); got != want {
			t.Errorf("csvText(%q) = %q, want %q", in, got, want)
		}
	}
}
