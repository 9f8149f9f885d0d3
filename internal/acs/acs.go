// Package acs serves the sandbox card issuer's 3-D Secure challenge page
// (the issuer's Access Control Server). The one-time capability in the
// page's path is the only credential: the page is a plain HTML form that
// works without JavaScript, loads nothing external, is served with a
// strict Content-Security-Policy, refuses cross-site posts and can be
// answered once.
package acs

import (
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"errors"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/httpx"
)

//go:embed page.html style.css
var files embed.FS

// maxFormBytes bounds the challenge form body.
const maxFormBytes = 1 << 10

// page renders the challenge page and its error states.
type page struct {
	svc       *paylink.Service
	log       *slog.Logger
	tmpl      *template.Template
	style     template.CSS
	styleHash string
}

// view is the template's data.
type view struct {
	Title     string
	Style     template.CSS
	Challenge *paylink.Challenge
	Action    string
	Expires   string
	Message   string
}

// Register serves the challenge page at GET and POST
// /acs/challenge/{capability} on the site's mux.
func Register(mux *http.ServeMux, svc *paylink.Service, log *slog.Logger) {
	p := newPage(svc, log)
	pattern := paylink.ChallengePath + "{capability}"
	mux.HandleFunc("GET "+pattern, p.show)
	mux.HandleFunc("POST "+pattern, p.answer)
}

func newPage(svc *paylink.Service, log *slog.Logger) *page {
	css, err := files.ReadFile("style.css")
	if err != nil {
		panic(err) // embedded at build time: cannot fail
	}
	sum := sha256.Sum256(css)
	return &page{
		svc: svc, log: log,
		tmpl:      template.Must(template.ParseFS(files, "page.html")),
		style:     template.CSS(css),
		styleHash: base64.StdEncoding.EncodeToString(sum[:]),
	}
}

// show: GET the challenge page.
func (p *page) show(w http.ResponseWriter, r *http.Request) {
	capability := r.PathValue("capability")
	c, err := p.svc.Challenge(r.Context(), capability)
	if err != nil {
		p.fail(w, r, err)
		return
	}
	p.render(w, r, http.StatusOK, view{Title: "Confirm your payment", Challenge: c,
		Action: paylink.ChallengePath + url.PathEscape(capability), Expires: c.ExpiresAt.Format("15:04")}, c.ReturnOrigin)
}

// answer: POST outcome=success|failure, then 303 to the merchant.
func (p *page) answer(w http.ResponseWriter, r *http.Request) {
	if !sameOrigin(r) {
		p.render(w, r, http.StatusForbidden, view{Title: "Request refused",
			Message: "This form can only be submitted from its own page."}, "")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := httpx.ReadForm(r); err != nil {
		e := paylink.AsError(err)
		p.render(w, r, httpx.Status(e.Kind), view{Title: "Request refused", Message: e.Message}, "")
		return
	}
	outcome := r.PostForm.Get("outcome")
	if outcome != "success" && outcome != "failure" {
		p.render(w, r, http.StatusBadRequest, view{Title: "Request refused",
			Message: "Choose whether to authenticate the payment or fail the authentication."}, "")
		return
	}
	back, err := p.svc.CompleteChallenge(r.Context(), r.PathValue("capability"), outcome == "success")
	if err != nil {
		p.fail(w, r, err)
		return
	}
	http.Redirect(w, r, back, http.StatusSeeOther)
}

// sameOrigin refuses cross-site form posts. Browsers send Sec-Fetch-Site
// with every form post, and it cannot be set by a page; without it (older
// browsers) Origin is checked. The page's no-referrer policy makes
// browsers send "Origin: null" even from the page itself.
func sameOrigin(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" {
		return site == "same-origin" || site == "none"
	}
	origin := r.Header.Get("Origin")
	if origin == "" || origin == "null" {
		return true
	}
	u, err := url.Parse(origin)
	return err == nil && u.Host == r.Host
}

// plainOrigin reports whether s is a non-empty http(s) origin made only
// of characters that cannot break out of a CSP source expression.
func plainOrigin(s string) bool {
	rest, ok := strings.CutPrefix(s, "https://")
	if !ok {
		rest, ok = strings.CutPrefix(s, "http://")
	}
	if !ok || rest == "" {
		return false
	}
	return !strings.ContainsFunc(rest, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == ':')
	})
}

// fail renders a service error: unknown page 404, used or expired 410,
// database unreachable 503 (the customer may simply try again).
func (p *page) fail(w http.ResponseWriter, r *http.Request, err error) {
	e := paylink.AsError(err)
	switch e.Kind {
	case paylink.KindNotFound, paylink.KindConflict, paylink.KindUnavailable, paylink.KindInternal:
	default: // answered 500: a refusal this page has no answer for is a bug, logged as one
		e = paylink.Internal("challenge page", err)
	}
	httpx.LogFailure(p.log, r, e)
	switch e.Kind {
	case paylink.KindNotFound:
		p.render(w, r, http.StatusNotFound, view{Title: "Page not found", Message: "This authentication page does not exist."}, "")
	case paylink.KindConflict:
		p.render(w, r, http.StatusGone, view{Title: "Page no longer available",
			Message: e.Message + ". Return to the merchant's site to continue."}, "")
	case paylink.KindUnavailable:
		httpx.SetRetryAfter(w, err)
		p.render(w, r, http.StatusServiceUnavailable, view{Title: "Temporarily unavailable",
			Message: "The authentication service is briefly unavailable. Please try again in a moment."}, "")
	default:
		p.render(w, r, http.StatusInternalServerError, view{Title: "Something went wrong",
			Message: "The authentication could not be processed. Please try again."}, "")
	}
}

// render writes the page with its security headers. returnOrigin, when
// set, is allowed as a form target because the form's 303 leads there.
func (p *page) render(w http.ResponseWriter, r *http.Request, status int, v view, returnOrigin string) {
	v.Style = p.style
	formAction := "'self'"
	if plainOrigin(returnOrigin) {
		formAction += " " + returnOrigin
	}
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'sha256-"+p.styleHash+"'; form-action "+formAction+
		"; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	if err := p.tmpl.Execute(w, v); err != nil && !errors.Is(err, http.ErrHandlerTimeout) {
		p.log.ErrorContext(r.Context(), "render challenge page", "err", err)
	}
}
