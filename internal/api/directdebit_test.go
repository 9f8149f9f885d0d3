package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
	"github.com/paylink/paylink/internal/processor"
)

// testAccount is the test account number that must never appear in clear.
const testAccount = "987654321"

// debitBody is a direct debit request with a fresh transaction token.
func debitBody(env *apitest.Env, m *apitest.Merchant, account, amount string, mutate ...func(map[string]any)) map[string]any {
	env.T.Helper()
	b := map[string]any{
		"token":        map[string]any{"company_token": m.Creds.CompanyToken, "transaction_token": env.TransactionToken(m)},
		"bank_account": map[string]any{"number": account, "holder_name": "Jo Citizen", "bsb": "062-000"},
		"customer": map[string]any{"customer_reference": "C-1", "customer_email": "jo@example.com", "ip_address": "2001:db8::7",
			"timezone": "Australia/Sydney", "user_agent": "Mozilla/5.0 (X11; Linux x86_64)", "accepted_terms_conditions": "true"},
		"purchase": map[string]any{"amount": json.Number(amount), "currency": "AUD", "should_service_apply_fee": false},
		"metadata": map[string]any{"channel": "web"},
	}
	for _, f := range mutate {
		f(b)
	}
	return b
}

// refundBody is a direct debit refund request with a fresh transaction token.
func refundBody(env *apitest.Env, m *apitest.Merchant, amount string) map[string]any {
	env.T.Helper()
	return map[string]any{
		"token":    map[string]any{"company_token": m.Creds.CompanyToken, "transaction_token": env.TransactionToken(m)},
		"customer": map[string]any{"ip_address": "203.0.113.7", "timezone": "UTC"},
		"refund":   map[string]any{"amount": json.Number(amount), "currency": "AUD"},
	}
}

// fieldProblem is the problem an error body names for a dotted field.
func fieldProblem(r apitest.Response, field string) string {
	fields, _ := r.Get("fields").(map[string]any)
	s, _ := fields[field].(string)
	return s
}

// debit submits a direct debit and returns its reference.
func debit(t *testing.T, env *apitest.Env, m *apitest.Merchant, account, amount string) string {
	t.Helper()
	r := env.Post("/v5/direct_debit", m, debitBody(env, m, account, amount))
	if r.Status != http.StatusOK || r.Str("purchase.status") != "PENDING" {
		t.Fatalf("direct debit: got %d %s, want 200 PENDING", r.Status, r.Raw)
	}
	return r.Str("purchase.purchase_reference")
}

// clearAll advances past the clearing period and runs the clearing job.
func clearAll(t *testing.T, env *apitest.Env) int {
	t.Helper()
	env.Clock.Advance(env.Service.Config().DirectDebitClearing + time.Second)
	n, err := env.Service.ClearDirectDebits(context.Background())
	if err != nil {
		t.Fatalf("clear direct debits: %v", err)
	}
	return n
}

// status looks a transaction up over HTTP (4.8).
func status(t *testing.T, env *apitest.Env, m *apitest.Merchant, ref string) apitest.Response {
	t.Helper()
	return env.Post("/v5/purchase/"+ref, m, map[string]any{"company_token": m.Creds.CompanyToken})
}

// stored loads a transaction through the service, for fields the API
// does not show.
func stored(t *testing.T, env *apitest.Env, m *apitest.Merchant, ref string) *paylink.Transaction {
	t.Helper()
	tr, err := env.Service.TransactionStatus(context.Background(), m.Merchant, ref)
	if err != nil {
		t.Fatalf("load %s: %v", ref, err)
	}
	return tr
}

// clearedDebit starts an API with a merchant and a cleared debit of 10.00
// from testAccount.
func clearedDebit(t *testing.T) (*apitest.Env, *apitest.Merchant, string) {
	t.Helper()
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	ref := debit(t, env, m, testAccount, "10")
	if n := clearAll(t, env); n != 1 {
		t.Fatalf("clearing: got %d moved, want 1", n)
	}
	return env, m, ref
}

// wantRefunded checks a transaction's refunded total.
func wantRefunded(t *testing.T, env *apitest.Env, m *apitest.Merchant, ref string, want int64) {
	t.Helper()
	if got := stored(t, env, m, ref).Refunded; got != want {
		t.Errorf("refunded total of %s: got %d, want %d", ref, got, want)
	}
}

