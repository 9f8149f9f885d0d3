package dashboard

import (
	"html/template"
	"net/http"
	"strings"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/httpx"
)

// The account page: the signed-in user's password and two-factor
// sign-in.

// accountData is the account page.
type accountData struct {
	// Secret and URI are shown while two-factor set-up is unconfirmed.
	Secret string
	URI    template.URL  // otpauth:, which html/template would otherwise refuse
	QR     template.HTML // the URI as an inline SVG QR code
	// RecoveryCodes are shown once, right after set-up.
	RecoveryCodes []string
	Required      bool
}

// account shows the user's security settings.
func (h *Handler) account(rq *request) error {
	return h.renderAccount(rq, http.StatusOK, view{}, accountData{})
}

// renderAccount renders the account page, with the pending TOTP secret.
func (h *Handler) renderAccount(rq *request, status int, v view, d accountData) error {
	secret, err := h.svc.PendingTOTPSecret(rq.ss)
	if err != nil {
		return err
	}
	if secret != nil {
		uri := paylink.TOTPURI(secret, "paylink", rq.ss.User.Email)
		d.Secret, d.URI = paylink.TOTPSecretText(secret), template.URL(uri)
		if d.QR, err = qrSVG(uri, "QR code of the set-up link for your authenticator app"); err != nil {
			return err
		}
	}
	d.Required = rq.ss.Merchant.Settings.Dashboard.RequireTOTP && !rq.ss.User.TOTPEnabled
	v.Title, v.Data = "Account", d
	rq.render(status, "account", v)
	return nil
}

// changePassword sets a new password; every session ends, this one too.
func (h *Handler) changePassword(rq *request) error {
	f := rq.r.PostFormValue
	if f("new_password") != f("confirm") {
		return h.renderAccount(rq, http.StatusBadRequest, view{Error: "The two new passwords differ.",
			Fields: map[string]string{"confirm": "does not match the new password"}}, accountData{})
	}
	if err := h.svc.ChangePassword(rq.r.Context(), rq.ss, f("current_password"), f("new_password")); err != nil {
		return h.accountError(rq, err)
	}
	h.clearCookie(rq.w, sessionCookie)
	return rq.redirect(loginPath + "?done=password")
}

// beginTOTP makes a new secret to scan or type into an authenticator.
func (h *Handler) beginTOTP(rq *request) error {
	if _, err := h.svc.BeginTOTP(rq.r.Context(), rq.ss); err != nil {
		return h.accountError(rq, err)
	}
	return h.renderAccount(rq, http.StatusOK, view{}, accountData{})
}

// confirmTOTP turns two-factor sign-in on and shows the recovery codes.
func (h *Handler) confirmTOTP(rq *request) error {
	codes, err := h.svc.ConfirmTOTP(rq.r.Context(), rq.ss, rq.r.PostFormValue("code"), rq.r.PostFormValue("password"))
	if err != nil {
		return h.accountError(rq, renameField(err, "password", "setup_password"))
	}
	return h.renderAccount(rq, http.StatusOK, view{Notice: "Two-factor sign-in is on."}, accountData{RecoveryCodes: codes})
}

// regenerateRecoveryCodes replaces the user's recovery codes and shows the
// new ones once.
func (h *Handler) regenerateRecoveryCodes(rq *request) error {
	codes, err := h.svc.RegenerateRecoveryCodes(rq.r.Context(), rq.ss, rq.r.PostFormValue("password"))
	if err != nil {
		return h.accountError(rq, renameField(err, "password", "codes_password"))
	}
	return h.renderAccount(rq, http.StatusOK, view{Notice: "New recovery codes made: the old ones no longer work."},
		accountData{RecoveryCodes: codes})
}

// disableTOTP turns two-factor sign-in off.
func (h *Handler) disableTOTP(rq *request) error {
	if err := h.svc.DisableTOTP(rq.r.Context(), rq.ss, rq.r.PostFormValue("password")); err != nil {
		return h.accountError(rq, renameField(err, "password", "totp_password"))
	}
	return h.renderAccount(rq, http.StatusOK, view{Notice: "Two-factor sign-in is off."}, accountData{})
}

// accountError shows a rule's refusal on the account page.
func (h *Handler) accountError(rq *request, err error) error {
	e := paylink.AsError(err)
	if e.Kind != paylink.KindInvalid && e.Kind != paylink.KindConflict {
		return err
	}
	return h.renderAccount(rq, httpx.Status(e.Kind), view{Error: errorText(e), Fields: e.Fields}, accountData{})
}

// renameField moves a refusal's problem from the Service's field name
// (from) to the form field that was sent (to): the account page has
// several password fields, and the Service names each "password".
func renameField(err error, from, to string) error {
	e := paylink.AsError(err)
	problem, ok := e.Fields[from]
	if !ok {
		return err
	}
	return &paylink.Error{Kind: e.Kind, Code: e.Code, Message: strings.Replace(e.Message, from+": ", to+": ", 1),
		Fields: map[string]string{to: problem}}
}
