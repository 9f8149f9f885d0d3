package dashboard

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/httpx"
)

// Cookies. The session cookie holds the session's secret id (the store
// keeps only its hash); the login cookie is a random value that the
// sign-in and invite forms must echo (double submit), so another site
// cannot sign a browser in to an account of its choosing.
const (
	sessionCookie = "paylink_dashboard"
	loginCookie   = "paylink_dashboard_login"
	loginPath     = "/dashboard/login"
	logoutPath    = "/dashboard/logout"
)

// request is one dashboard request: the signed-in user (nil on public
// pages) and the CSRF token its forms carry.
type request struct {
	h    *Handler
	w    http.ResponseWriter
	r    *http.Request
	ss   *paylink.StaffSession
	csrf string
}

// pageFunc handles one page or action.
type pageFunc func(rq *request) error

// errCSRF is the 403 of a failed CSRF or Origin check.
func errCSRF() error {
	return paylink.Errorf(paylink.KindForbidden, paylink.CodeCSRFFailed,
		"this form is out of date or came from another site; reload the page and try again")
}

// actor puts the staff actor (no user yet) with the request's source
// address in the request's context.
func actor(r *http.Request) *http.Request {
	a := paylink.Actor{Kind: paylink.ActorStaff, IP: paylink.SourceIP(r.RemoteAddr), RequestID: paylink.RequestIDFrom(r.Context())}
	return r.WithContext(paylink.WithActor(r.Context(), a))
}

// page serves a page of a signed-in user whose role has permission p.
// Without a valid session it redirects to the sign-in page; a session
// pending its second factor goes to the code page, except to sign out
// (so that someone who cannot give the code can end the session the
// password opened); when the merchant requires two-factor sign-in and
// the user has none, only the account page and sign-out open. A POST
// must pass the Origin and CSRF checks before anything else happens.
func (h *Handler) page(p paylink.Permission, fn pageFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		securityHeaders(w)
		r = actor(r)
		rq := &request{h: h, w: w, r: r}
		ss, ok := h.session(rq)
		if !ok {
			return
		}
		rq.ss, rq.csrf = ss, ss.Session.CSRF
		if ss.Session.PendingTOTP && r.URL.Path != logoutPath {
			http.Redirect(w, r, loginPath+"/totp", http.StatusSeeOther)
			return
		}
		if ss.Merchant.Settings.Dashboard.RequireTOTP && !ss.User.TOTPEnabled &&
			!strings.HasPrefix(r.URL.Path, "/dashboard/account") && r.URL.Path != logoutPath {
			http.Redirect(w, r, "/dashboard/account", http.StatusSeeOther)
			return
		}
		h.serve(rq, p, fn)
	})
}

// pending serves the second-factor page of a session pending it.
func (h *Handler) pending(fn pageFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		securityHeaders(w)
		r = actor(r)
		rq := &request{h: h, w: w, r: r}
		ss, ok := h.session(rq)
		if !ok {
			return
		}
		rq.ss, rq.csrf = ss, ss.Session.CSRF
		if !ss.Session.PendingTOTP {
			http.Redirect(w, r, "/dashboard/", http.StatusSeeOther)
			return
		}
		h.serve(rq, paylink.PermView, fn)
	})
}

// session loads the request's session, redirecting to the sign-in page
// (and clearing the cookie) when there is none. A form sent without a
// live session, whether its cookie ended or was gone (signed out in
// another tab), was not carried out, and the sign-in page says so (a
// sign-out has nothing left to do).
func (h *Handler) session(rq *request) (*paylink.StaffSession, bool) {
	ended := ""
	if rq.r.Method != http.MethodGet && rq.r.Method != http.MethodHead && rq.r.URL.Path != logoutPath {
		ended = "expired_form"
	}
	if c, err := rq.r.Cookie(sessionCookie); err == nil {
		ss, err := h.svc.StaffSession(rq.r.Context(), c.Value, h.idle)
		if err == nil {
			rq.r = rq.r.WithContext(paylink.WithActor(rq.r.Context(), staff(rq.r, ss.User)))
			return ss, true
		}
		if paylink.AsError(err).Kind != paylink.KindUnauthorized {
			rq.fail(err)
			return nil, false
		}
		h.clearCookie(rq.w, sessionCookie)
		if ended == "" {
			ended = "expired"
		}
	}
	next := nextQuery(returnPath(rq.r))
	target := loginPath + next
	if ended != "" {
		target = loginPath + "?done=" + ended + strings.Replace(next, "?", "&", 1)
	}
	http.Redirect(rq.w, rq.r, target, http.StatusSeeOther)
	return nil, false
}