func TestDirectDebitFeePreviewEqualsAppliedFee(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	def := env.Onboard()
	custom := env.Onboard(func(n *paylink.NewMerchant) {
		n.Settings.DirectDebit = &paylink.DirectDebitFeeConfig{Percent: 12500, Fixed: 0, Cap: 0}
	})
	tests := []struct {
		name                       string
		m                          *apitest.Merchant
		amount                     string
		fee, total, percent, fixed string
		capped                     string
	}{
		{"default", def, "10.00", "0.35", "10.35", "0.5", "0.3", "5"},
		{"default rounds half up", def, "11", "0.36", "11.36", "0.5", "0.3", "5"},
		{"default capped", def, "10000", "5", "10005", "0.5", "0.3", "5"},
		{"merchant config, no cap", custom, "1000.01", "12.5", "1012.51", "1.25", "0", "0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := env.Post("/v5/direct_debit_fee", tt.m, map[string]any{
				"token":    map[string]any{"company_token": tt.m.Creds.CompanyToken},
				"purchase": map[string]any{"amount": tt.amount, "currency": "AUD"},
			})
			if q.Status != http.StatusOK || q.Str("response_code") != "success" {
				t.Fatalf("fee preview: got %d %s", q.Status, q.Raw)
			}
			got := []string{q.Str("fee.amount"), q.Str("fee.total_amount"), q.Str("fee.fee_percent"),
				q.Str("fee.fee_fixed"), q.Str("fee.fee_capped"), q.Str("fee.currency")}
			want := []string{tt.fee, tt.total, tt.percent, tt.fixed, tt.capped, "AUD"}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("fee record: got %v, want %v", got, want)
			}
			with := env.Post("/v5/direct_debit", tt.m, debitBody(env, tt.m, testAccount, tt.amount, func(b map[string]any) {
				apitest.Set(b, "purchase.should_service_apply_fee", "true")
			}))
			if with.Str("purchase.fee_amount") != q.Str("fee.amount") || with.Str("purchase.total_amount") != q.Str("fee.total_amount") {
				t.Errorf("applied fee: got fee %s total %s, want the preview's %s and %s (%s)",
					with.Str("purchase.fee_amount"), with.Str("purchase.total_amount"), tt.fee, tt.total, with.Raw)
			}
			without := env.Post("/v5/direct_debit", tt.m, debitBody(env, tt.m, testAccount, tt.amount))
			if without.Str("purchase.fee_amount") != "0" || without.Str("purchase.total_amount") != without.Str("purchase.amount") {
				t.Errorf("fee not applied: got fee %s total %s amount %s, want 0 and total = amount",
					without.Str("purchase.fee_amount"), without.Str("purchase.total_amount"), without.Str("purchase.amount"))
			}
			for _, r := range []apitest.Response{with, without} {
				tr := stored(t, env, tt.m, r.Str("purchase.purchase_reference"))
				cur, _ := paylink.LookupCurrency("AUD")
				if got := paylink.FormatAmountShort(tr.Details.DirectDebitFee, cur); got != tt.fee {
					t.Errorf("stored DD fee: got %s, want %s whether or not it was applied", got, tt.fee)
				}
			}
		})
	}
}

