package dashboard_test

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
	"github.com/paylink/paylink/internal/processor"
)

// The payments and direct debits pages: lists, filters, CSV, the payment
// page, and the capture, cancel and refund actions with their role,
// CSRF, isolation, idempotency and input rules.

// visa is the sandbox's approving test card.
const visa = "4111111111111111"

// purchase makes an AUD card purchase of m through the API (a hold when
// preAuth) and returns its reference; mutate adjusts the body.
func purchase(t *testing.T, env *apitest.Env, m *apitest.Merchant, amount string, preAuth bool, mutate ...func(map[string]any)) string {
	t.Helper()
	r := env.Post("/v5/purchase", m, env.CardPurchase(m, visa, amount, func(b map[string]any) {
		if preAuth {
			apitest.Set(b, "purchase.should_service_apply_pre_authorisation", "true")
		}
		for _, f := range mutate {
			f(b)
		}
	}))
	if r.Status != http.StatusOK {
		t.Fatalf("purchase: %d %s", r.Status, r.Raw)
	}
	return r.Str("purchase.purchase_reference")
}

// clearedDebit makes a direct debit of m and clears it.
func clearedDebit(t *testing.T, env *apitest.Env, m *apitest.Merchant, amount string) string {
	t.Helper()
	ref := pendingDebit(t, env, m, amount)
	clearDebits(t, env)
	return ref
}

