package dashboard

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/paylink/paylink"
)

// auditPageSize is how many rows a page of the audit log shows.
const auditPageSize = 100

// auditData is the audit page: the filter, one page of the matching rows
// (newest first) and the links to the other pages.
type auditData struct {
	Actor  string
	Action string
	Rows   []*paylink.AuditEvent
	// Names are the team's emails by user id, shown for staff actors (a
	// removed user keeps its id).
	Names map[string]string
	Pages pageLinks
}

// audit shows the merchant's audit log, newest first, filtered by actor
// id and action, a page at a time: the cursor is the id of the last row
// of the page before, and the next page lists the rows below it.
func (h *Handler) audit(rq *request) error {
	q := rq.r.URL.Query()
	// A card number typed into a filter matches no row (none is ever
	// recorded) and is shown masked, in the boxes and the page links.
	d := &auditData{Actor: paylink.MaskCardNumbers(strings.TrimSpace(q.Get("actor"))),
		Action: paylink.MaskCardNumbers(strings.TrimSpace(q.Get("action")))}
	v := view{Title: "Audit log", Data: d}
	before, err := auditCursor(q.Get("cursor"))
	if err != nil {
		return rq.formError("audit", v, err)
	}
	rows, err := h.svc.AuditLog(rq.r.Context(), paylink.AuditFilter{MerchantID: rq.ss.Merchant.ID, ActorID: d.Actor,
		Action: d.Action, NewestFirst: true, BeforeID: before, Limit: auditPageSize + 1})
	if err != nil {
		return err
	}
	next := ""
	if len(rows) > auditPageSize {
		rows = rows[:auditPageSize]
		next = strconv.FormatInt(rows[auditPageSize-1].ID, 10)
	}
	d.Rows, d.Pages = rows, pagesOf(d.paging(q), "/dashboard/audit", next)
	if d.Names, err = h.teamNames(rq); err != nil {
		return err
	}
	rq.render(http.StatusOK, "audit", v)
	return nil
}

// auditCursor reads the audit page's cursor: "" for the newest page,
// else the positive id of a row, the pages going below it.
func auditCursor(raw string) (int64, error) {
	if raw == "" {
		return 0, nil
	}
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || id <= 0 {
		fe := paylink.FieldErrors{}
		fe.Add("cursor", "is not a cursor of this list")
		return 0, fe.Err()
	}
	return id, nil
}

// paging is the query the page links carry: the filter and the position
// of q, nothing else.
func (d *auditData) paging(q url.Values) url.Values {
	p := url.Values{"cursor": q["cursor"], "prev": q["prev"]}
	if d.Actor != "" {
		p.Set("actor", d.Actor)
	}
	if d.Action != "" {
		p.Set("action", d.Action)
	}
	return p
}

// teamNames maps the ids of the merchant's dashboard users to their
// emails, for the admin's pages that name staff actors.
func (h *Handler) teamNames(rq *request) (map[string]string, error) {
	users, err := h.svc.Team(rq.r.Context(), rq.ss.User)
	if err != nil {
		return nil, err
	}
	names := make(map[string]string, len(users))
	for _, u := range users {
		names[u.ID] = u.Email
	}
	return names, nil
}
