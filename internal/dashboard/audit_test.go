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