func TestDirectDebitPendingThenCleared(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	r := env.Post("/v5/direct_debit", m, debitBody(env, m, testAccount, "25.50", func(b map[string]any) {
		apitest.Set(b, "bank_account.bsb", "062000")
		apitest.Set(b, "purchase.invoice_number", 4711)
	}))
	if r.Status != http.StatusOK {
		t.Fatalf("direct debit: got %d %s", r.Status, r.Raw)
	}
	wantAccount := map[string]any{"number": "******321", "holder_name": "Jo Citizen", "bsb": "062-000"}
	if got := r.Get("bank_account"); !reflect.DeepEqual(got, wantAccount) {
		t.Errorf("bank_account: got %v, want %v", got, wantAccount)
	}
	if got := r.Get("card"); !reflect.DeepEqual(got, wantAccount) {
		t.Errorf("card (sample alias): got %v, want %v", got, wantAccount)
	}
	got := []string{r.Str("purchase.status"), r.Str("purchase.amount"), r.Str("purchase.total_amount"),
		r.Str("purchase.currency"), r.Str("response_code")}
	if want := []string{"PENDING", "25.5", "25.5", "AUD", "success"}; !reflect.DeepEqual(got, want) {
		t.Errorf("purchase: got %v, want %v", got, want)
	}
	if r.Str("purchase.transaction_time_utc") == "" {
		t.Errorf("transaction_time_utc: got empty, want the submission time")
	}
	ref := r.Str("purchase.purchase_reference")
	for _, key := range []string{ref, "4711"} {
		if s := status(t, env, m, key); s.Str("status") != "PENDING" || s.Str("amount") != "25.5" {
			t.Errorf("status by %s: got %d %s, want PENDING 25.5", key, s.Status, s.Raw)
		}
	}
	if n, err := env.Service.ClearDirectDebits(context.Background()); err != nil || n != 0 {
		t.Errorf("clearing before the period: got %d, %v; want 0 moved", n, err)
	}
	if n := clearAll(t, env); n != 1 {
		t.Errorf("clearing: got %d moved, want 1", n)
	}
	if s := status(t, env, m, ref); s.Str("status") != "APPROVED" {
		t.Errorf("after clearing: got %s, want APPROVED", s.Raw)
	}
	if n := clearAll(t, env); n != 0 {
		t.Errorf("second clearing: got %d moved, want 0", n)
	}
	other := env.Onboard()
	if s := status(t, env, other, ref); s.Status != http.StatusNotFound {
		t.Errorf("another merchant's debit: got %d, want 404", s.Status)
	}
}

func TestDirectDebitDishonours(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	tests := []struct{ account, code, reason string }{
		{"12340002", "6", "Refer to customer: insufficient funds"},
		{"12340003", "3", "Account closed"},
		{"000050005", "5", "No account or incorrect account number"},
	}
	refs := map[string]string{}
	for _, tt := range tests {
		refs[tt.account] = debit(t, env, m, tt.account, "40")
	}
	if n := clearAll(t, env); n != len(tests) {
		t.Errorf("clearing: got %d moved, want %d", n, len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.account, func(t *testing.T) {
			ref := refs[tt.account]
			if s := status(t, env, m, ref); s.Str("status") != "DECLINED" {
				t.Errorf("status: got %s, want DECLINED", s.Raw)
			}
			d := stored(t, env, m, ref).Details
			if d.Decline == nil || d.Decline.ProcessorCode != tt.code || d.Decline.ProcessorMessage != tt.reason {
				t.Errorf("dishonour: got %+v, want code %s %q", d.Decline, tt.code, tt.reason)
			}
		})
	}
}

func TestClearDirectDebitsConcurrentlyOnce(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	const debits = 6
	for i := range debits {
		debit(t, env, m, fmt.Sprintf("1234500%02d", i+10), "12")
	}
	env.Clock.Advance(env.Service.Config().DirectDebitClearing + time.Second)
	var wg sync.WaitGroup
	moved := make([]int, 4)
	for i := range moved {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := env.Service.ClearDirectDebits(context.Background())
			if err != nil {
				t.Errorf("clear: %v", err)
			}
			moved[i] = n
		}()
	}
	wg.Wait()
	total := 0
	for _, n := range moved {
		total += n
	}
	if total != debits {
		t.Errorf("got %d debits moved across %v, want each of %d exactly once", total, moved, debits)
	}
}