// clearDebits clears the direct debits made so far, once their clearing
// time has passed on the test clock.
func clearDebits(t *testing.T, env *apitest.Env) {
	t.Helper()
	env.Clock.Advance(env.Service.Config().DirectDebitClearing + time.Second)
	if _, err := env.Service.ClearDirectDebits(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// pendingDebit makes a direct debit of m, not yet cleared.
func pendingDebit(t *testing.T, env *apitest.Env, m *apitest.Merchant, amount string) string {
	t.Helper()
	r := env.Post("/v5/direct_debit", m, map[string]any{
		"token":        map[string]any{"company_token": m.Creds.CompanyToken, "transaction_token": env.TransactionToken(m)},
		"bank_account": map[string]any{"number": "987654321", "holder_name": "Jo Citizen", "bsb": "062-000"},
		"customer": map[string]any{"customer_reference": "C-1", "customer_email": "jo@example.com", "ip_address": "2001:db8::7",
			"timezone": "Australia/Sydney", "accepted_terms_conditions": "true"},
		"purchase": map[string]any{"amount": json.Number(amount), "currency": "AUD", "should_service_apply_fee": false},
	})
	if r.Status != http.StatusOK {
		t.Fatalf("direct debit: %d %s", r.Status, r.Raw)
	}
	return r.Str("purchase.purchase_reference")
}

// stored is a transaction of m as stored now.
func stored(t *testing.T, env *apitest.Env, m *apitest.Merchant, ref string) *paylink.Transaction {
	t.Helper()
	tx, err := env.Service.TransactionStatus(context.Background(), m.Merchant, ref)
	if err != nil {
		t.Fatalf("transaction %s: %v", ref, err)
	}
	return tx
}

// actionForm is the hidden fields of a payment page's form for action.
func actionForm(t *testing.T, p page, action string) url.Values {
	t.Helper()
	re := regexp.MustCompile(`(?s)action="[^"]*/` + action + `(?:\?back=[^"]*)?">\s*<input type="hidden" name="csrf" value="([^"]+)"><input type="hidden" name="idempotency_key" value="([^"]+)">`)
	m := re.FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("no %s form on the page (%d): %s", action, p.status, p.body)
	}
	return url.Values{"csrf": {m[1]}, "idempotency_key": {m[2]}}
}

// refs are the payment references a list page links to, in order.
func refs(body string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`<th scope="row"><a href="/dashboard/[a-z-]+/([a-z]+_[A-Za-z0-9]+)(?:\?back=[^"]*)?">`).FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

func TestPaymentsListFiltersPagesAndExports(t *testing.T) {
	eachEngine(t, func(t *testing.T, dsn string) {
		env := apitest.Start(t, apitest.Options{DSN: dsn})
		m, other := env.Onboard(), env.Onboard()
		addUser(t, env, m, "viewer@example.com", paylink.RoleViewer)
		small := purchase(t, env, m, "10.00", false)
		env.Clock.Advance(time.Second)
		invoiced := purchase(t, env, m, "20.00", false, func(b map[string]any) { apitest.Set(b, "purchase.invoice_number", "INV-77") })
		env.Clock.Advance(time.Second)
		hold := purchase(t, env, m, "30.00", true)
		foreign := purchase(t, env, other, "10.00", false)
		b := signedIn(t, env, "viewer@example.com")

		tests := []struct {
			name  string
			query string
			want  []string
		}{
			{"all, newest first", "", []string{hold, invoiced, small}},
			{"by reference", "q=" + small, []string{small}},
			{"by invoice number", "q=INV-77", []string{invoiced}},
			{"by invoice number typed in lower case", "q=inv-77", []string{invoiced}},
			{"by a reference typed in another case", "q=" + strings.ToUpper(small), nil},
			{"by card last 4", "q=1111", []string{hold, invoiced, small}},
			{"by status", "status=PRE_AUTHORISED", []string{hold}},
			{"by amount", "currency=AUD&min_amount=15&max_amount=25", []string{invoiced}},
			{"by method", "method=BankAccount", nil},
			{"another merchant's reference", "q=" + foreign, nil},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				p := b.get("/dashboard/payments?" + tt.query)
				if p.status != http.StatusOK {
					t.Fatalf("got %d, want 200: %s", p.status, p.body)
				}
				if got := refs(p.body); strings.Join(got, ",") != strings.Join(tt.want, ",") {
					t.Errorf("got %v, want %v", got, tt.want)
				}
			})
		}
		t.Run("keyset pages", func(t *testing.T) {
			first := b.get("/dashboard/payments?limit=2")
			next := regexp.MustCompile(`href="(/dashboard/payments\?[^"]+)" id="next"`).FindStringSubmatch(first.body)
			if next == nil {
				t.Fatalf("no next link on a full page: %s", first.body)
			}
			second := b.get(strings.ReplaceAll(next[1], "&amp;", "&"))
			got := append(refs(first.body), refs(second.body)...)
			if strings.Join(got, ",") != strings.Join([]string{hold, invoiced, small}, ",") {
				t.Errorf("pages: got %v, want %v", got, []string{hold, invoiced, small})
			}
			if strings.Contains(second.body, `id="next"`) {
				t.Errorf("last page has a next link")
			}
		})
		t.Run("newer pages", func(t *testing.T) {
			link := func(p page, id string) string {
				m := regexp.MustCompile(`href="(/dashboard/payments[^"]*)" id="` + id + `"`).FindStringSubmatch(p.body)
				if m == nil {
					return ""
				}
				return strings.ReplaceAll(m[1], "&amp;", "&")
			}
			pages := []page{b.get("/dashboard/payments?limit=1")}
			for len(pages) < 3 {
				pages = append(pages, b.get(link(pages[len(pages)-1], "next")))
			}
			for i, want := range []string{hold, invoiced, small} {
				if got := refs(pages[i].body); len(got) != 1 || got[0] != want {
					t.Fatalf("page %d going older: got %v, want %s", i+1, got, want)
				}
			}
			if link(pages[0], "newer") != "" || link(pages[0], "newest") != "" {
				t.Error("the first page links to newer pages")
			}
			back := b.get(link(pages[2], "newer"))
			if got := refs(back.body); len(got) != 1 || got[0] != invoiced {
				t.Errorf("newer from the last page: got %v, want %s", got, invoiced)
			}
			first := b.get(link(back, "newer"))
			if got := refs(first.body); len(got) != 1 || got[0] != hold || link(first, "newer") != "" {
				t.Errorf("newer again: got %v, want the first page (%s) without a newer link", got, hold)
			}
			if got := link(pages[2], "newest"); got != "/dashboard/payments?limit=1" {
				t.Errorf("newest from the last page: got %q, want the first page with the filter", got)
			}
		})
		t.Run("CSV of the filter", func(t *testing.T) {
			p := b.get("/dashboard/payments?status=APPROVED&format=csv")
			if p.status != http.StatusOK || !strings.HasPrefix(p.header.Get("Content-Type"), "text/csv") {
				t.Fatalf("got %d %q, want 200 text/csv", p.status, p.header.Get("Content-Type"))
			}
			rows, err := csv.NewReader(strings.NewReader(p.body)).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range rows[1:] {
				got = append(got, r[0]+" "+r[2])
			}
			want := []string{invoiced + " APPROVED", small + " APPROVED"}
			if strings.Join(got, ",") != strings.Join(want, ",") {
				t.Errorf("rows: got %v, want %v", got, want)
			}
		})
		t.Run("CSV link keeps the filter", func(t *testing.T) {
			p := b.get("/dashboard/payments?status=APPROVED&q=INV-77")
			if !strings.Contains(p.body, `href="/dashboard/payments?format=csv&amp;q=INV-77&amp;status=APPROVED" id="csv"`) {
				t.Errorf("no CSV link with the filter: %s", p.body)
			}
		})
		// A stored invoice number whose digits a letter touches is no card
		// number: the search box, the export and the next page keep it (a
		// verification sweep found them masked, the export empty).
		t.Run("an invoice number with a card-shaped run keeps its links", func(t *testing.T) {
			purchase(t, env, m, "3.00", false, func(b map[string]any) { apitest.Set(b, "purchase.invoice_number", "INV4111111111111111") })
			p := b.get("/dashboard/payments?q=INV4111111111111111")
			for _, want := range []string{`value="INV4111111111111111"`, `href="/dashboard/payments?format=csv&amp;q=INV4111111111111111" id="csv"`} {
				if !strings.Contains(p.body, want) {
					t.Errorf("the page lacks %s", want)
				}
			}
		})
		for _, bad := range []string{"from=yesterday", "min_amount=ten&currency=AUD", "status=NOPE", "from=nope&format=csv"} {
			t.Run("bad filter "+bad, func(t *testing.T) {
				p := b.get("/dashboard/payments?" + bad)
				if p.status != http.StatusBadRequest || !strings.Contains(p.body, `class="error"`) {
					t.Errorf("got %d, want 400 with an error: %s", p.status, p.body)
				}
			})
		}
		// A field's problem is tied to it and named by its label (the
		// accessibility sweep found only aria-invalid, and "min_amount:").
		p := b.get("/dashboard/payments?min_amount=ten&currency=AUD")
		for _, want := range []string{`aria-invalid="true" aria-describedby="min_amount-error"`, `<span class="field-error" id="min_amount-error">`, `<li>Total from: `} {
			if !strings.Contains(p.body, want) {
				t.Errorf("a bad amount bound: the page lacks %s", want)
			}
		}
	})
}

