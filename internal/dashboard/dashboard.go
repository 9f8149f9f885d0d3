// Package dashboard serves the merchant dashboard at /dashboard/: pages
// for a merchant's staff, server-rendered with html/template from
// embedded templates, one embedded style sheet and one small embedded
// script. Every page works without JavaScript; the script (static/app.js)
// only reloads a page the browser restores from its back/forward cache,
// so that Back never shows a payment as it was before an action. The
// Content-Security-Policy allows scripts of the dashboard's own origin
// and nothing inline. Every state-changing request is a POST carrying the
// session's CSRF token and passing an Origin check; every page needs a
// signed-in user whose role allows it.
//
// Adding a page: one handler (a pageFunc registered in routes with the
// permission it needs) and one template file defining "title" and
// "content"; the shared layout adds the navigation, the sign-out form
// and the security headers. Forms embed {{template "csrf" .}}.
package dashboard

import (
	"context"
	"embed"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/httpx"
)

//go:embed templates/*.html static/*
var assets embed.FS

// maxForm bounds a form's request body.
const maxForm = 16 << 10

// Handler serves the dashboard.
type Handler struct {
	svc    *paylink.Service
	log    *slog.Logger
	idle   time.Duration
	secure bool   // cookies Secure: the base URL is https
	origin string // scheme://host of the base URL, for the Origin check
	pages  map[string]*template.Template
	css    []byte
	js     []byte
	icon   []byte
	mail   Mailer // nil: invites are only shown to the admin
	// cssVersion and jsVersion name the style's and the script's content
	// in their addresses (httpx.AssetVersion).
	cssVersion, jsVersion string
}

// Mailer sends one plain-text message (*mailer.SMTP is one); the
// dashboard mails invites with it when one is configured.
type Mailer interface {
	Send(ctx context.Context, to, subject, body string) error
}

// Option adjusts a Handler.
type Option func(*Handler)

// WithLogger logs errors to l (default: discarded).
func WithLogger(l *slog.Logger) Option { return func(h *Handler) { h.log = l } }

// WithIdleTimeout ends sessions unused for d (default 15 minutes).
func WithIdleTimeout(d time.Duration) Option {
	return func(h *Handler) {
		if d > 0 {
			h.idle = d
		}
	}
}

// WithMailer mails each invite to the invited address (default: none; the
// link is only shown to the admin to pass on).
func WithMailer(m Mailer) Option { return func(h *Handler) { h.mail = m } }

// New builds the dashboard for svc; the base URL of svc's config decides
// the Secure cookie flag and the accepted Origin.
func New(svc *paylink.Service, opts ...Option) (*Handler, error) {
	base := strings.TrimRight(svc.Config().BaseURL, "/")
	h := &Handler{svc: svc, log: slog.New(slog.DiscardHandler), idle: paylink.SessionIdleDefault,
		secure: strings.HasPrefix(base, "https://"), origin: originOf(base), pages: map[string]*template.Template{}}
	for _, o := range opts {
		o(h)
	}
	css, err := assets.ReadFile("static/app.css")
	if err != nil {
		return nil, fmt.Errorf("dashboard style: %w", err)
	}
	h.css = css
	if h.js, err = assets.ReadFile("static/app.js"); err != nil {
		return nil, fmt.Errorf("dashboard script: %w", err)
	}
	h.cssVersion, h.jsVersion = httpx.AssetVersion(h.css), httpx.AssetVersion(h.js)
	if h.icon, err = assets.ReadFile("static/favicon.svg"); err != nil {
		return nil, fmt.Errorf("dashboard icon: %w", err)
	}
	entries, err := assets.ReadDir("templates")
	if err != nil {
		return nil, fmt.Errorf("dashboard templates: %w", err)
	}
	funcs := h.templateFuncs()
	for _, e := range entries {
		name := strings.TrimSuffix(e.Name(), ".html")
		if name == "layout" {
			continue
		}
		t, err := template.New(name).Funcs(funcs).ParseFS(assets, "templates/layout.html", "templates/"+e.Name())
		if err != nil {
			return nil, fmt.Errorf("dashboard template %s: %w", name, err)
		}
		h.pages[name] = t
	}
	return h, nil
}

// originOf is the scheme://host[:port] of a URL.
func originOf(base string) string {
	scheme, rest, ok := strings.Cut(base, "://")
	if !ok {
		return ""
	}
	host, _, _ := strings.Cut(rest, "/")
	return scheme + "://" + host
}