// returnPath is the dashboard page to come back to after signing in: the
// page asked for, or for a form sent after the session ended, the page
// it was sent from (its Referer on this site; what was typed in it is
// lost, and the page says so). Either comes back without its notice of
// an earlier action (done=), which the page would otherwise show again
// as if the form just lost had been carried out ("The refund was made.").
func returnPath(r *http.Request) string {
	if r.Method == http.MethodGet {
		return withoutNotice(r.URL)
	}
	if ref := refererOnSite(r); ref != nil {
		return withoutNotice(ref)
	}
	return ""
}

// withoutNotice is u's path and query, less its done= notice.
func withoutNotice(u *url.URL) string {
	q := u.Query()
	if !q.Has("done") {
		return u.RequestURI()
	}
	q.Del("done")
	c := *u
	c.RawQuery = q.Encode()
	return c.RequestURI()
}

// refererOnSite is the page of this site the request came from (its
// Referer), nil for none or another site's.
func refererOnSite(r *http.Request) *url.URL {
	ref, err := url.Parse(r.Referer())
	if err != nil || ref.Host != r.Host {
		return nil
	}
	return ref
}

// staff is the actor of a signed-in user's request.
func staff(r *http.Request, u *paylink.User) paylink.Actor {
	a := paylink.ActorFrom(r.Context())
	a.Kind, a.ID = paylink.ActorStaff, u.ID
	return a
}

// serve checks a POST's origin and token, then the role, then runs fn.
func (h *Handler) serve(rq *request, p paylink.Permission, fn pageFunc) {
	if rq.r.Method == http.MethodPost {
		if err := rq.checkPost(); err != nil {
			rq.fail(err)
			return
		}
	}
	ctx, err := h.svc.StaffContext(rq.r.Context(), rq.ss, p) // the route's authority, which the Service checks again
	if err != nil {
		rq.fail(err)
		return
	}
	rq.r = rq.r.WithContext(ctx)
	if err := fn(rq); err != nil {
		rq.fail(err)
	}
}

// public serves a page without a session (sign-in, invite): its forms
// are protected by the login cookie instead.
func (h *Handler) public(fn pageFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		securityHeaders(w)
		rq := &request{h: h, w: w, r: actor(r)}
		c, err := r.Cookie(loginCookie)
		if err == nil && len(c.Value) == 32 {
			rq.csrf = c.Value
		} else if rq.r.Method == http.MethodGet {
			b := make([]byte, 24)
			if _, err := rand.Read(b); err != nil {
				rq.fail(paylink.Internal("login cookie", err))
				return
			}
			rq.csrf = base64.RawURLEncoding.EncodeToString(b)
			h.setCookie(w, loginCookie, rq.csrf, 0)
		}
		if rq.r.Method == http.MethodPost {
			if err := rq.checkPost(); err != nil {
				rq.fail(err)
				return
			}
		}
		if err := fn(rq); err != nil {
			rq.fail(err)
		}
	})
}

// checkPost refuses a POST from another origin or without this
// session's (or sign-in cookie's) token. Browsers send Origin with every
// POST; a request without one must still carry the token.
func (rq *request) checkPost() error {
	rq.r.Body = http.MaxBytesReader(rq.w, rq.r.Body, maxForm)
	if o := rq.r.Header.Get("Origin"); o != "" && o != rq.h.origin && o != "http://"+rq.r.Host && o != "https://"+rq.r.Host {
		return errCSRF()
	}
	if err := httpx.ReadForm(rq.r); err != nil {
		return err
	}
	got := rq.r.PostFormValue("csrf")
	if rq.csrf == "" || !hmac.Equal([]byte(got), []byte(rq.csrf)) {
		return errCSRF()
	}
	return nil
}

