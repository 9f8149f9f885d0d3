package paylink_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
	"github.com/paylink/paylink/internal/processor"
)

// payment describes a card purchase for the payment list tests.
type payment struct {
	number, email, invoice, method string
	amount                         int64
	currency                       string
}

// pay makes the purchase one minute after the previous one, so that the
// list's order is the order of the calls.
func pay(t *testing.T, env *apitest.Env, m *apitest.Merchant, p payment) *paylink.Transaction {
	t.Helper()
	ctx := context.Background()
	env.Clock.Advance(time.Minute)
	tok, err := env.Service.IssueTransactionToken(ctx, m.Merchant, m.Creds.CompanyToken)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := env.Service.Purchase(ctx, m.Merchant, paylink.PurchaseRequest{
		CompanyToken: m.Creds.CompanyToken, TransactionToken: tok,
		Customer: paylink.Customer{IPAddress: "203.0.113.7", Timezone: "UTC", Email: p.email},
		Card: &paylink.CardDetails{Number: p.number, ExpiryMonth: 12, ExpiryYear: env.Clock.Now().Year() + 3,
			CVC: "123", HolderName: "Jo Citizen"},
		InvoiceNumber: p.invoice, Amount: p.amount, Currency: p.currency, PaymentType: p.method,
	})
	if err != nil {
		t.Fatal(err)
	}
	return tx
}

// refs lists the references of a page.
func refs(ts []*paylink.Transaction) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Reference
	}
	return out
}