// TestClearingGoesPastDebitsTheBankDoesNotAnswer: more than a batch of
// debits the bank never answers about, all older than one it does, hold
// nothing up: the run reads on past them and its error counts them (a
// sweep found each pass starting from the oldest, so that 200 such
// debits stopped all clearing).
func TestClearingGoesPastDebitsTheBankDoesNotAnswer(t *testing.T) {
	bank := &unansweringBank{ending: "0008"}
	env := apitest.Start(t, apitest.Options{Bank: bank})
	m := env.Onboard()
	var unanswered []string
	for i := range 201 {
		unanswered = append(unanswered, debit(t, env, m, fmt.Sprintf("12%03d0008", i), "3"))
	}
	env.Clock.Advance(time.Second) // the answered debit is the newest
	answered := debit(t, env, m, testAccount, "3")
	env.Clock.Advance(env.Service.Config().DirectDebitClearing + time.Second)
	for run, want := range []int{1, 0} {
		n, err := env.Service.ClearDirectDebits(context.Background())
		if n != want || !errors.Is(err, errBankDown) || !strings.Contains(err.Error(), "201 due direct debits left PENDING") {
			t.Errorf("clearing run %d: got %d moved, %v; want %d and the 201 unanswered counted", run+1, n, err, want)
		}
	}
	if s := status(t, env, m, answered); s.Str("status") != "APPROVED" {
		t.Errorf("the debit the bank answered about: got %s, want APPROVED", s.Raw)
	}
	for _, ref := range []string{unanswered[0], unanswered[200]} {
		if s := status(t, env, m, ref); s.Str("status") != "PENDING" {
			t.Errorf("a debit the bank did not answer about: got %s, want PENDING", s.Raw)
		}
	}
}

// unansweringBank is the sandbox bank failing every clearing query about
// an account number with that ending.
type unansweringBank struct {
	processor.Bank
	ending string
}

func (b *unansweringBank) ClearDebit(ctx context.Context, req paylink.BankDebit) (paylink.BankClearing, error) {
	if strings.HasSuffix(req.Account.Number, b.ending) {
		return paylink.BankClearing{}, errBankDown
	}
	return b.Bank.ClearDebit(ctx, req)
}

func TestDirectDebitRefunds(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m, other := env.Onboard(), env.Onboard()
	cleared := debit(t, env, m, testAccount, "10")
	dishonoured := debit(t, env, m, "55550002", "10")
	rejecting := debit(t, env, m, "77770009", "10")
	clearAll(t, env)
	pending := debit(t, env, m, testAccount, "10")
	card := env.Post("/v5/purchase", m, env.CardPurchase(m, "4242424242424242", "10"))

	steps := []struct {
		name         string
		m            *apitest.Merchant
		ref, amount  string
		status       int
		code, refund string
	}{
		{"partial", m, cleared, "4", http.StatusOK, "success", "APPROVED"},
		{"above what is left", m, cleared, "6.01", http.StatusBadRequest, paylink.CodeAmountExceedsRefundable, ""},
		{"the rest", m, cleared, "6", http.StatusOK, "success", "APPROVED"},
		{"after full refund", m, cleared, "0.01", http.StatusBadRequest, paylink.CodeAmountExceedsRefundable, ""},
		{"pending debit", m, pending, "1", http.StatusConflict, paylink.CodeNotRefundable, ""},
		{"dishonoured debit", m, dishonoured, "1", http.StatusConflict, paylink.CodeNotRefundable, ""},
		{"another merchant's debit", other, cleared, "1", http.StatusNotFound, paylink.CodeNotFound, ""},
		{"a card purchase", m, card.Str("purchase.purchase_reference"), "1", http.StatusNotFound, paylink.CodeNotFound, ""},
		{"unknown reference", m, "dd_nope", "1", http.StatusNotFound, paylink.CodeNotFound, ""},
		{"bank rejects", m, rejecting, "10", http.StatusOK, "failed", "FAILED"},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			r := env.Post("/v5/direct_debit/"+st.ref+"/refund", st.m, refundBody(env, st.m, st.amount))
			if r.Status != st.status || r.Str("response_code") != st.code || r.Str("refund.status") != st.refund {
				t.Fatalf("got %d %s, want %d %s refund %q", r.Status, r.Raw, st.status, st.code, st.refund)
			}
			if st.status != http.StatusOK {
				return
			}
			if r.Str("refund.amount") != st.amount || r.Str("bank_account.number") != r.Str("card.number") {
				t.Errorf("refund result: got %s", r.Raw)
			}
			refs := [2]string{r.Str("refund.purchase_reference"), r.Str("refund.refund_reference")}
			switch {
			case st.refund == "FAILED" && refs != [2]string{}:
				t.Errorf("references of a FAILED refund: got %q, want both empty (spec 2.5, 7.2)", refs)
			case st.refund != "FAILED" && (refs[0] != st.ref || refs[1] == ""):
				t.Errorf("references: got %q, want %s and a refund reference", refs, st.ref)
			}
		})
	}
	wantRefunded(t, env, m, cleared, 1000)
	wantRefunded(t, env, m, rejecting, 0) // the rejected refund's reservation was released
	if s := env.Post("/v5/refund/"+rejecting, m, map[string]any{"company_token": m.Creds.CompanyToken}); s.Str("status") != "FAILED" ||
		s.Str("purchase_reference") != rejecting || s.Str("refund_reference") == "" {
		t.Errorf("status of the rejected refund: got %s, want FAILED with both references", s.Raw)
	}
}