// setCookie sets an HttpOnly, SameSite=Lax cookie for the dashboard's
// path, Secure when the service is served over https; maxAge 0 makes it
// last for the browser session.
func (h *Handler) setCookie(w http.ResponseWriter, name, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: value, Path: "/dashboard", MaxAge: maxAge, HttpOnly: true,
		Secure: h.secure, SameSite: http.SameSiteLaxMode})
}

func (h *Handler) clearCookie(w http.ResponseWriter, name string) { h.setCookie(w, name, "", -1) }

// fail renders an error page; internal detail is logged, never shown.
func (rq *request) fail(err error) {
	if httpx.ClientGone(rq.r, err) {
		rq.w.WriteHeader(httpx.StatusClientClosedRequest)
		return
	}
	e := paylink.AsError(err)
	httpx.LogFailure(rq.h.log, rq.r, e)
	httpx.SetRetryAfter(rq.w, err) // every 503, processor_unavailable too
	rq.render(httpx.Status(e.Kind), "error", view{Title: errorTitle(e), Error: failMessage(err, e)})
}

// failMessage is what an error page says of err (as e): an unreachable
// database in the dashboard's words (msgUnavailable), anything else, a
// busy password check included, as the Service said it.
func failMessage(err error, e *paylink.Error) string {
	if errors.Is(err, paylink.ErrUnavailable) || errors.Is(err, paylink.ErrCommitInDoubt) {
		return msgUnavailable
	}
	return e.Message
}

// errorTitle is an error page's title: what kind of refusal it is.
func errorTitle(e *paylink.Error) string {
	switch k := e.Kind; {
	case e.Code == paylink.CodeCSRFFailed:
		return "Form out of date"
	case k == paylink.KindForbidden:
		return "Not allowed"
	case k == paylink.KindNotFound || k == paylink.KindMethodNotAllowed:
		return "Not found"
	case k == paylink.KindInvalid:
		return "Please check what you entered"
	}
	return "Something went wrong"
}

// msgUnavailable is the dashboard's answer while its database cannot be
// reached (the API's says to retry with the same Idempotency-Key).
const msgUnavailable = "The service is briefly unavailable (its database cannot be reached). What you asked for may or may not have been done: in a minute, open the page again to see, before trying again."

// view is what every template gets: the page's data and the layout's.
type view struct {
	Title  string
	User   *paylink.User
	Merch  *paylink.Merchant
	CSRF   string
	Path   string
	Error  string
	Notice string
	Fields map[string]string
	Data   any
}

// Nav is the layout's navigation, filtered by the user's role.
func (v view) Nav() []navItem {
	var out []navItem
	for _, n := range navItems() {
		if v.User != nil && v.User.Role.Can(n.Perm) {
			n.Current = v.Path == n.Path
			out = append(out, n)
		}
	}
	return out
}

// navItem is one link of the navigation.
type navItem struct {
	Path, Label string
	Perm        paylink.Permission
	Current     bool
}

// navItems lists the pages in the navigation; a new page adds a line.
func navItems() []navItem {
	return []navItem{
		{Path: "/dashboard/", Label: "Home", Perm: paylink.PermView},
		{Path: "/dashboard/payments", Label: "Payments", Perm: paylink.PermView},
		{Path: debitsBase, Label: "Direct debits", Perm: paylink.PermView},
		{Path: "/dashboard/links", Label: "Payment links", Perm: paylink.PermView},
		{Path: "/dashboard/balances", Label: "Balances", Perm: paylink.PermView},
		{Path: "/dashboard/developers", Label: "Developers", Perm: paylink.PermAPIKeys},
		{Path: "/dashboard/team", Label: "Team", Perm: paylink.PermTeam},
		{Path: "/dashboard/audit", Label: "Audit log", Perm: paylink.PermAudit},
		{Path: "/dashboard/account", Label: "Account", Perm: paylink.PermView},
	}
}