// Register adds every dashboard route to mux. Each page names the
// permission it needs (paylink.Role.Can is the table).
func (h *Handler) Register(mux *http.ServeMux) {
	mux.Handle("GET /dashboard/static/app.css", asset("text/css; charset=utf-8", h.css, h.cssVersion))
	mux.Handle("GET /dashboard/static/app.js", asset("text/javascript; charset=utf-8", h.js, h.jsVersion))
	mux.Handle("GET /dashboard/static/favicon.svg", asset("image/svg+xml", h.icon, ""))
	// Browsers ask every site for /favicon.ico (a page's <link rel=icon>
	// aside); the answer is the dashboard's icon rather than a 404.
	mux.Handle("GET /favicon.ico", asset("image/svg+xml", h.icon, ""))
	mux.Handle("GET /dashboard/login", h.public(h.loginPage))
	mux.Handle("POST /dashboard/login", h.public(h.login))
	mux.Handle("GET /dashboard/invite/{token}", h.public(h.invitePage))
	mux.Handle("POST /dashboard/invite/{token}", h.public(h.acceptInvite))
	mux.Handle("GET /dashboard/login/totp", h.pending(h.totpPage))
	mux.Handle("POST /dashboard/login/totp", h.pending(h.totpVerify))

	mux.Handle("POST "+logoutPath, h.page(paylink.PermView, h.logout))
	mux.Handle("GET /dashboard/{$}", h.page(paylink.PermView, h.home))
	mux.Handle("GET /dashboard/account", h.page(paylink.PermView, h.account))
	mux.Handle("POST /dashboard/account/password", h.page(paylink.PermView, h.changePassword))
	mux.Handle("POST /dashboard/account/totp", h.page(paylink.PermView, h.beginTOTP))
	mux.Handle("POST /dashboard/account/totp/confirm", h.page(paylink.PermView, h.confirmTOTP))
	mux.Handle("POST /dashboard/account/totp/disable", h.page(paylink.PermView, h.disableTOTP))
	mux.Handle("POST /dashboard/account/totp/recovery-codes", h.page(paylink.PermView, h.regenerateRecoveryCodes))
	mux.Handle("GET /dashboard/team", h.page(paylink.PermTeam, h.team))
	mux.Handle("POST /dashboard/team/invite", h.page(paylink.PermTeam, h.invite))
	mux.Handle("POST /dashboard/team/invites/{id}/revoke", h.page(paylink.PermTeam, h.revokeInvite))
	mux.Handle("POST /dashboard/team/{id}/role", h.page(paylink.PermTeam, h.changeRole))
	mux.Handle("POST /dashboard/team/{id}/remove", h.page(paylink.PermTeam, h.removeUser))
	mux.Handle("POST /dashboard/team/security", h.page(paylink.PermTeam, h.setTOTPRequired))
	mux.Handle("GET /dashboard/audit", h.page(paylink.PermAudit, h.audit))
	mux.Handle("GET /dashboard/payments", h.page(paylink.PermView, h.payments))
	mux.Handle("GET /dashboard/payments/{ref}", h.page(paylink.PermView, h.payment))
	mux.Handle("POST /dashboard/payments/{ref}/capture", h.page(paylink.PermCapture, h.capture))
	mux.Handle("POST /dashboard/payments/{ref}/cancel", h.page(paylink.PermCancel, h.cancel))
	mux.Handle("POST /dashboard/payments/{ref}/refund", h.page(paylink.PermRefund, h.refund))
	mux.Handle("GET /dashboard/direct-debits", h.page(paylink.PermView, h.directDebits))
	mux.Handle("GET /dashboard/direct-debits/{ref}", h.page(paylink.PermView, h.directDebit))
	mux.Handle("POST /dashboard/direct-debits/{ref}/refund", h.page(paylink.PermRefund, h.refundDebit))
	mux.Handle("GET /dashboard/links", h.page(paylink.PermView, h.links))
	mux.Handle("POST /dashboard/links", h.page(paylink.PermLinks, h.createLink))
	mux.Handle("GET /dashboard/links/{id}", h.page(paylink.PermView, h.link))
	mux.Handle("POST /dashboard/links/{id}/cancel", h.page(paylink.PermLinks, h.cancelLink))
	mux.Handle("GET /dashboard/developers", h.page(paylink.PermAPIKeys, h.developers))
	mux.Handle("POST /dashboard/developers/keys/roll", h.page(paylink.PermAPIKeys, h.rollKey))
	mux.Handle("POST /dashboard/developers/webhook-secret", h.page(paylink.PermWebhooks, h.rotateSecret))
	mux.Handle("POST /dashboard/developers/webhooks/{id}/resend", h.page(paylink.PermWebhooks, h.resendWebhook))
	mux.Handle("GET /dashboard/balances", h.page(paylink.PermView, h.balances))
	mux.Handle("GET /dashboard/balances/settlement/{day}", h.page(paylink.PermView, h.settlementCSV))
	mux.Handle("/dashboard/", h.page(paylink.PermView, h.notFound(mux)))
}

// asset serves an embedded file of version (httpx.AssetVersion; "" for
// one pages name unversioned); it is public, and cached by the version
// its address names (httpx.AssetCacheControl).
func asset(contentType string, body []byte, version string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.Header().Set("Cache-Control", httpx.AssetCacheControl(r.URL.Query().Get("v"), version))
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Write(body)
	})
}

// securityHeaders are sent with every page: only the dashboard's own
// script files may run (static/app.js; no inline script, no other
// site's), nothing may frame the page, nothing is cached, and no other
// site sees a referrer (invite links carry their token). same-origin rather than
// no-referrer: with no-referrer browsers send "Origin: null" on form
// posts, which the Origin check must refuse.
func securityHeaders(w http.ResponseWriter) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; form-action 'self'; "+
		"frame-ancestors 'none'; base-uri 'none'")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Referrer-Policy", "same-origin")
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Content-Type-Options", "nosniff")
}

// templateFuncs are the templates' helpers.
func (h *Handler) templateFuncs() template.FuncMap {
	css, js := "?v="+h.cssVersion, "?v="+h.jsVersion
	return template.FuncMap{
		// cssVersion and jsVersion name the build's style and script in
		// their addresses (httpx.AssetVersion).
		"cssVersion": func() string { return css },
		"jsVersion":  func() string { return js },
		"money":      func(minor int64, currency string) string { return currency + " " + paylink.FormatIn(minor, currency) },
		"when":       func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") },
		// amount is minor units as a form's decimal value, without the code.
		"amount": paylink.FormatIn,
		"micros": paylink.FormatMicros,
		"roles":  paylink.Roles,
		"origin": paylink.WebhookOrigin,
		// label names a field as its form labels it (fieldLabel).
		"label": fieldLabel,
	}
}
