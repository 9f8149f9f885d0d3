package dashboard

import (
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/httpx"
)

// Sign-in, the second factor, sign-out and accepting an invite.

// loginPage shows the sign-in form.
func (h *Handler) loginPage(rq *request) error {
	q := rq.r.URL.Query()
	rq.render(http.StatusOK, "login", view{Title: "Sign in", Notice: notice(q.Get("done")), Data: signIn{Next: safeNext(q.Get("next"))}})
	return nil
}

// signIn is what the sign-in and second-factor pages carry: the email
// typed, and the dashboard page to go back to after signing in.
type signIn struct {
	Email, Next string
}

// safeNext is next when it is a dashboard page to return to (a clean
// path of this site under /dashboard/, not the sign-in pages), else "":
// never another site or, through dot segments, another part of this
// one, so the parameter cannot make an open redirect.
func safeNext(next string) string {
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || strings.ContainsAny(next, "\\\r\n") ||
		!strings.HasPrefix(u.Path, "/dashboard/") || strings.HasPrefix(u.Path, loginPath) || strings.HasPrefix(next, "//") ||
		!isCleanPath(u.Path) {
		return ""
	}
	return next
}

// isCleanPath reports whether p has no empty, "." or ".." segment (a
// trailing slash aside): what path.Clean would leave unchanged.
func isCleanPath(p string) bool {
	clean := path.Clean(p)
	if strings.HasSuffix(p, "/") && clean != "/" {
		clean += "/"
	}
	return clean == p
}

// afterSignIn is where a completed sign-in goes: back to next, or home.
func afterSignIn(next string) string {
	if next = safeNext(next); next != "" {
		return next
	}
	return "/dashboard/"
}

// nextQuery is "?next=..." for a page to return to, "" for none.
func nextQuery(next string) string {
	if next = safeNext(next); next == "" {
		return ""
	}
	return "?next=" + url.QueryEscape(next)
}

// notice is the message of a finished action named in a redirect.
func notice(done string) string {
	switch done {
	case "signed-out":
		return "You are signed out."
	case "password":
		return "Your password is changed. Sign in with the new one."
	case "invite":
		return "Your account is ready. Sign in with your email and new password."
	case "role":
		return "The role was changed."
	case "removed":
		return "The member was removed. Their sessions have ended."
	case "security":
		return "The sign-in settings were saved."
	case "expired":
		return "Your session has ended (after a while without use, a sign-out, or a change to your account). Sign in again to go on where you were."
	case "expired_form":
		return "Your session had ended, so the form you sent was not carried out. Sign in again, then check the page and send it again if you still mean to."
	}
	return ""
}

// login checks the email and password. An unknown email and a wrong
// password get the same status and page; too many failures get 429.
func (h *Handler) login(rq *request) error {
	email, next := rq.r.PostFormValue("email"), safeNext(rq.r.PostFormValue("next"))
	in, err := h.svc.SignIn(rq.r.Context(), email, rq.r.PostFormValue("password"))
	if err != nil {
		e := paylink.AsError(err)
		if e.Kind != paylink.KindUnauthorized && e.Kind != paylink.KindRateLimited {
			return err
		}
		throttled(rq, e)
		rq.render(httpx.Status(e.Kind), "login", view{Title: "Sign in", Error: e.Message, Data: signIn{Email: email, Next: next}})
		return nil
	}
	h.setCookie(rq.w, sessionCookie, in.Token, 0)
	h.clearCookie(rq.w, loginCookie)
	if in.Session.PendingTOTP {
		return rq.redirect(loginPath + "/totp" + nextQuery(next))
	}
	return rq.redirect(afterSignIn(next))
}

// throttled sets Retry-After on a refusal for too many failed sign-ins:
// the whole window, the longest the oldest counted failure can stay in it.
func throttled(rq *request, e *paylink.Error) {
	if e.Kind == paylink.KindRateLimited {
		rq.w.Header().Set("Retry-After", strconv.Itoa(int(paylink.SignInFailureWindow/time.Second)))
	}
}

// totpPage asks for the second factor.
func (h *Handler) totpPage(rq *request) error {
	rq.render(http.StatusOK, "totp", view{Title: "Two-factor sign-in", Data: signIn{Next: safeNext(rq.r.URL.Query().Get("next"))}})
	return nil
}

// totpVerify checks the code and completes the sign-in.
func (h *Handler) totpVerify(rq *request) error {
	err := h.svc.VerifySecondFactor(rq.r.Context(), rq.ss, rq.r.PostFormValue("code"))
	if err != nil {
		e := paylink.AsError(err)
		if e.Kind != paylink.KindUnauthorized && e.Kind != paylink.KindRateLimited {
			return err
		}
		throttled(rq, e)
		rq.render(httpx.Status(e.Kind), "totp", view{Title: "Two-factor sign-in", Error: e.Message,
			Data: signIn{Next: safeNext(rq.r.PostFormValue("next"))}})
		return nil
	}
	return rq.redirect(afterSignIn(rq.r.PostFormValue("next")))
}

// logout ends the session.
func (h *Handler) logout(rq *request) error {
	if err := h.svc.SignOut(rq.r.Context(), rq.ss); err != nil {
		return err
	}
	h.clearCookie(rq.w, sessionCookie)
	return rq.redirect(loginPath + "?done=signed-out")
}

// invitePage shows the form that sets the invited user's password.
func (h *Handler) invitePage(rq *request) error {
	inv, err := h.svc.InviteByToken(rq.r.Context(), rq.r.PathValue("token"))
	if err != nil {
		return err
	}
	rq.render(http.StatusOK, "invite", view{Title: "Join your team", Data: inv})
	return nil
}

// acceptInvite creates the user and sends them to sign in. The invite is
// used through AcceptInvite before anything else is read, so that one
// whose maker is gone is refused, deleted and audited there; the form is
// shown again, with the invite, only for the invitee's own mistakes.
func (h *Handler) acceptInvite(rq *request) error {
	token, password := rq.r.PathValue("token"), rq.r.PostFormValue("password")
	var err error
	if password != rq.r.PostFormValue("confirm") {
		err = &paylink.Error{Kind: paylink.KindInvalid, Code: paylink.CodeInvalidRequest, Message: "The two passwords differ.",
			Fields: map[string]string{"confirm": "does not match the password"}}
	} else if _, err = h.svc.AcceptInvite(rq.r.Context(), token, password); err == nil {
		h.clearCookie(rq.w, loginCookie)
		return rq.redirect(loginPath + "?done=invite")
	}
	inv, ierr := h.svc.InviteByToken(rq.r.Context(), token)
	if ierr != nil {
		return ierr
	}
	return rq.formError("invite", view{Title: "Join your team", Data: inv}, err)
}

// notFound answers any other request under /dashboard/: 405 with Allow
// for a page asked for under a method it does not take, else 404.
func (h *Handler) notFound(mux *http.ServeMux) pageFunc {
	return func(rq *request) error {
		if allow := httpx.Allowed(mux, rq.r.Host, rq.r.URL, "/dashboard/", "/"); len(allow) > 0 {
			rq.w.Header().Set("Allow", strings.Join(allow, ", "))
			return paylink.Errorf(paylink.KindMethodNotAllowed, paylink.CodeMethodNotAllowed, "this page cannot be opened that way: use the dashboard's own links and buttons")
		}
		return paylink.Errorf(paylink.KindNotFound, paylink.CodeNotFound, "there is no such page")
	}
}