// TestListPayments filters, searches and pages a merchant's payments on
// both engines, and never shows another merchant's.
func TestListPayments(t *testing.T) {
	onEngines(t, func(t *testing.T, env *apitest.Env) {
		ctx := context.Background()
		m, other := env.Onboard(), env.Onboard()
		start := env.Clock.Now()
		// a..e are m's, oldest first.
		a := pay(t, env, m, payment{"4111111111111111", "Jo@Example.com", "INV-1", "", 1000, "AUD"})
		b := pay(t, env, m, payment{processor.CardDecline, "sam@example.com", "INV-2", "", 2500, "AUD"})
		c := pay(t, env, m, payment{"5555555555554444", "jo@example.com", "INV-3", paylink.PaymentTypeApplePay, 5000, "AUD"})
		env.Clock.Advance(30 * time.Second)
		mid := env.Clock.Now()
		d := pay(t, env, m, payment{"4111111111111111", "kim@example.com", "INV-4", "", 700, "NZD"})
		e := pay(t, env, m, payment{"5555555555554444", "", "", "", 9900, "AUD"})
		theirs := pay(t, env, other, payment{"4111111111111111", "jo@example.com", "INV-1", "", 1000, "AUD"})
		all := []string{e.Reference, d.Reference, c.Reference, b.Reference, a.Reference}

		for _, tt := range []struct {
			name string
			f    paylink.PaymentFilter
			want []*paylink.Transaction
		}{
			{"everything, newest first", paylink.PaymentFilter{}, []*paylink.Transaction{e, d, c, b, a}},
			{"declined", paylink.PaymentFilter{Statuses: []paylink.Status{paylink.StatusDeclined}}, []*paylink.Transaction{b}},
			{"approved or declined", paylink.PaymentFilter{Statuses: []paylink.Status{paylink.StatusApproved, paylink.StatusDeclined}},
				[]*paylink.Transaction{e, d, c, b, a}},
			{"pending", paylink.PaymentFilter{Statuses: []paylink.Status{paylink.StatusPending}}, nil},
			{"apple pay", paylink.PaymentFilter{Methods: []string{paylink.PaymentTypeApplePay}}, []*paylink.Transaction{c}},
			{"before mid", paylink.PaymentFilter{To: mid}, []*paylink.Transaction{c, b, a}},
			{"from mid", paylink.PaymentFilter{From: mid}, []*paylink.Transaction{e, d}},
			{"a date range", paylink.PaymentFilter{From: start.Add(90 * time.Second), To: mid}, []*paylink.Transaction{c, b}},
			{"NZD", paylink.PaymentFilter{Currency: "NZD"}, []*paylink.Transaction{d}},
			{"AUD 10.00 to 50.00", paylink.PaymentFilter{Currency: "aud", MinTotal: 1000, MaxTotal: 5000}, []*paylink.Transaction{c, b, a}},
			{"AUD 10.01 to 49.99", paylink.PaymentFilter{Currency: "AUD", MinTotal: 1001, MaxTotal: 4999}, []*paylink.Transaction{b}},
			{"AUD from 50.00", paylink.PaymentFilter{Currency: "AUD", MinTotal: 5000}, []*paylink.Transaction{e, c}},
			{"invoice number", paylink.PaymentFilter{Q: "INV-2"}, []*paylink.Transaction{b}},
			{"reference", paylink.PaymentFilter{Q: d.Reference}, []*paylink.Transaction{d}},
			{"email in another case", paylink.PaymentFilter{Q: " JO@example.COM "}, []*paylink.Transaction{c, a}},
			{"card last 4", paylink.PaymentFilter{Q: "4444"}, []*paylink.Transaction{e, c}},
			{"last 4 and a status", paylink.PaymentFilter{Q: "1111", Statuses: []paylink.Status{paylink.StatusDeclined}}, nil},
			{"decline card's last 4", paylink.PaymentFilter{Q: "0002"}, []*paylink.Transaction{b}},
			{"another merchant's reference", paylink.PaymentFilter{Q: theirs.Reference}, nil},
			{"no match", paylink.PaymentFilter{Q: "nothing-like-this"}, nil},
		} {
			t.Run(tt.name, func(t *testing.T) {
				page, err := env.Service.ListPayments(ctx, m.Merchant, tt.f)
				if err != nil {
					t.Fatal(err)
				}
				if got, want := refs(page.Payments), refs(tt.want); !slices.Equal(got, want) || page.Next != "" {
					t.Errorf("got %v next %q, want %v and no next page", got, page.Next, want)
				}
			})
		}

		t.Run("a payment matching twice is listed once", func(t *testing.T) {
			m3 := env.Onboard()
			x := pay(t, env, m3, payment{"4111111111111111", "dup@example.com", "DUP@example.com", "", 100, "AUD"})
			// An invoice number that is another payment's reference is
			// refused now (checkInvoice); one stored before that rule is
			// written by hand.
			y := pay(t, env, m3, payment{"4111111111111111", "", "DUP-Y", "", 100, "AUD"})
			if _, err := env.WriterDB(t).Exec(`UPDATE transactions SET invoice_number = $1 WHERE reference = $2`, x.Reference, y.Reference); err != nil {
				t.Fatal(err)
			}
			for q, want := range map[string][]string{
				"dup@example.com": {x.Reference},
				x.Reference:       {y.Reference, x.Reference},
			} {
				page, err := env.Service.ListPayments(ctx, m3.Merchant, paylink.PaymentFilter{Q: q})
				if err != nil {
					t.Fatal(err)
				}
				if got := refs(page.Payments); !slices.Equal(got, want) {
					t.Errorf("q %s: got %v, want %v", q, got, want)
				}
			}
		})

		t.Run("pages", func(t *testing.T) {
			var got []string
			f := paylink.PaymentFilter{Limit: 2}
			for range 10 {
				page, err := env.Service.ListPayments(ctx, m.Merchant, f)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, refs(page.Payments)...)
				if page.Next == "" {
					break
				}
				f.Cursor = page.Next
			}
			if !slices.Equal(got, all) {
				t.Errorf("got %v over pages of 2, want %v", got, all)
			}
		})

		t.Run("bad filters", func(t *testing.T) {
			for _, tt := range []struct {
				name, field string
				f           paylink.PaymentFilter
			}{
				{"unknown status", "status", paylink.PaymentFilter{Statuses: []paylink.Status{"PAID"}}},
				{"internal status", "status", paylink.PaymentFilter{Statuses: []paylink.Status{paylink.StatusProcessing}}},
				{"unknown method", "method", paylink.PaymentFilter{Methods: []string{"Cash"}}},
				{"empty date range", "to", paylink.PaymentFilter{From: mid, To: mid}},
				{"amount without currency", "currency", paylink.PaymentFilter{MinTotal: 100}},
				{"unknown currency", "currency", paylink.PaymentFilter{Currency: "XXX"}},
				{"negative amount", "amount", paylink.PaymentFilter{Currency: "AUD", MinTotal: -1}},
				{"max below min", "max_amount", paylink.PaymentFilter{Currency: "AUD", MinTotal: 500, MaxTotal: 100}},
				{"search too long", "q", paylink.PaymentFilter{Q: strings.Repeat("x", 256)}},
				{"search with a control character", "q", paylink.PaymentFilter{Q: "INV\x00-1"}},
				{"limit too large", "limit", paylink.PaymentFilter{Limit: paylink.MaxPaymentPage + 1}},
				{"negative limit", "limit", paylink.PaymentFilter{Limit: -1}},
				{"forged cursor", "cursor", paylink.PaymentFilter{Cursor: "not a cursor"}},
			} {
				t.Run(tt.name, func(t *testing.T) {
					_, err := env.Service.ListPayments(ctx, m.Merchant, tt.f)
					wantError(t, tt.name, err, paylink.KindInvalid, paylink.CodeInvalidRequest)
					if e := paylink.AsError(err); e.Fields[tt.field] == "" {
						t.Errorf("got fields %v, want a problem with %s", e.Fields, tt.field)
					}
				})
			}
		})
	})
}

