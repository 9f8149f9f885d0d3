package dashboard_test

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
)

// TestAuditLogPages: the audit page shows the newest 100 rows and an
// Older link that leads, page by page, to every older row of the
// merchant, keeping the actor and action filters; another merchant's
// rows never appear; a bad cursor is refused (both engines: the store
// applies BeforeID).
func TestAuditLogPages(t *testing.T) {
	eachEngine(t, func(t *testing.T, dsn string) {
		env := apitest.Start(t, apitest.Options{DSN: dsn})
		m, other := env.Onboard(), env.Onboard()
		addUser(t, env, m, "admin@example.com", paylink.RoleAdmin)
		const n = 230 // rows of the merchant; half of them by actor-a
		addProbeRows(t, env, m.ID, other.ID, n)
		b := signedIn(t, env, "admin@example.com")

		t.Run("every row, 100 a page", func(t *testing.T) {
			pages := walkAuditPages(t, b, "/dashboard/audit")
			if len(pages) < 3 || len(pages[0].rows) != 100 || len(pages[1].rows) != 100 {
				t.Fatalf("got pages of %v rows, want 100, 100 and the rest", rowCounts(pages))
			}
			want := probeObjects("m", n, func(int) bool { return true })
			if got := probesOf(pages); strings.Join(got, ",") != strings.Join(want, ",") {
				t.Errorf("got the merchant's rows %v, want %v", got, want)
			}
		})
		t.Run("the filters are kept", func(t *testing.T) {
			pages := walkAuditPages(t, b, "/dashboard/audit?actor=actor-a&action=probe.ping")
			if got := rowCounts(pages); fmt.Sprint(got) != "[100 15]" {
				t.Fatalf("got pages of %v rows, want [100 15]", got)
			}
			if l := pages[0].older; !strings.Contains(l, "actor=actor-a") || !strings.Contains(l, "action=probe.ping") {
				t.Errorf("the Older link %q lacks the filter", l)
			}
			want := probeObjects("m", n, func(i int) bool { return i%2 == 0 })
			if got := probesOf(pages); strings.Join(got, ",") != strings.Join(want, ",") {
				t.Errorf("got the filtered rows %v, want %v", got, want)
			}
			back := pagerLink(b.get(pages[0].older), "newer")
			if back != "/dashboard/audit?action=probe.ping&actor=actor-a" {
				t.Errorf("the Newer link of page 2: got %q, want the first page with the filter", back)
			}
		})
		t.Run("bad cursors", func(t *testing.T) {
			for _, c := range []string{"abc", "0", "-5", "1.5", "99999999999999999999"} {
				if p := b.get("/dashboard/audit?cursor=" + c); p.status != http.StatusBadRequest {
					t.Errorf("cursor=%s: got %d, want 400", c, p.status)
				}
			}
		})
	})
}

