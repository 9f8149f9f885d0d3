package dashboard

import (
	"fmt"
	"net/http"
	"slices"
	"time"

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
	// InviteMailed says the invite just made was also sent by mail.
	InviteMailed bool
	RequireTOTP  bool
	// InviteKey is the invite form's idempotency key: a reload of the
	// page that showed a new invite does not make a second one.
	InviteKey string
	// ConfirmID is the user whose removal the page asks to confirm; one
	// not of the team is not found, as RemoveUser answers.
	ConfirmID string
	// Invites are the outstanding invites, each with the email of the
	// admin who made it.
	Invites []inviteRow
}

// inviteRow is an outstanding invite on the team page.
type inviteRow struct {
	*paylink.Invite
	// By is the inviting admin's email, "" when they left the team.
	By string
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
	if d.ConfirmID != "" && !slices.ContainsFunc(users, func(u *paylink.User) bool { return u.ID == d.ConfirmID }) {
		return paylink.Errorf(paylink.KindNotFound, paylink.CodeNotFound, "no such member of your team")
	}
	invites, err := h.svc.Invites(rq.r.Context(), rq.ss.User)
	if err != nil {
		return err
	}
	for _, inv := range invites {
		row := inviteRow{Invite: inv}
		if i := slices.IndexFunc(users, func(u *paylink.User) bool { return u.ID == inv.CreatedBy }); i >= 0 {
			row.By = users[i].Email
		}
		d.Invites = append(d.Invites, row)
	}
	if d.InviteKey, err = newIdempotencyKey(); err != nil {
		return err
	}
	d.Users, d.RequireTOTP = users, rq.ss.Merchant.Settings.Dashboard.RequireTOTP
	v.Title, v.Data = "Team", d
	rq.render(status, "team", v)
	return nil
}

// invite makes a one-time invite link and shows it to the admin.
func (h *Handler) invite(rq *request) error {
	email, role := rq.r.PostFormValue("email"), rq.r.PostFormValue("role")
	replay, finish, err := h.once(rq, "invite", email, role)
	if err == nil && replay != nil {
		return h.renderTeam(rq, http.StatusOK, view{Notice: "This invite was already made: its link was shown once and is not shown again. " +
			"Make a new invite if it was lost."}, teamData{})
	}
	var token string
	var inv *paylink.Invite
	if err == nil {
		token, inv, err = h.svc.CreateInvite(rq.r.Context(), rq.ss.User, email, paylink.Role(role))
		if err != nil {
			failed(finish, err)
		} else {
			finish(http.StatusCreated, nil)
		}
	}
	if err != nil {
		e := paylink.AsError(err)
		if e.Kind != paylink.KindInvalid && e.Kind != paylink.KindConflict {
			return err
		}
		return h.renderTeam(rq, httpx.Status(e.Kind), view{Error: errorText(e), Fields: e.Fields}, teamData{InviteEmail: email})
	}
	url := h.svc.Config().BaseURL + "/dashboard/invite/" + token
	v, d := view{Notice: "Invite made for " + inv.Email + ". Pass the link below on; it works once, for " + inviteLife() + "."}, teamData{InviteURL: url}
	if h.mail != nil {
		subject, body := inviteMail(rq.ss.Merchant, rq.ss.User, inv, url)
		if err := h.mail.Send(rq.r.Context(), inv.Email, subject, body); err != nil {
			// The error names the server, never the link: it opens an account.
			h.log.ErrorContext(rq.r.Context(), "mail the invite", "error", err)
			v.Error = "The invite was made, but the mail to " + inv.Email + " could not be sent. Pass the link below on yourself."
			v.Notice = ""
		} else {
			v.Notice, d.InviteMailed = "Invite sent by email to "+inv.Email+". The link works once, for "+inviteLife()+".", true
		}
	}
	return h.renderTeam(rq, http.StatusOK, v, d)
}

// inviteMail is the invite's mail: plain text (the merchant's name is
// attacker input, and text needs no escaping), naming who invited and as
// what, with the link. It holds no password, token of the admin or
// secret other than the invite link itself.
func inviteMail(m *paylink.Merchant, admin *paylink.User, inv *paylink.Invite, url string) (subject, body string) {
	subject = "Your invitation to the paylink dashboard of " + m.TradingName
	body = fmt.Sprintf("Hello,\n\n%s invited you to the paylink dashboard of %s, as %s.\n\n"+
		"Choose your password with this link; it works once, until %s:\n\n%s\n\n"+
		"If you did not expect this invitation, ignore this message.\n",
		admin.Email, m.TradingName, inv.Role, inv.ExpiresAt.UTC().Format("2 January 2006 15:04 UTC"), url)
	return subject, body
}

// revokeInvite deletes an outstanding invite, so its link stops working.
func (h *Handler) revokeInvite(rq *request) error {
	inv, err := h.svc.RevokeInvite(rq.r.Context(), rq.ss.User, rq.r.PathValue("id"))
	if e := paylink.AsError(err); err != nil && e.Kind == paylink.KindNotFound {
		return h.renderTeam(rq, http.StatusNotFound, view{Error: e.Message}, teamData{})
	} else if err != nil {
		return err
	}
	return h.renderTeam(rq, http.StatusOK, view{Notice: "Invite for " + inv.Email + " revoked: its link no longer works."}, teamData{})
}

// changeRole gives a user another role.
func (h *Handler) changeRole(rq *request) error {
	err := h.svc.ChangeRole(rq.r.Context(), rq.ss.User, rq.r.PathValue("id"), paylink.Role(rq.r.PostFormValue("role")))
	if err != nil {
		return h.teamError(rq, err)
	}
	return rq.redirect("/dashboard/team?done=role")
}

// removeUser removes a user once the admin confirmed it: the list's
// Remove button asks first, on the team page, and only the confirmation's
// form (confirm=yes) removes.
func (h *Handler) removeUser(rq *request) error {
	if rq.r.PostFormValue("confirm") != "yes" {
		return h.renderTeam(rq, http.StatusOK, view{}, teamData{ConfirmID: rq.r.PathValue("id")})
	}
	if err := h.svc.RemoveUser(rq.r.Context(), rq.ss.User, rq.r.PathValue("id")); err != nil {
		return h.teamError(rq, err)
	}
	return rq.redirect("/dashboard/team?done=removed")
}

// setTOTPRequired turns the merchant-wide two-factor requirement on or
// off: the form's checkbox sends require=on, or nothing when unticked;
// any other value is refused rather than read as off.
func (h *Handler) setTOTPRequired(rq *request) error {
	require := rq.r.PostFormValue("require")
	if require != "" && require != "on" {
		return h.renderTeam(rq, http.StatusBadRequest, view{Error: "The two-factor requirement is a checkbox: tick it to require " +
			"two-factor sign-in, or leave it unticked to make it optional."}, teamData{})
	}
	if err := h.svc.SetTOTPRequired(rq.r.Context(), rq.ss.User, require == "on"); err != nil {
		return h.teamError(rq, err)
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

// inviteLife says how long an invite link works (paylink.InviteTTL).
func inviteLife() string {
	return fmt.Sprintf("%d days", paylink.InviteTTL/(24*time.Hour))
}
