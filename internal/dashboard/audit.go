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
	rq.render(http.StatusOK, "audit", view{Title: "Audit log", Data: d})
	return nil
}