func TestDirectDebitRefundRace(t *testing.T) {
	env, m, ref := clearedDebit(t)
	bodies := make([]map[string]any, 10)
	for i := range bodies {
		bodies[i] = refundBody(env, m, "3")
	}
	codes := make([]int, len(bodies))
	var wg sync.WaitGroup
	for i := range bodies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i] = env.Post("/v5/direct_debit/"+ref+"/refund", m, bodies[i]).Status
		}()
	}
	wg.Wait()
	ok := 0
	for _, c := range codes {
		switch c {
		case http.StatusOK:
			ok++
		case http.StatusBadRequest:
		default:
			t.Errorf("got status %d in %v, want only 200 or 400", c, codes)
		}
	}
	if ok != 3 {
		t.Errorf("got %d refunds of 3.00 against 10.00 approved (%v), want 3", ok, codes)
	}
	wantRefunded(t, env, m, ref, 900)
}

func TestDirectDebitBadInput(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m, other := env.Onboard(), env.Onboard()
	set := func(path string, v any) func(map[string]any) {
		return func(b map[string]any) { apitest.Set(b, path, v) }
	}
	del := func(path string) func(map[string]any) {
		return func(b map[string]any) { apitest.Delete(b, path) }
	}
	tests := []struct {
		name   string
		mutate func(map[string]any)
		status int
		field  string
	}{
		{"bsb too short", set("bank_account.bsb", "06200"), 400, "bank_account.bsb"},
		{"bsb with letters", set("bank_account.bsb", "06A-000"), 400, "bank_account.bsb"},
		{"bsb missing", del("bank_account.bsb"), 400, "bank_account.bsb"},
		{"account with letters", set("bank_account.number", "12345678A"), 400, "bank_account.number"},
		{"account too short", set("bank_account.number", "1234"), 400, "bank_account.number"},
		{"account too long", set("bank_account.number", "1234567890"), 400, "bank_account.number"},
		{"account missing", del("bank_account.number"), 400, "bank_account.number"},
		{"holder missing", del("bank_account.holder_name"), 400, "bank_account.holder_name"},
		{"holder blank", set("bank_account.holder_name", "  "), 400, "bank_account.holder_name"},
		{"amount missing", del("purchase.amount"), 400, "purchase.amount"},
		{"amount zero", set("purchase.amount", "0"), 400, "purchase.amount"},
		{"amount negative", set("purchase.amount", "-5"), 400, "purchase.amount"},
		{"amount three decimals", set("purchase.amount", "10.001"), 400, "purchase.amount"},
		{"amount not a number", set("purchase.amount", "ten"), 400, "purchase.amount"},
		{"amount too large", set("purchase.amount", "10000000001"), 400, "purchase.amount"},
		{"currency not AUD", set("purchase.currency", "NZD"), 400, "purchase.currency"},
		{"currency missing", del("purchase.currency"), 400, "purchase.currency"},
		{"pre-authorisation", set("purchase.should_service_apply_pre_authorisation", true), 400,
			"purchase.should_service_apply_pre_authorisation"},
		{"fee flag not boolean", set("purchase.should_service_apply_fee", "maybe"), 400, "purchase.should_service_apply_fee"},
		{"ip address missing", del("customer.ip_address"), 400, "customer.ip_address"},
		{"timezone invalid", set("customer.timezone", "Mars/Olympus"), 400, "customer.timezone"},
		{"transaction token missing", del("token.transaction_token"), 400, "token.transaction_token"},
		{"transaction token unknown", set("token.transaction_token", "nope"), 400, ""},
		{"company token of another merchant", set("token.company_token", other.Creds.CompanyToken), 403, ""},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			invoice := fmt.Sprintf("BAD-%d", i)
			r := env.Post("/v5/direct_debit", m, debitBody(env, m, testAccount, "10", set("purchase.invoice_number", invoice), tt.mutate))
			if r.Status != tt.status || r.Get("purchase") != nil {
				t.Fatalf("got %d %s, want %d without a purchase", r.Status, r.Raw, tt.status)
			}
			if tt.field != "" && fieldProblem(r, tt.field) == "" {
				t.Errorf("fields: got %v, want a problem for %s", r.Get("fields"), tt.field)
			}
			if s := status(t, env, m, invoice); s.Status != http.StatusNotFound {
				t.Errorf("stored: got %d %s for invoice %s, want 404 (nothing stored)", s.Status, s.Raw, invoice)
			}
		})
	}
	if r := env.Post("/v5/direct_debit_fee", m, map[string]any{"token": map[string]any{"company_token": m.Creds.CompanyToken},
		"purchase": map[string]any{"amount": "1.234", "currency": "AUD"}}); r.Status != http.StatusBadRequest {
		t.Errorf("fee preview with 3 decimals: got %d %s, want 400", r.Status, r.Raw)
	}
	if r := env.Post("/v5/direct_debit_fee", m, map[string]any{"token": map[string]any{"company_token": other.Creds.CompanyToken},
		"purchase": map[string]any{"amount": "1", "currency": "AUD"}}); r.Status != http.StatusForbidden {
		t.Errorf("fee preview with another merchant's company token: got %d %s, want 403", r.Status, r.Raw)
	}
}

