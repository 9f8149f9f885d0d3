package dashboard

import (
	"net/http"
	"strings"

	"github.com/paylink/paylink"
)

// auditPageSize is how many rows the audit page shows.
const auditPageSize = 100

// auditData is the audit page: the filter and the newest matching rows.
type auditData struct {
	Actor  string
	Action string
	Rows   []*paylink.AuditEvent
	// Names are the team's emails by user id, shown for staff actors (a
	// removed user keeps its id).
	Names map[string]string
}

// audit shows the merchant's audit log, newest first, filtered by actor
// id and action.
func (h *Handler) audit(rq *request) error {
	q := rq.r.URL.Query()
	d := auditData{Actor: strings.TrimSpace(q.Get("actor")), Action: strings.TrimSpace(q.Get("action"))}
	rows, err := h.svc.AuditLog(rq.r.Context(), paylink.AuditFilter{MerchantID: rq.ss.Merchant.ID, ActorID: d.Actor,
		Action: d.Action, NewestFirst: true, Limit: auditPageSize})
	if err != nil {
		return err
	}
	d.Rows = rows
	if d.Names, err = h.teamNames(rq); err != nil {
		return err
	}
	rq.render(http.StatusOK, "audit", view{Title: "Audit log", Data: d})
	return nil
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