// TestWritePaymentsCSV exports every payment of a filter over several
// pages, newest first, once each, with formula-like text defused, and
// writes nothing for a bad filter.
func TestWritePaymentsCSV(t *testing.T) {
	onEngines(t, func(t *testing.T, env *apitest.Env) {
		ctx := context.Background()
		m, other := env.Onboard(), env.Onboard()
		n := 2*paylink.MaxPaymentPage + 3
		base := env.Clock.Now().UTC().Truncate(time.Second)
		err := env.Store.Update(ctx, func(tx paylink.Tx) error {
			for i := range n {
				for _, owner := range []*apitest.Merchant{m, other} {
					status := paylink.StatusApproved
					if i%3 == 0 {
						status = paylink.StatusDeclined
					}
					tr := &paylink.Transaction{Reference: fmt.Sprintf("T%s%05d", owner.ID, i), MerchantID: owner.ID,
						InvoiceNumber: fmt.Sprintf("=HYPERLINK(%d)", i), PaymentType: paylink.PaymentTypeCard, Channel: paylink.ChannelAPI,
						Status: status, Currency: "AUD", Amount: 1000 + int64(i), Total: 1000 + int64(i),
						CreatedAt: base.Add(time.Duration(i) * time.Second), UpdatedAt: base,
						Details: paylink.TransactionDetails{Customer: paylink.Customer{Email: "jo@example.com"},
							Card: &paylink.CardInfo{Masked: "411111******1111", Brand: "visa"}}}
					if err := tx.CreateTransaction(tr); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := env.Service.WritePaymentsCSV(ctx, &buf, m.Merchant, paylink.PaymentFilter{Q: "1111", Cursor: "ignored", Limit: 1}); err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(&buf).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != n+1 || rows[0][0] != "reference" {
			t.Fatalf("got %d rows starting %v, want a header and %d payments", len(rows), rows[0], n)
		}
		for i, row := range rows[1:] {
			want := n - 1 - i
			if row[0] != fmt.Sprintf("T%s%05d", m.ID, want) || row[8] != fmt.Sprintf("%d.%02d", 10+want/100, want%100) ||
				row[10] != fmt.Sprintf("'=HYPERLINK(%d)", want) || row[13] != "1111" {
				t.Fatalf("row %d: got %v, want payment %d of %s, total and defused invoice", i+1, row, want, m.ID)
			}
		}

		buf.Reset()
		if err := env.Service.WritePaymentsCSV(ctx, &buf, m.Merchant, paylink.PaymentFilter{Statuses: []paylink.Status{paylink.StatusDeclined}}); err != nil {
			t.Fatal(err)
		}
		if got, want := strings.Count(buf.String(), "\n")-1, (n+2)/3; got != want {
			t.Errorf("declined export: got %d rows, want %d", got, want)
		}

		buf.Reset()
		err = env.Service.WritePaymentsCSV(ctx, &buf, m.Merchant, paylink.PaymentFilter{Statuses: []paylink.Status{"PAID"}})
		wantError(t, "bad filter", err, paylink.KindInvalid, paylink.CodeInvalidRequest)
		if buf.Len() != 0 {
			t.Errorf("bad filter: wrote %q, want nothing", buf.String())
		}
	})
}

// TestPaymentsCSVTotalsMoneyTaken: the export's taken column is the
// total of an APPROVED payment (a sale, a captured hold, a cleared
// debit) and 0.00 for a decline, a failure, a hold held or released and
// a payment in progress; taken_net_of_refunds deducts refunds; so their
// sums are money taken, while total stays what each payment was for.
func TestPaymentsCSVTotalsMoneyTaken(t *testing.T) {
	onEngines(t, func(t *testing.T, env *apitest.Env) {
		ctx := context.Background()
		m := env.Onboard()
		base := env.Clock.Now().UTC().Truncate(time.Second)
		payments := []struct {
			status          paylink.Status
			method          string
			total, refunded int64
		}{
			{paylink.StatusApproved, paylink.PaymentTypeCard, 1000, 250}, // a sale, partly refunded
			{paylink.StatusApproved, paylink.PaymentTypeCard, 3000, 0},   // a captured hold
			{paylink.StatusApproved, paylink.PaymentTypeBankAccount, 700, 0},
			{paylink.StatusDeclined, paylink.PaymentTypeCard, 2000, 0},
			{paylink.StatusFailed, paylink.PaymentTypeCard, 500, 0},
			{paylink.StatusPreAuthorised, paylink.PaymentTypeCard, 4000, 0},
			{paylink.StatusPreAuthorisedReversed, paylink.PaymentTypeCard, 4500, 0},
			{paylink.StatusProcessing, paylink.PaymentTypeCard, 600, 0},
			{paylink.StatusPending, paylink.PaymentTypeBankAccount, 800, 0},
		}
		var trs []*paylink.Transaction
		for i, p := range payments {
			trs = append(trs, &paylink.Transaction{Reference: fmt.Sprintf("T%s%02d", m.ID, i), MerchantID: m.ID, PaymentType: p.method,
				Channel: paylink.ChannelAPI, Status: p.status, Currency: "AUD", Amount: p.total, Total: p.total, Refunded: p.refunded,
				CreatedAt: base.Add(time.Duration(i) * time.Second), UpdatedAt: base})
		}
		if err := env.Store.Update(ctx, func(tx paylink.Tx) error { return createAll(tx, trs) }); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := env.Service.WritePaymentsCSV(ctx, &buf, m.Merchant, paylink.PaymentFilter{}); err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(&buf).ReadAll()
		if err != nil || len(rows) != len(payments)+1 {
			t.Fatalf("export: got %d rows (%v), want a header and %d payments", len(rows), err, len(payments))
		}
		col := map[string]int{}
		for i, name := range rows[0] {
			col[name] = i
		}
		for _, name := range []string{"total", "taken", "taken_net_of_refunds"} {
			if _, ok := col[name]; !ok {
				t.Fatalf("header %v has no %s column", rows[0], name)
			}
		}
		aud, _ := paylink.LookupCurrency("AUD")
		sum := func(name string) string {
			var n int64
			for _, row := range rows[1:] {
				v, err := paylink.ParseAmount(row[col[name]], aud)
				if err != nil {
					t.Fatalf("%s %q: %v", name, row[col[name]], err)
				}
				n += v
			}
			return paylink.FormatAmount(n, aud)
		}
		if got := sum("taken"); got != "47.00" {
			t.Errorf("the sum of taken: got %s, want 47.00 (the three approved payments only)", got)
		}
		if got := sum("taken_net_of_refunds"); got != "44.50" {
			t.Errorf("the sum of taken_net_of_refunds: got %s, want 44.50", got)
		}
		if got := sum("total"); got != "171.00" {
			t.Errorf("the sum of total: got %s, want 171.00 (every payment's total, as before)", got)
		}
	})
}

// createAll stores the transactions.
func createAll(tx paylink.Tx, trs []*paylink.Transaction) error {
	for _, tr := range trs {
		if err := tx.CreateTransaction(tr); err != nil {
			return err
		}
	}
	return nil
}

// TestParsePaymentFilter reads the dashboard's query string.
func TestParsePaymentFilter(t *testing.T) {
	day := func(s string) time.Time { d, _ := time.Parse(time.DateOnly, s); return d }
	for _, tt := range []struct {
		query string
		want  paylink.PaymentFilter
		field string // the field at fault, "" when valid
	}{
		{"", paylink.PaymentFilter{}, ""},
		{"status=approved,declined&status=PENDING&method=creditcard&method=BankAccount",
			paylink.PaymentFilter{Statuses: []paylink.Status{"APPROVED", "DECLINED", "PENDING"},
				Methods: []string{paylink.PaymentTypeCard, paylink.PaymentTypeBankAccount}}, ""},
		{"from=2026-11-01&to=2026-11-30", paylink.PaymentFilter{From: day("2026-11-01"), To: day("2026-12-01")}, ""},
		{"currency=aud&min_amount=10.50&max_amount=100", paylink.PaymentFilter{Currency: "AUD", MinTotal: 1050, MaxTotal: 10000}, ""},
		{"currency=JPY&min_amount=500", paylink.PaymentFilter{Currency: "JPY", MinTotal: 500}, ""},
		{"q=jo%40example.com&cursor=abc&limit=20", paylink.PaymentFilter{Q: "jo@example.com", Cursor: "abc", Limit: 20}, ""},
		{"method=cash", paylink.PaymentFilter{}, "method"},
		{"from=2026-13-01", paylink.PaymentFilter{}, "from"},
		{"to=yesterday", paylink.PaymentFilter{}, "to"},
		{"min_amount=10", paylink.PaymentFilter{}, "currency"},
		{"currency=AUD&max_amount=10.505", paylink.PaymentFilter{}, "max_amount"},
		{"currency=AUD&min_amount=-1", paylink.PaymentFilter{}, "min_amount"},
		{"limit=ten", paylink.PaymentFilter{}, "limit"},
		{"limit=0", paylink.PaymentFilter{}, "limit"},
	} {
		t.Run(tt.query, func(t *testing.T) {
			v, err := url.ParseQuery(tt.query)
			if err != nil {
				t.Fatal(err)
			}
			got, err := paylink.ParsePaymentFilter(v)
			if tt.field != "" {
				if e := paylink.AsError(err); e.Kind != paylink.KindInvalid || e.Fields[tt.field] == "" {
					t.Errorf("got %v (fields %v), want an invalid request naming %s", err, e.Fields, tt.field)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
	// A currency typed but unknown is not "required" (the accessibility
	// sweep found a staff member told so).
	_, err := paylink.ParsePaymentFilter(url.Values{"currency": {"ZZZZ"}, "min_amount": {"10"}})
	if got := paylink.AsError(err).Fields["currency"]; !strings.Contains(got, "supported ISO 4217 code") {
		t.Errorf("an unknown currency with an amount bound: got %q, want it called not supported", got)
	}
}