func TestDirectDebitBadRefundInput(t *testing.T) {
	env, m, ref := clearedDebit(t)
	tests := []struct {
		name, path string
		value      any
		field      string
	}{
		{"amount three decimals", "refund.amount", "1.001", "refund.amount"},
		{"amount zero", "refund.amount", "0", "refund.amount"},
		{"currency not AUD", "refund.currency", "USD", "refund.currency"},
		{"timezone missing", "customer.timezone", "", "customer.timezone"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := refundBody(env, m, "1")
			apitest.Set(b, tt.path, tt.value)
			r := env.Post("/v5/direct_debit/"+ref+"/refund", m, b)
			if r.Status != http.StatusBadRequest || fieldProblem(r, tt.field) == "" {
				t.Errorf("got %d %s, want 400 naming %s", r.Status, r.Raw, tt.field)
			}
		})
	}
	wantRefunded(t, env, m, ref, 0)
}

func TestDirectDebitAccountNumberNeverInClear(t *testing.T) {
	env, m, ref := clearedDebit(t)
	if r := env.Post("/v5/direct_debit/"+ref+"/refund", m, refundBody(env, m, "5")); r.Status != http.StatusOK {
		t.Fatalf("refund: got %d %s", r.Status, r.Raw)
	}
	var all []byte
	for _, suffix := range []string{"", "-wal", "-shm"} {
		raw, err := os.ReadFile(env.DBPath + suffix)
		if os.IsNotExist(err) && suffix != "" {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(raw, []byte(testAccount)) {
			t.Errorf("database file %s: got the full account number, want it only sealed", env.DBPath+suffix)
		}
		all = append(all, raw...)
	}
	if !bytes.Contains(all, []byte("******321")) {
		t.Errorf("database files: got no masked account number, want the debit's masked number (files not read?)")
	}
	if bytes.Contains([]byte(env.LogText()), []byte(testAccount)) {
		t.Errorf("logs: got the full account number, want none")
	}
}

// flakyBank is the sandbox bank behind a switch that makes it unreachable:
// the outer edge a real BECS connection would be.
type flakyBank struct {
	processor.Bank
	down atomic.Bool
}

var errBankDown = errors.New("connection refused")

func (b *flakyBank) SubmitDebit(ctx context.Context, req paylink.BankDebit) (paylink.BankSubmission, error) {
	if b.down.Load() {
		return paylink.BankSubmission{}, errBankDown
	}
	return b.Bank.SubmitDebit(ctx, req)
}

func (b *flakyBank) ClearDebit(ctx context.Context, req paylink.BankDebit) (paylink.BankClearing, error) {
	if b.down.Load() {
		return paylink.BankClearing{}, errBankDown
	}
	return b.Bank.ClearDebit(ctx, req)
}

func (b *flakyBank) RefundDebit(ctx context.Context, req paylink.BankRefund) (paylink.BankRefundResult, error) {
	if b.down.Load() {
		return paylink.BankRefundResult{}, errBankDown
	}
	return b.Bank.RefundDebit(ctx, req)
}

func TestDirectDebitBankUnreachable(t *testing.T) {
	bank := &flakyBank{}
	env := apitest.Start(t, apitest.Options{Bank: bank})
	m := env.Onboard()

	bank.down.Store(true)
	r := env.Post("/v5/direct_debit", m, debitBody(env, m, testAccount, "10"))
	if r.Status != http.StatusOK || r.Str("purchase.status") != "FAILED" || r.Str("response_code") != "failed" {
		t.Errorf("submission with the bank down: got %d %s, want 200 FAILED failed", r.Status, r.Raw)
	}
	if s := status(t, env, m, r.Str("purchase.purchase_reference")); s.Str("status") != "FAILED" {
		t.Errorf("status of the failed submission: got %s, want FAILED", s.Raw)
	}

	bank.down.Store(false)
	ref := debit(t, env, m, testAccount, "10")
	bank.down.Store(true)
	env.Clock.Advance(env.Service.Config().DirectDebitClearing + time.Second)
	if n, err := env.Service.ClearDirectDebits(context.Background()); n != 0 || !errors.Is(err, errBankDown) {
		t.Errorf("clearing with the bank down: got %d, %v; want 0 and the bank's error", n, err)
	}
	if s := status(t, env, m, ref); s.Str("status") != "PENDING" {
		t.Errorf("after failed clearing: got %s, want still PENDING", s.Raw)
	}
	bank.down.Store(false)
	if n, err := env.Service.ClearDirectDebits(context.Background()); n != 1 || err != nil {
		t.Errorf("clearing with the bank back: got %d, %v; want 1", n, err)
	}

	bank.down.Store(true)
	rf := env.Post("/v5/direct_debit/"+ref+"/refund", m, refundBody(env, m, "10"))
	if rf.Status != http.StatusOK || rf.Str("refund.status") != "FAILED" {
		t.Errorf("refund with the bank down: got %d %s, want 200 FAILED", rf.Status, rf.Raw)
	}
	// The bank was not reached: it rejected nothing (the verification
	// sweep found "The bank rejected the refund ...: the bank could not
	// be reached").
	if strings.Contains(rf.Raw, "rejected") || !strings.Contains(rf.Raw, "could not be reached") {
		t.Errorf("refund with the bank down: got %s, want it said the bank could not be reached, not that it rejected the refund", rf.Raw)
	}
	wantRefunded(t, env, m, ref, 0)
	bank.down.Store(false)
	if rf := env.Post("/v5/direct_debit/"+ref+"/refund", m, refundBody(env, m, "10")); rf.Str("refund.status") != "APPROVED" {
		t.Errorf("full refund with the bank back: got %d %s, want APPROVED", rf.Status, rf.Raw)
	}
	if strings.Contains(env.LogText(), testAccount) || !strings.Contains(env.LogText(), "bank error") {
		t.Errorf("logs: got %s, want the bank errors logged without the account number", env.LogText())
	}
}

func TestCardRefundRefusesADirectDebit(t *testing.T) {
	env, m, ref := clearedDebit(t)
	r := env.Post("/v5/purchase/"+ref+"/refund", m, map[string]any{
		"token":    map[string]any{"company_token": m.Creds.CompanyToken, "transaction_token": env.TransactionToken(m)},
		"customer": map[string]any{"ip_address": "203.0.113.7", "timezone": "UTC"},
		"refund":   map[string]any{"amount": "1.00", "currency": "AUD"},
	})
	if r.Status != http.StatusBadRequest || !strings.Contains(r.Str("error_message"), "direct_debit") {
		t.Errorf("got %d %s, want 400 pointing to the direct debit refund", r.Status, r.Raw)
	}
	if tr := stored(t, env, m, ref); tr.Refunded != 0 {
		t.Errorf("got refunded %d, want 0", tr.Refunded)
	}
}