// addProbeRows appends n audit rows of merchant mid, actor-a's on the
// even ones and actor-b's on the odd ones, objects m-000 up, and after
// each one a row of otherID by actor-a with the same action.
func addProbeRows(t *testing.T, env *apitest.Env, mid, otherID string, n int) {
	t.Helper()
	err := env.Store.Update(context.Background(), func(tx paylink.Tx) error {
		for i := range n {
			actor := "actor-a"
			if i%2 == 1 {
				actor = "actor-b"
			}
			for _, e := range []paylink.AuditEvent{
				{MerchantID: mid, ActorID: actor, ObjectID: fmt.Sprintf("m-%03d", i)},
				{MerchantID: otherID, ActorID: "actor-a", ObjectID: fmt.Sprintf("x-%03d", i)},
			} {
				e.At, e.ActorKind, e.Action, e.ObjectType, e.Outcome = env.Clock.Now(), paylink.ActorCLI, "probe.ping", "probe", paylink.OutcomeSuccess
				if err := tx.AddAuditEvent(&e); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("add audit rows: %v", err)
	}
}

// auditLogPage is one page of the audit log: its rows' objects and its
// Older link.
type auditLogPage struct {
	rows  []string
	older string
}

var (
	auditRow    = regexp.MustCompile(`<tr>\s*<td>[^<]*</td>\s*<td>[^\n]*</td>\s*<td>[^\n]*</td>\s*<td>([^<]*)</td>`)
	auditObject = regexp.MustCompile(`^probe ([mx]-\d+)$`)
)

// walkAuditPages follows the Older links from path to the last page.
func walkAuditPages(t *testing.T, b *browser, path string) []auditLogPage {
	t.Helper()
	var pages []auditLogPage
	for path != "" && len(pages) < 10 {
		p := b.get(path)
		if p.status != http.StatusOK {
			t.Fatalf("GET %s: got %d, want 200: %s", path, p.status, p.body)
		}
		var ap auditLogPage
		for _, m := range auditRow.FindAllStringSubmatch(p.body, -1) {
			ap.rows = append(ap.rows, strings.TrimSpace(m[1]))
		}
		ap.older = pagerLink(p, "next")
		pages = append(pages, ap)
		path = ap.older
	}
	return pages
}

// pagerLink is the page's pager link with that id, "" when it has none.
func pagerLink(p page, id string) string {
	m := regexp.MustCompile(`href="([^"]*)" id="` + id + `"`).FindStringSubmatch(p.body)
	if m == nil {
		return ""
	}
	return html.UnescapeString(m[1])
}

// rowCounts is how many rows each page shows.
func rowCounts(pages []auditLogPage) []int {
	out := make([]int, len(pages))
	for i, p := range pages {
		out[i] = len(p.rows)
	}
	return out
}

// probesOf is the probe objects of the pages' rows, in page order (rows
// of other objects, such as sign-ins, left out).
func probesOf(pages []auditLogPage) []string {
	var out []string
	for _, p := range pages {
		for _, r := range p.rows {
			if m := auditObject.FindStringSubmatch(r); m != nil {
				out = append(out, m[1])
			}
		}
	}
	return out
}

// probeObjects is prefix-NNN for the i below n that keep says, newest
// (highest) first.
func probeObjects(prefix string, n int, keep func(int) bool) []string {
	var out []string
	for i := n - 1; i >= 0; i-- {
		if keep(i) {
			out = append(out, fmt.Sprintf("%s-%03d", prefix, i))
		}
	}
	return out
}

// TestAuditLogNamesTheMoney: the audit page shows the amount and currency
// of each money action (a refund, a capture, a cancelled hold, a direct
// debit refund, a payment link created), "-" for a row written before
// rows named it and for an action that moves no money; never a card
// number.
func TestAuditLogNamesTheMoney(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	admin := addUser(t, env, m, "admin@example.com", paylink.RoleAdmin)
	debit := clearedDebit(t, env, m, "80.00")
	paid, toCapture, toCancel := purchase(t, env, m, "25.00", false), purchase(t, env, m, "30.00", true), purchase(t, env, m, "45.00", true)
	b := signedIn(t, env, "admin@example.com")
	act := func(page, action, amount string) {
		t.Helper()
		form := withValue(actionForm(t, b.get(page), action), "amount", amount)
		if res := b.post(page+"/"+action, form); res.status != http.StatusSeeOther || !strings.Contains(res.header.Get("Location"), "done=") {
			t.Fatalf("%s %s: got %d to %q: %s", action, page, res.status, res.header.Get("Location"), res.body)
		}
	}
	act("/dashboard/payments/"+paid, "refund", "5.00")
	act("/dashboard/payments/"+toCapture, "capture", "20.00")
	act("/dashboard/payments/"+toCancel, "cancel", "")
	act("/dashboard/direct-debits/"+debit, "refund", "7.50")
	link, _, err := env.Service.CreateLink(context.Background(), m.Merchant, paylink.NewLink{Amount: 4200, Currency: "AUD", MerchantReference: "INV-9"})
	if err != nil {
		t.Fatal(err)
	}
	err = env.Store.Update(context.Background(), func(tx paylink.Tx) error { // a refund's row as written before rows named the amount
		return tx.AddAuditEvent(&paylink.AuditEvent{At: env.Clock.Now(), MerchantID: m.ID, ActorKind: paylink.ActorCLI, ActorID: "old",
			Action: paylink.AuditRefund, ObjectType: paylink.ObjectRefund, ObjectID: "rf_old", Outcome: paylink.OutcomeSuccess, Detail: "APPROVED"})
	})
	if err != nil {
		t.Fatal(err)
	}

	p := b.get("/dashboard/audit")
	got := map[string]string{}
	for _, row := range auditMoneyRow.FindAllStringSubmatch(p.body, -1) {
		got[row[1]+" "+strings.TrimSpace(row[2])] = row[3]
	}
	refundOf := func(ref string) string {
		t.Helper()
		tl, err := env.Service.PaymentTimeline(context.Background(), m.Merchant, ref)
		if err != nil || len(tl.Refunds) != 1 {
			t.Fatalf("the refund of %s: %v %+v", ref, err, tl)
		}
		return tl.Refunds[0].Reference
	}
	for key, want := range map[string]string{
		"refund.create refund " + refundOf(paid):       "AUD 5.00",
		"transaction.capture transaction " + toCapture: "AUD 20.00",
		"transaction.cancel transaction " + toCancel:   "AUD 45.00",
		"refund.create refund " + refundOf(debit):      "AUD 7.50",
		"payment_link.create payment_link " + link.ID:  "AUD 42.00",
		"refund.create refund rf_old":                  "-",
		"user.sign_in user " + admin.ID:                "-",
	} {
		if got[key] != want {
			t.Errorf("%s: the amount shown is %q, want %q", key, got[key], want)
		}
	}
	if strings.Contains(p.body, visa) || strings.Contains(p.body, visa[6:]) {
		t.Errorf("the audit page holds the card number")
	}
}

// auditMoneyRow is an audit page row's action, object and amount.
var auditMoneyRow = regexp.MustCompile(`<tr>\s*<td>[^<]*</td>\s*<td>[^\n]*</td>\s*<td><a [^>]*>([^<]*)</a></td>\s*<td>([^<]*)</td>\s*<td class="num">([^<]*)</td>`)