func TestPaymentPage(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m, other := env.Onboard(), env.Onboard()
	addUser(t, env, m, "viewer@example.com", paylink.RoleViewer)
	addUser(t, env, m, "staff@example.com", paylink.RoleStaff)
	ref := purchase(t, env, m, "25.00", false)
	hold := purchase(t, env, m, "30.00", true)
	foreign := purchase(t, env, other, "10.00", false)

	viewer := signedIn(t, env, "viewer@example.com")
	p := viewer.get("/dashboard/payments/" + ref)
	if p.status != http.StatusOK {
		t.Fatalf("got %d, want 200", p.status)
	}
	// 1.75% of 25.00 plus 0.30 is 0.7375, deducted as 0.74.
	for _, want := range []string{"AUD 25.00", "···· 1111", "jo@example.com", "3-D Secure", "Timeline", "Fee lines",
		"Fees deducted</th><td class=\"num\">AUD 0.74", `id="net">AUD 24.26`} {
		if !strings.Contains(p.body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(p.body, `method="post" action="/dashboard/payments/`) {
		t.Errorf("a viewer's page has action forms")
	}
	if p := viewer.get("/dashboard/payments/" + foreign); p.status != http.StatusNotFound {
		t.Errorf("another merchant's payment: got %d, want 404", p.status)
	}
	if p := viewer.get(debitsPath + "/" + ref); p.status != http.StatusNotFound {
		t.Errorf("a card payment as a direct debit: got %d, want 404", p.status)
	}

	staff := signedIn(t, env, "staff@example.com")
	actions := map[string][]string{ref: {"refund"}, hold: {"capture", "cancel"}}
	for r, want := range actions {
		p := staff.get("/dashboard/payments/" + r)
		for _, a := range want {
			actionForm(t, p, a)
		}
	}
}

// debitsPath is the direct debits list.
const debitsPath = "/dashboard/direct-debits"

func TestPaymentActionsRefuse(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m, other := env.Onboard(), env.Onboard()
	addUser(t, env, m, "viewer@example.com", paylink.RoleViewer)
	addUser(t, env, m, "staff@example.com", paylink.RoleStaff)
	ref := purchase(t, env, m, "25.00", false)
	hold := purchase(t, env, m, "30.00", true)
	foreign := purchase(t, env, other, "10.00", false)
	staff := signedIn(t, env, "staff@example.com")
	form := actionForm(t, staff.get("/dashboard/payments/"+ref), "refund")
	viewer := signedIn(t, env, "viewer@example.com")
	vtoken := viewer.token()

	tests := []struct {
		name       string
		b          *browser
		origin     string
		path       string
		form       url.Values
		wantStatus int
		wantText   string
	}{
		{"viewer refunds", viewer, viewer.base, "/dashboard/payments/" + ref + "/refund", withValue(withValue(form, "csrf", vtoken), "amount", "1.00"), http.StatusForbidden, "<h1>Not allowed</h1>"},
		{"viewer told who can", viewer, viewer.base, "/dashboard/payments/" + ref + "/refund", withValue(withValue(form, "csrf", vtoken), "amount", "1.00"), http.StatusForbidden, "your role (viewer) may not do this; an admin of your team can"},
		{"viewer captures", viewer, viewer.base, "/dashboard/payments/" + hold + "/capture", withValue(withValue(form, "csrf", vtoken), "amount", "1.00"), http.StatusForbidden, "role"},
		{"viewer cancels", viewer, viewer.base, "/dashboard/payments/" + hold + "/cancel", withValue(form, "csrf", vtoken), http.StatusForbidden, "role"},
		{"no CSRF token", staff, staff.base, "/dashboard/payments/" + ref + "/refund", withValue(withValue(form, "csrf", ""), "amount", "1.00"), http.StatusForbidden, "<h1>Form out of date</h1>"},
		{"another origin", staff, "https://evil.example", "/dashboard/payments/" + ref + "/refund", withValue(form, "amount", "1.00"), http.StatusForbidden, "out of date"},
		{"another merchant's payment", staff, staff.base, "/dashboard/payments/" + foreign + "/refund", withValue(form, "amount", "1.00"), http.StatusNotFound, "no transaction"},
		{"amount not a number", staff, staff.base, "/dashboard/payments/" + ref + "/refund", withValue(form, "amount", "ten"), http.StatusBadRequest, "not a positive amount"},
		{"a card number as the amount, quoted masked", staff, staff.base, "/dashboard/payments/" + ref + "/refund", withValue(form, "amount", "4111 1111 1111 1111"), http.StatusBadRequest, "411111******1111"},
		{"zero amount", staff, staff.base, "/dashboard/payments/" + ref + "/refund", withValue(form, "amount", "0"), http.StatusBadRequest, "not a positive amount"},
		{"negative amount", staff, staff.base, "/dashboard/payments/" + ref + "/refund", withValue(form, "amount", "-5"), http.StatusBadRequest, "not a positive amount"},
		{"too many decimals", staff, staff.base, "/dashboard/payments/" + ref + "/refund", withValue(form, "amount", "1.005"), http.StatusBadRequest, "AUD allows at most 2 decimal places; nothing"},
		{"thousands separators", staff, staff.base, "/dashboard/payments/" + ref + "/refund", withValue(form, "amount", "1,000.00"), http.StatusBadRequest, "(write it without thousands separators)"},
		{"a no-break space between thousands", staff, staff.base, "/dashboard/payments/" + ref + "/refund", withValue(form, "amount", "1\u00a0000.00"), http.StatusBadRequest, "(write it without thousands separators)"},
		{"a typographic apostrophe between thousands", staff, staff.base, "/dashboard/payments/" + ref + "/refund", withValue(form, "amount", "1\u2019000.00"), http.StatusBadRequest, "(write it without thousands separators)"},
		{"more than the payment", staff, staff.base, "/dashboard/payments/" + ref + "/refund", withValue(withValue(form, "amount", "25.01"), "idempotency_key", "k-over"), http.StatusBadRequest, "above what can still be refunded"},
		{"capture above the hold", staff, staff.base, "/dashboard/payments/" + hold + "/capture", withValue(withValue(form, "amount", "31.00"), "idempotency_key", "k-cap"), http.StatusBadRequest, "above the pre-authorised"},
		{"capture of an approved payment", staff, staff.base, "/dashboard/payments/" + ref + "/capture", withValue(withValue(form, "amount", "1.00"), "idempotency_key", "k-cap2"), http.StatusConflict, ""},
		{"no idempotency key", staff, staff.base, "/dashboard/payments/" + ref + "/refund", withValue(withValue(form, "amount", "1.00"), "idempotency_key", ""), http.StatusBadRequest, "idempotency key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.b.postFrom(tt.origin, tt.path, tt.form)
			if p.status != tt.wantStatus || !strings.Contains(p.body, tt.wantText) || !strings.Contains(p.body, `role="alert"`) {
				t.Errorf("got %d, want %d with %q: %s", p.status, tt.wantStatus, tt.wantText, p.body)
			}
			// A refused amount stays in its form, marked, never replaced
			// by the full amount a second click would then send.
			action := tt.path[strings.LastIndex(tt.path, "/")+1:]
			if typed := tt.form.Get("amount"); p.status == http.StatusBadRequest && (action == "refund" || action == "capture") && typed != "" {
				if paylink.ContainsCardNumber(typed) {
					typed = ""
				}
				want := fmt.Sprintf(`id="%s-amount" name="amount" inputmode="decimal" required value="%s" aria-invalid="true" aria-describedby="form-error" autofocus`, action, typed)
				if !strings.Contains(p.body, want) {
					t.Errorf("the refused %s form: want %s in\n%s", action, want, p.body)
				}
			}
			if got := stored(t, env, m, ref); got.Refunded != 0 || got.Status != paylink.StatusApproved {
				t.Errorf("payment: got %s refunded %d, want APPROVED refunded 0", got.Status, got.Refunded)
			}
			if got := stored(t, env, m, hold); got.Status != paylink.StatusPreAuthorised {
				t.Errorf("hold: got %s, want PRE_AUTHORISED", got.Status)
			}
			if got := stored(t, env, other, foreign); got.Refunded != 0 {
				t.Errorf("other merchant's payment: refunded %d, want 0", got.Refunded)
			}
		})
	}
}

func TestRefundSubmittedTwiceRefundsOnce(t *testing.T) {
	eachEngine(t, func(t *testing.T, dsn string) {
		env := apitest.Start(t, apitest.Options{DSN: dsn})
		m := env.Onboard()
		u := addUser(t, env, m, "staff@example.com", paylink.RoleStaff)
		ref := purchase(t, env, m, "25.00", false)
		b := signedIn(t, env, "staff@example.com")
		form := actionForm(t, b.get("/dashboard/payments/"+ref), "refund")
		form.Set("amount", "7.50")
		first := b.post("/dashboard/payments/"+ref+"/refund", form)
		second := b.post("/dashboard/payments/"+ref+"/refund", form)
		want := "/dashboard/payments/" + ref + "?done=refunded"
		for i, p := range []page{first, second} {
			if p.status != http.StatusSeeOther || p.header.Get("Location") != want {
				t.Errorf("submission %d: got %d to %q, want 303 to %q", i+1, p.status, p.header.Get("Location"), want)
			}
		}
		if got := stored(t, env, m, ref).Refunded; got != 750 {
			t.Errorf("refunded: got %d, want 750 (once)", got)
		}
		changed := form
		changed.Set("amount", "1.00")
		if p := b.post("/dashboard/payments/"+ref+"/refund", changed); p.status != http.StatusConflict {
			t.Errorf("same key, another amount: got %d, want 409", p.status)
		}
		rows, err := env.Service.AuditLog(context.Background(), paylink.AuditFilter{MerchantID: m.ID, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		refunds := 0
		for _, r := range rows {
			if r.Action == paylink.AuditRefund {
				refunds++
				if r.ActorKind != paylink.ActorStaff || r.ActorID != u.ID {
					t.Errorf("audit actor: got %s %s, want staff %s", r.ActorKind, r.ActorID, u.ID)
				}
			}
		}
		if refunds != 1 {
			t.Errorf("refund audit rows: got %d, want 1", refunds)
		}
		page := b.get(want)
		if !strings.Contains(page.body, "The refund was made.") || !strings.Contains(page.body, "AUD 7.50") {
			t.Errorf("page after the refund lacks the notice or the refund: %s", page.body)
		}
		// A viewer, who cannot read the team, sees who refunded by email.
		addUser(t, env, m, "viewer@example.com", paylink.RoleViewer)
		v := signedIn(t, env, "viewer@example.com")
		if p := v.get("/dashboard/payments/" + ref); !strings.Contains(p.body, "success by staff staff@example.com") || strings.Contains(p.body, u.ID) {
			t.Errorf("the viewer's timeline does not name the refunding staff by email: %s", p.body)
		}
	})
}

// TestActionAwaitingItsAnswerIsPendingNotRefused: a refund or capture
// whose processor answer is lost is under way, not refused. The page says
// so, and the same form sent again replays that answer instead of acting
// a second time (a refund reserved twice would be paid twice once
// recovery learns both were made).
func TestActionAwaitingItsAnswerIsPendingNotRefused(t *testing.T) {
	env := apitest.Start(t, apitest.Options{Config: paylink.Config{ProcessorTimeout: 50 * time.Millisecond}})
	m := env.Onboard()
	addUser(t, env, m, "staff@example.com", paylink.RoleStaff)
	paid := purchase(t, env, m, "25.00", false)
	held := purchase(t, env, m, "30.00", true)
	b := signedIn(t, env, "staff@example.com")
	refund := actionForm(t, b.get("/dashboard/payments/"+paid), "refund")
	refund.Set("amount", "4.00")
	capture := actionForm(t, b.get("/dashboard/payments/"+held), "capture")
	capture.Set("amount", "20.00")

	env.Sandbox.SetSilent(true)
	for _, a := range []struct {
		ref, path string
		form      url.Values
	}{
		{paid, "/refund", refund}, {held, "/capture", capture},
	} {
		want := "/dashboard/payments/" + a.ref + "?done=pending"
		for i := 1; i <= 2; i++ {
			if p := b.post("/dashboard/payments/"+a.ref+a.path, a.form); p.status != http.StatusSeeOther || p.header.Get("Location") != want {
				t.Errorf("%s, submission %d with a silent processor: got %d to %q, want 303 to %q: %s", a.path, i, p.status, p.header.Get("Location"), want, p.body)
			}
		}
		if page := b.get(want); !strings.Contains(page.body, "whose answer has not come yet") || strings.Contains(page.body, "The hold was captured.") {
			t.Errorf("%s: the page does not say the action is pending: %s", a.path, page.body)
		}
	}
	if got := stored(t, env, m, paid).Refunded; got != 400 {
		t.Errorf("refunded (reserved): got %d, want 400, once", got)
	}
	if p := b.get("/dashboard/payments/" + held); !strings.Contains(p.body, `<td id="status">PENDING</td>`) {
		t.Errorf("a capture under way: want the status shown as the API shows it, PENDING: %s", p.body)
	}
	// Recovery cannot learn the answer either: the payment is UNKNOWN,
	// the state staff filter for to review.
	env.Clock.Advance(paylink.ProcessingTimeout + time.Second)
	if _, err := env.Service.RecoverInterrupted(context.Background()); err != nil {
		t.Fatal(err)
	}
	if p := b.get("/dashboard/payments?status=UNKNOWN"); p.status != http.StatusOK || strings.Join(refs(p.body), ",") != held {
		t.Errorf("the UNKNOWN filter: got %d %v, want %s", p.status, refs(p.body), held)
	}
	env.Sandbox.SetSilent(false)
	env.Clock.Advance(paylink.ProcessingTimeout + time.Second)
	if _, err := env.Service.RecoverInterrupted(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := stored(t, env, m, paid).Refunded; got != 400 {
		t.Errorf("refunded after recovery: got %d, want 400", got)
	}
	if got := stored(t, env, m, held); got.Status != paylink.StatusApproved || got.Amount != 2000 {
		t.Errorf("hold after recovery: got %s amount %d, want APPROVED 2000", got.Status, got.Amount)
	}
	// Once the answers have come, the same address, or the same form
	// sent again (a replay), no longer says they are awaited.
	for _, a := range []struct {
		ref, path string
		form      url.Values
	}{
		{paid, "/refund", refund}, {held, "/capture", capture},
	} {
		want := "/dashboard/payments/" + a.ref + "?done=pending"
		if p := b.post("/dashboard/payments/"+a.ref+a.path, a.form); p.status != http.StatusSeeOther || p.header.Get("Location") != want {
			t.Errorf("%s sent again after the answer: got %d to %q, want the replay's 303 to %q", a.path, p.status, p.header.Get("Location"), want)
		}
		page := b.get(want)
		if strings.Contains(page.body, "whose answer has not come yet") || !strings.Contains(page.body, "The processor has answered since this was sent") {
			t.Errorf("%s: the page still says the answer is awaited, or not that it came: %s", a.path, page.body)
		}
	}
}

func TestCaptureAndCancelHolds(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	addUser(t, env, m, "staff@example.com", paylink.RoleStaff)
	toCapture := purchase(t, env, m, "30.00", true)
	toCancel := purchase(t, env, m, "40.00", true)
	b := signedIn(t, env, "staff@example.com")

	form := actionForm(t, b.get("/dashboard/payments/"+toCapture), "capture")
	form.Set("amount", "20.00")
	if p := b.post("/dashboard/payments/"+toCapture+"/capture", form); p.status != http.StatusSeeOther {
		t.Fatalf("capture: got %d, want 303: %s", p.status, p.body)
	}
	if got := stored(t, env, m, toCapture); got.Status != paylink.StatusApproved || got.Amount != 2000 {
		t.Errorf("captured: got %s amount %d, want APPROVED 2000", got.Status, got.Amount)
	}
	form = actionForm(t, b.get("/dashboard/payments/"+toCancel), "cancel")
	if p := b.post("/dashboard/payments/"+toCancel+"/cancel", form); p.status != http.StatusSeeOther {
		t.Fatalf("cancel: got %d, want 303: %s", p.status, p.body)
	}
	if got := stored(t, env, m, toCancel); got.Status != paylink.StatusPreAuthorisedReversed {
		t.Errorf("cancelled: got %s, want PRE_AUTHORISED_REVERSED", got.Status)
	}
	if p := b.post("/dashboard/payments/"+toCancel+"/cancel", form); p.status != http.StatusSeeOther {
		t.Errorf("cancel again with the same key: got %d, want the first answer, 303", p.status)
	}
}

func TestDirectDebitPages(t *testing.T) {
	eachEngine(t, func(t *testing.T, dsn string) {
		env := apitest.Start(t, apitest.Options{DSN: dsn})
		m, other := env.Onboard(), env.Onboard()
		addUser(t, env, m, "staff@example.com", paylink.RoleStaff)
		addUser(t, env, m, "viewer@example.com", paylink.RoleViewer)
		card := purchase(t, env, m, "25.00", false)
		debit := clearedDebit(t, env, m, "40.00")
		foreign := clearedDebit(t, env, other, "40.00")
		b := signedIn(t, env, "staff@example.com")

		list := b.get(debitsPath)
		if got := refs(list.body); list.status != http.StatusOK || strings.Join(got, ",") != debit {
			t.Errorf("list: got %d %v, want 200 [%s] (no card payment, no other merchant's debit)", list.status, got, debit)
		}
		p := b.get(debitsPath + "/" + debit)
		if p.status != http.StatusOK || !strings.Contains(p.body, "APPROVED") || !strings.Contains(p.body, "BSB 062-000") {
			t.Errorf("detail: got %d without its state and account: %s", p.status, p.body)
		}
		if strings.Contains(p.body, "3-D Secure") || strings.Contains(list.body, "PRE_AUTHORISED") || strings.Contains(list.body, "card last 4") {
			t.Errorf("the direct debit pages carry card wording (3-D Secure, holds, card last 4)")
		}
		if p := b.get(debitsPath + "/" + foreign); p.status != http.StatusNotFound {
			t.Errorf("another merchant's debit: got %d, want 404", p.status)
		}
		form := actionForm(t, p, "refund")
		form.Set("amount", "15.00")

		viewer := signedIn(t, env, "viewer@example.com")
		vform := url.Values{"csrf": {viewer.token()}, "idempotency_key": {"v1"}, "amount": {"1.00"}}
		if p := viewer.post(debitsPath+"/"+debit+"/refund", vform); p.status != http.StatusForbidden {
			t.Errorf("viewer: got %d, want 403", p.status)
		}
		if p := b.post(debitsPath+"/"+card+"/refund", form); p.status != http.StatusNotFound {
			t.Errorf("a card payment's refund here: got %d, want 404", p.status)
		}
		bad := url.Values{"csrf": form["csrf"], "idempotency_key": {"bad"}, "amount": {"abc"}}
		if p := b.post(debitsPath+"/"+debit+"/refund", bad); p.status != http.StatusBadRequest {
			t.Errorf("bad amount: got %d, want 400", p.status)
		}
		if got := stored(t, env, m, debit).Refunded; got != 0 {
			t.Fatalf("refunded before the refund: got %d, want 0", got)
		}
		for range 2 {
			if p := b.post(debitsPath+"/"+debit+"/refund", form); p.status != http.StatusSeeOther {
				t.Fatalf("refund: got %d, want 303: %s", p.status, p.body)
			}
		}
		if got := stored(t, env, m, debit).Refunded; got != 1500 {
			t.Errorf("refunded: got %d, want 1500 (once)", got)
		}
	})
}

func TestRefundSubmittedConcurrentlyRefundsOnce(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	addUser(t, env, m, "staff@example.com", paylink.RoleStaff)
	ref := purchase(t, env, m, "25.00", false)
	b := signedIn(t, env, "staff@example.com")
	form := actionForm(t, b.get("/dashboard/payments/"+ref), "refund")
	form.Set("amount", "5.00")
	const clicks = 4
	statuses := make(chan int, clicks)
	var wg sync.WaitGroup
	for range clicks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodPost, b.base+"/dashboard/payments/"+ref+"/refund", strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			res, err := b.c.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			res.Body.Close()
			statuses <- res.StatusCode
		}()
	}
	wg.Wait()
	close(statuses)
	for s := range statuses {
		if s != http.StatusSeeOther && s != http.StatusConflict {
			t.Errorf("a click: got %d, want 303 (acted or replayed) or 409 (the first still running)", s)
		}
	}
	if got := stored(t, env, m, ref).Refunded; got != 500 {
		t.Errorf("refunded: got %d, want 500 (once)", got)
	}
}

// TestPaymentPageShowsItsPostedFees: a posted payment's fees and net are
// its ledger posting's, not a new calculation by the merchant's pricing,
// which may differ by the time the page is opened (here changed in the
// database by hand: paylink has no action that changes pricing).
func TestPaymentPageShowsItsPostedFees(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	addUser(t, env, m, "viewer@example.com", paylink.RoleViewer)
	ref := purchase(t, env, m, "25.00", false) // 1.75% + 0.30 = 0.7375, posted as 0.74
	pr := paylink.DefaultPricing()
	pr.BlendedPercent = 50000    // 5%
	pr.ServiceTransFee = 100_000 // 0.10, billable
	pr.Billable = []string{paylink.FeeServiceTrans}
	settings := m.Merchant.Settings
	settings.Pricing = &pr
	if err := env.Store.Update(context.Background(), func(tx paylink.Tx) error { return tx.UpdateMerchantSettings(m.ID, settings) }); err != nil {
		t.Fatal(err)
	}
	b := signedIn(t, env, "viewer@example.com")
	p := b.get("/dashboard/payments/" + ref)
	if !strings.Contains(p.body, "Fees deducted</th><td class=\"num\">AUD 0.74") || !strings.Contains(p.body, `id="net">AUD 24.26`) ||
		strings.Contains(p.body, "Fees billed separately") {
		t.Errorf("the page does not show the posted fee 0.74 and net 24.26 (and nothing billed):\n%s", p.body)
	}
}

// TestPendingDebitFeesAreAnEstimate: a direct debit not yet cleared has
// no posting, so its fees are the pricing's estimate of what clearing
// will deduct and are labelled so, with no net; once cleared they are
// the posting's, deducted (dashboard sweep: a pending debit's page said
// "Fees deducted").
func TestPendingDebitFeesAreAnEstimate(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	addUser(t, env, m, "viewer@example.com", paylink.RoleViewer)
	debit := pendingDebit(t, env, m, "40.00")
	b := signedIn(t, env, "viewer@example.com")
	p := b.get(debitsPath + "/" + debit)
	if !strings.Contains(p.body, `<th scope="row">Fees to be deducted at clearing (estimated)</th>`) ||
		strings.Contains(p.body, "Fees deducted") || strings.Contains(p.body, `id="net"`) {
		t.Errorf("a pending debit: got %s, want its fees labelled an estimate to be deducted at clearing, and no net",
			section(p.body, `id="refunded"`))
	}
	clearDebits(t, env)
	p = signedIn(t, env, "viewer@example.com").get(debitsPath + "/" + debit) // the clock moved past the session's idle end
	if !strings.Contains(p.body, `<th scope="row">Fees deducted</th>`) || strings.Contains(p.body, "(estimated)") || !strings.Contains(p.body, `id="net"`) {
		t.Errorf("a cleared debit: got %s, want its fees deducted and its net", section(p.body, `id="refunded"`))
	}
}

// TestPaymentPageFiguresAndActionsInPlace: the net shows only for money
// taken, after refunds; a surcharged hold's capture form is filled with
// the amount before surcharge and captures as filled; a refused refund
// shows the payment again with the refusal, and the corrected form goes
// through, as does the hold's other form after a refused capture.
func TestPaymentPageFiguresAndActionsInPlace(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	addUser(t, env, m, "staff@example.com", paylink.RoleStaff)
	declined := purchase(t, env, m, "25.00", false, func(b map[string]any) { apitest.Set(b, "card.number", "4000000000000002") })
	surcharged := purchase(t, env, m, "100.00", true, func(b map[string]any) {
		apitest.Set(b, "card.number", "5555555555554444")
		apitest.Set(b, "purchase.should_service_apply_surcharge", true)
	})
	plainHold := purchase(t, env, m, "30.00", true)
	paid := purchase(t, env, m, "25.00", false)
	b := signedIn(t, env, "staff@example.com")

	if p := b.get("/dashboard/payments/" + declined); strings.Contains(p.body, `id="net"`) {
		t.Errorf("a declined payment shows a net")
	}
	p := b.get("/dashboard/payments/" + surcharged)
	if !strings.Contains(p.body, `id="capture-amount" name="amount" inputmode="decimal" required value="100.00"`) {
		t.Errorf("the capture form is not filled with the amount before surcharge:\n%s", p.body)
	}
	if !strings.Contains(p.body, "Fees to be deducted at capture (estimated)") || strings.Contains(p.body, `id="net"`) {
		t.Errorf("a hold's fees are not shown as an estimate, or it shows a net")
	}
	form := actionForm(t, p, "capture")
	form.Set("amount", "100.00")
	if res := b.post("/dashboard/payments/"+surcharged+"/capture", form); res.status != http.StatusSeeOther {
		t.Errorf("capture as filled: got %d: %s", res.status, res.body)
	}

	form = actionForm(t, b.get("/dashboard/payments/"+paid), "refund")
	over := b.post("/dashboard/payments/"+paid+"/refund", withValue(form, "amount", "25.01"))
	if over.status != http.StatusBadRequest || !strings.Contains(over.body, "above what can still be refunded") || !strings.Contains(over.body, `id="refund-amount"`) {
		t.Errorf("over-refund: got %d, want the payment page with the refusal: %s", over.status, over.body)
	}
	if res := b.post("/dashboard/payments/"+paid+"/refund", withValue(form, "amount", "5.00")); res.status != http.StatusSeeOther {
		t.Errorf("the corrected refund with the same form: got %d: %s", res.status, res.body)
	}
	if got := stored(t, env, m, paid); got.Refunded != 500 {
		t.Errorf("refunded %d, want 500", got.Refunded)
	}
	if p := b.get("/dashboard/payments/" + paid); !strings.Contains(p.body, `id="net">AUD 19.26`) {
		t.Errorf("the net after a refund of 5.00 is not 19.26")
	}

	form = actionForm(t, b.get("/dashboard/payments/"+plainHold), "capture")
	if res := b.post("/dashboard/payments/"+plainHold+"/capture", withValue(form, "amount", "31.00")); res.status != http.StatusBadRequest {
		t.Errorf("capture above the hold: got %d", res.status)
	}
	cancel := url.Values{"csrf": form["csrf"], "idempotency_key": form["idempotency_key"]}
	if res := b.post("/dashboard/payments/"+plainHold+"/cancel", cancel); res.status != http.StatusSeeOther {
		t.Errorf("cancel with the page's key after a refused capture: got %d: %s", res.status, res.body)
	}
}

// withValue is a copy of v with k set to val.
func withValue(v url.Values, k, val string) url.Values {
	c := url.Values{}
	for key, vs := range v {
		c[key] = vs
	}
	c.Set(k, val)
	return c
}

// TestBackToTheFilteredList: a payment opened from a filtered list goes
// back to that list, filter kept, and still does after a refund, a
// refused refund and a capture on its page; opened otherwise, or with a
// back value that is not the list (another site, another page), to the
// whole list.
func TestBackToTheFilteredList(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	addUser(t, env, m, "clerk@example.com", paylink.RoleStaff)
	ref := purchase(t, env, m, "25.00", false)
	hold := purchase(t, env, m, "30.00", true)
	b := signedIn(t, env, "clerk@example.com")
	const list = "/dashboard/payments?q=jo%40example.com&status=APPROVED"
	const backLink = `<a href="/dashboard/payments?q=jo%40example.com&amp;status=APPROVED" id="back">`
	opened := regexp.MustCompile(`<a href="(/dashboard/payments/` + ref + `\?back=[^"]+)">`).FindStringSubmatch(b.get(list).body)
	if opened == nil {
		t.Fatalf("the filtered list's link to %s carries no back", ref)
	}
	link := html.UnescapeString(opened[1])
	p := b.get(link)
	if !strings.Contains(p.body, backLink) {
		t.Fatalf("opened from a filtered list: the back link lost the filter:\n%s", p.body)
	}
	action := regexp.MustCompile(`action="(/dashboard/payments/` + ref + `/refund\?back=[^"]+)"`).FindStringSubmatch(p.body)
	if action == nil {
		t.Fatalf("the refund form does not carry back:\n%s", p.body)
	}
	refund := html.UnescapeString(action[1])
	form := actionForm(t, p, "refund")
	if res := b.post(refund, withValue(form, "amount", "99.00")); res.status != http.StatusBadRequest || !strings.Contains(res.body, backLink) {
		t.Errorf("a refused refund: got %d, the back link lost the filter:\n%s", res.status, res.body)
	}
	res := b.post(refund, withValue(form, "amount", "5.00"))
	after := res.header.Get("Location")
	if res.status != http.StatusSeeOther || !strings.HasPrefix(after, "/dashboard/payments/"+ref+"?") {
		t.Fatalf("refund: got %d to %q", res.status, after)
	}
	if p := b.get(after); !strings.Contains(p.body, "The refund was made.") || !strings.Contains(p.body, backLink) {
		t.Errorf("after the refund (%s): the back link lost the filter:\n%s", after, p.body)
	}

	held := "/dashboard/payments/" + hold + "?back=" + url.QueryEscape(list)
	form = actionForm(t, b.get(held), "capture")
	res = b.post("/dashboard/payments/"+hold+"/capture?back="+url.QueryEscape(list), withValue(form, "amount", "30.00"))
	if p := b.get(res.header.Get("Location")); res.status != http.StatusSeeOther || !strings.Contains(p.body, "The hold was captured.") || !strings.Contains(p.body, backLink) {
		t.Errorf("after a capture (%d to %q): the back link lost the filter", res.status, res.header.Get("Location"))
	}

	for _, back := range []string{"", "https://evil.example/dashboard/payments?q=x", "//evil.example/dashboard/payments?q=x",
		"/dashboard/team?q=x", "/dashboard/payments/../team?q=x", "javascript:alert(1)", "/dashboard/payments?q=x#frag", "/dashboard/payments"} {
		if p := b.get("/dashboard/payments/" + ref + "?back=" + url.QueryEscape(back)); !strings.Contains(p.body, `<a href="/dashboard/payments" id="back">`) {
			t.Errorf("back %q: the back link is not the whole list", back)
		}
	}
	form = actionForm(t, b.get("/dashboard/payments/"+ref), "refund")
	res = b.post("/dashboard/payments/"+ref+"/refund?back="+url.QueryEscape("//evil.example/dashboard/payments?q=x"), withValue(form, "amount", "1.00"))
	if loc := res.header.Get("Location"); res.status != http.StatusSeeOther || loc != "/dashboard/payments/"+ref+"?done=refunded" {
		t.Errorf("a refund with another site as back: got %d to %q, want the payment page alone", res.status, loc)
	}
}

// TestHomeChartsEveryCurrency: the home page draws a chart per currency
// the merchant took, the one with the most payments first, each with its
// own ids for assistive technology.
func TestHomeChartsEveryCurrency(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	addUser(t, env, m, "viewer@example.com", paylink.RoleViewer)
	inNZD := func(b map[string]any) { apitest.Set(b, "purchase.currency", "NZD") }
	purchase(t, env, m, "10.00", false, inNZD)
	purchase(t, env, m, "20.00", false, inNZD)
	purchase(t, env, m, "30.00", false)
	b := signedIn(t, env, "viewer@example.com")
	p := b.get("/dashboard/")
	nzd, aud := strings.Index(p.body, "Daily gross volume, NZD"), strings.Index(p.body, "Daily gross volume, AUD")
	if p.status != http.StatusOK || nzd < 0 || aud < 0 || nzd > aud {
		t.Errorf("home: got %d with the NZD chart at %d and the AUD chart at %d, want both, NZD (two payments) first", p.status, nzd, aud)
	}
	for _, id := range []string{`id="chart-title-NZD"`, `id="chart-title-AUD"`, `id="chart-desc-NZD"`, `id="chart-desc-AUD"`} {
		if strings.Count(p.body, id) != 1 {
			t.Errorf("home: %s appears %d times, want once", id, strings.Count(p.body, id))
		}
	}
}

// unreachableAcquirer is the sandbox acquirer that cannot be reached for
// a capture or a void.
type unreachableAcquirer struct{ processor.Sandbox }

func (*unreachableAcquirer) Capture(context.Context, paylink.OpRequest) (paylink.OpResult, error) {
	return paylink.OpResult{}, errors.New("dial acquirer: connection refused")
}

func (*unreachableAcquirer) Void(context.Context, paylink.OpRequest) (paylink.OpResult, error) {
	return paylink.OpResult{}, errors.New("dial acquirer: connection refused")
}

// TestHoldActionsTheAcquirerMissedCarryRetryAfter: a capture or cancel
// answered 503 processor_unavailable carries Retry-After, as every 503
// does (docs/errors.md). Before, the dashboard set it only for
// service_unavailable.
func TestHoldActionsTheAcquirerMissedCarryRetryAfter(t *testing.T) {
	env := apitest.Start(t, apitest.Options{Processor: &unreachableAcquirer{}})
	m := env.Onboard()
	addUser(t, env, m, "staff@example.com", paylink.RoleStaff)
	b := signedIn(t, env, "staff@example.com")
	for _, action := range []string{"capture", "cancel"} {
		ref := purchase(t, env, m, "30.00", true)
		form := actionForm(t, b.get("/dashboard/payments/"+ref), action)
		if action == "capture" {
			form.Set("amount", "30.00")
		}
		p := b.post("/dashboard/payments/"+ref+"/"+action, form)
		if p.status != http.StatusServiceUnavailable {
			t.Fatalf("%s, acquirer unreachable: got %d, want 503: %s", action, p.status, p.body)
		}
		if got := p.header.Get("Retry-After"); got == "" {
			t.Errorf("%s answered 503 processor_unavailable without Retry-After", action)
		}
	}
}

// TestOverdueHoldOffersNoCaptureOrCancel: a hold past its expiry, which
// the preauth-expiry job is about to release and a capture refuses
// (hold_released), shows no Capture or Cancel. Before, the page offered
// both whenever the status was PRE_AUTHORISED.
func TestOverdueHoldOffersNoCaptureOrCancel(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	addUser(t, env, m, "staff@example.com", paylink.RoleStaff)
	ref := purchase(t, env, m, "30.00", true)
	b := signedIn(t, env, "staff@example.com")
	if p := b.get("/dashboard/payments/" + ref); !strings.Contains(p.body, "/capture") || !strings.Contains(p.body, "/cancel") {
		t.Fatalf("a hold within its expiry: want Capture and Cancel offered:\n%s", p.body)
	}
	env.Clock.Advance(paylink.DefaultPreAuthExpiry + time.Second)
	p := signedIn(t, env, "staff@example.com").get("/dashboard/payments/" + ref) // the first session has ended
	if p.status != http.StatusOK || !strings.Contains(p.body, "PRE_AUTHORISED") {
		t.Fatalf("the overdue hold's page: got %d, want 200 showing it PRE_AUTHORISED:\n%s", p.status, p.body)
	}
	for _, action := range []string{"/capture", "/cancel"} {
		if strings.Contains(p.body, ref+action) {
			t.Errorf("an overdue hold offers %s", action)
		}
	}
}

// TestAnExportCutShortEndsBroken: the store failing between two pages of
// the payments export (its table renamed under it) ends the download
// broken, not as a complete file (third verification sweep: a 200 whose
// body ended cleanly after the pages written, 1001 lines of 1502, whose
// sums a merchant would trust).
func TestAnExportCutShortEndsBroken(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	addUser(t, env, m, "admin@example.com", paylink.RoleAdmin)
	n := 3*paylink.MaxPaymentPage + 1
	for range n {
		env.Post("/v5/purchase", m, env.CardPurchase(m, "4111111111111111", "5.00"))
	}
	b := signedIn(t, env, "admin@example.com")
	conn := b.rawGet("/dashboard/payments?format=csv")
	defer conn.Close()
	br := bufio.NewReaderSize(conn, 512)
	first := make([]byte, 300)
	if _, err := io.ReadFull(br, first); err != nil {
		t.Fatal(err)
	}
	if _, err := env.WriterDB(t).Exec(`ALTER TABLE transactions RENAME TO transactions_gone`); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(br)
	res, err := http.ReadResponse(bufio.NewReader(io.MultiReader(strings.NewReader(string(first)), strings.NewReader(string(rest)))), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, berr := io.ReadAll(res.Body)
	lines := strings.Count(string(body), "\n")
	if berr == nil && lines < n+1 {
		t.Errorf("a truncated export (%d of %d lines) ended as a complete download", lines, n+1)
	}
}