// render writes a page with status, filling in the layout's fields. The
// page is rendered into memory first: a template that fails is a clean
// 500, and a browser that leaves before the page is sent is no error of
// the page's (written as it rendered, every write after the browser
// left was logged at ERROR as a failed rendering).
func (rq *request) render(status int, name string, v view) {
	t, ok := rq.h.pages[name]
	if !ok {
		rq.h.log.ErrorContext(rq.r.Context(), "dashboard: no template", "name", name)
		http.Error(rq.w, "internal error", http.StatusInternalServerError)
		return
	}
	if rq.ss != nil && !rq.ss.Session.PendingTOTP {
		v.User, v.Merch = rq.ss.User, rq.ss.Merchant
	}
	v.CSRF, v.Path = rq.csrf, rq.r.URL.Path
	var page bytes.Buffer
	if err := t.ExecuteTemplate(&page, "layout", v); err != nil {
		rq.h.log.ErrorContext(rq.r.Context(), "dashboard render", "page", name, "err", err)
		http.Error(rq.w, "internal error", http.StatusInternalServerError)
		return
	}
	rq.w.Header().Set("Content-Type", "text/html; charset=utf-8")
	rq.w.Header().Set("Content-Length", strconv.Itoa(page.Len()))
	rq.w.WriteHeader(status)
	rq.w.Write(page.Bytes())
}

// formError renders a form page again with the error's message and
// field problems, or fails for errors that are not the user's input.
func (rq *request) formError(name string, v view, err error) error {
	e := paylink.AsError(err)
	if e.Kind != paylink.KindInvalid && e.Kind != paylink.KindConflict {
		return err
	}
	v.Error, v.Fields = errorText(e), e.Fields
	rq.render(httpx.Status(e.Kind), name, v)
	return nil
}

// redirect answers a successful POST with 303 to a page (post, redirect,
// get), so reloading does not repeat the action.
func (rq *request) redirect(path string) error {
	http.Redirect(rq.w, rq.r, path, http.StatusSeeOther)
	return nil
}

// errorText is a refusal as the dashboard shows it: field problems named
// by the form's labels ("Total from: must be ..."), not the Service's
// field paths ("min_amount: must be ..."); a message written as a
// sentence for people (it does not start with a field path) as it is.
func errorText(e *paylink.Error) string {
	names := make([]string, 0, len(e.Fields))
	for name := range e.Fields {
		names = append(names, name)
	}
	slices.Sort(names)
	if len(names) == 0 || !strings.HasPrefix(e.Message, names[0]+": ") {
		return e.Message
	}
	parts := make([]string, len(names))
	for i, name := range names {
		parts[i] = fieldLabel(name) + ": " + e.Fields[name]
	}
	return "Please check the form. " + strings.Join(parts, "; ") + "."
}

// fieldLabel is the form label of a field path: the few whose label is
// not their name, else the name in words ("customer.first_name" is
// "Customer first name").
func fieldLabel(name string) string {
	switch name {
	case "min_amount":
		return "Total from"
	case "max_amount":
		return "Total to"
	case "q":
		return "Search"
	case "merchantReference":
		return "Your reference"
	case "password":
		return "New password"
	case "codes_password", "totp_password", "setup_password":
		return "Password"
	case "confirm":
		return "Confirm the new password"
	}
	var b strings.Builder
	for i, r := range name {
		switch {
		case r == '_' || r == '.':
			b.WriteByte(' ')
		case r >= 'A' && r <= 'Z' && i > 0:
			b.WriteByte(' ')
			b.WriteRune(r + 'a' - 'A')
		default:
			b.WriteRune(r)
		}
	}
	s := b.String()
	return strings.ToUpper(s[:1]) + s[1:]
}
