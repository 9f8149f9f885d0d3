package dashboard

import (
	"net/http"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/httpx"
)

// The team page: users of the merchant, invites, roles, removal and the
// merchant-wide two-factor requirement. Admins only (PermTeam).

// teamData is the team page.
type teamData struct {
	Users []*paylink.User
	// InviteURL is the link of the invite just made, shown once.
	InviteURL   string
	InviteEmail string
	RequireTOTP bool
}

// team lists the users.
func (h *Handler) team(rq *request) error {
	return h.renderTeam(rq, http.StatusOK, view{Notice: notice(rq.r.URL.Query().Get("done"))}, teamData{})
}

// renderTeam renders the team page with v's messages and d's extras.
func (h *Handler) renderTeam(rq *request, status int, v view, d teamData) error {
	users, err := h.svc.Team(rq.r.Context(), rq.ss.User)
	if err != nil {
		return err
	}
	d.Users, d.RequireTOTP = users, rq.ss.Merchant.Settings.Dashboard.RequireTOTP
	v.Title, v.Data = "Team", d
	rq.render(status, "team", v)
	return nil
}

// invite makes a one-time invite link and shows it to the admin.
func (h *Handler) invite(rq *request) error {
	email := rq.r.PostFormValue("email")
	token, inv, err := h.svc.CreateInvite(rq.r.Context(), rq.ss.User, email, paylink.Role(rq.r.PostFormValue("role")))
	if err != nil {
		e := paylink.AsError(err)
		if e.Kind != paylink.KindInvalid && e.Kind != paylink.KindConflict {
			return err
		}
		return h.renderTeam(rq, httpx.Status(e.Kind), view{Error: e.Message, Fields: e.Fields}, teamData{InviteEmail: email})
	}
	url := h.svc.Config().BaseURL + "/dashboard/invite/" + token
	return h.renderTeam(rq, http.StatusOK, view{Notice: "Invite made for " + inv.Email +
		". Pass the link below on; it works once, for 7 days."}, teamData{InviteURL: url})
}

// changeRole gives a user another role.
func (h *Handler) changeRole(rq *request) error {
	err := h.svc.ChangeRole(rq.r.Context(), rq.ss.User, rq.r.PathValue("id"), paylink.Role(rq.r.PostFormValue("role")))
	if err != nil {
		return h.teamError(rq, err)
	}
	return rq.redirect("/dashboard/team?done=role")
}

// removeUser removes a user.
func (h *Handler) removeUser(rq *request) error {
	if err := h.svc.RemoveUser(rq.r.Context(), rq.ss.User, rq.r.PathValue("id")); err != nil {
		return h.teamError(rq, err)
	}
	return rq.redirect("/dashboard/team?done=removed")
}

// setTOTPRequired turns the merchant-wide two-factor requirement on or off.
func (h *Handler) setTOTPRequired(rq *request) error {
	if err := h.svc.SetTOTPRequired(rq.r.Context(), rq.ss.User, rq.r.PostFormValue("require") == "on"); err != nil {
		return err
	}
	return rq.redirect("/dashboard/team?done=security")
}

// teamError shows a rule's refusal on the team page.
func (h *Handler) teamError(rq *request, err error) error {
	e := paylink.AsError(err)
	if e.Kind != paylink.KindInvalid && e.Kind != paylink.KindConflict {
		return err
	}
	return h.renderTeam(rq, httpx.Status(e.Kind), view{Error: e.Message}, teamData{})
}
