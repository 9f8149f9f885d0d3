// Package checkout serves the pages of a payment link: the hosted payment
// page (url, standard mode: card, Apple Pay, Google Pay and Zip, with 3-D
// Secure) and the virtual terminal (virtual_terminal_url: card entry by
// staff). Pages are server-rendered with html/template from embedded
// templates and assets; they load nothing from elsewhere, carry a strict
// nonce-based Content-Security-Policy, and protect every form with a CSRF
// token. The card form works as a plain HTML form; a small script adds
// live validation, brand detection and the surcharge update.
package checkout

import (
	"crypto/rand"
	"embed"
	"encoding/base64"
	"html/template"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/httpx"
)

//go:embed templates/*.html static/*
var assets embed.FS

// maxForm bounds a page's request body.
const maxForm = 16 << 10

// Handler serves the payment link pages.
type Handler struct {
	svc     *paylink.Service
	log     *slog.Logger
	random  io.Reader
	tmpl    *template.Template
	css     template.CSS
	wallets map[string]Wallet // by path name: applepay, googlepay
	zip     PayLater
	pages   *pageCache // rendered link pages (pagecache.go)
	// script is static/app.js, and scriptVersion the version pages name
	// in its address (httpx.AssetVersion).
	script        []byte
	scriptVersion string
}

// Options adjust a Handler. Zero values select the sandbox simulations and
// crypto/rand.
type Options struct {
	Random  io.Reader
	Wallets []Wallet
	Zip     PayLater
}

// New builds the page handler.
func New(svc *paylink.Service, log *slog.Logger, opts Options) (*Handler, error) {
	js, err := assets.ReadFile("static/app.js")
	if err != nil {
		return nil, err
	}
	version, rules := httpx.AssetVersion(js), brandRules()
	src := scriptPath + "?v=" + version
	tmpl, err := template.New("pages").Funcs(template.FuncMap{"errFor": errFor, "maxlen": fieldLimit, "autocomplete": autocomplete,
		"brandRules": func() string { return rules }, "scriptSrc": func() string { return src }}).ParseFS(assets, "templates/*.html")
	if err != nil {
		return nil, err
	}
	css, err := assets.ReadFile("static/app.css")
	if err != nil {
		return nil, err
	}
	if opts.Random == nil {
		opts.Random = rand.Reader
	}
	if opts.Wallets == nil {
		opts.Wallets = []Wallet{NewSandboxApplePay(), NewSandboxGooglePay()}
	}
	if opts.Zip == nil {
		opts.Zip = SandboxZip{}
	}
	h := &Handler{svc: svc, log: log, random: opts.Random, tmpl: tmpl, css: template.CSS(css),
		wallets: map[string]Wallet{}, zip: opts.Zip, script: js, scriptVersion: version}
	for _, w := range opts.Wallets {
		h.wallets[w.Path()] = w
	}
	if h.pages, err = newPageCache(h.randomString); err != nil {
		return nil, err
	}
	return h, nil
}

// Register adds every page route to mux.
func (h *Handler) Register(mux *http.ServeMux) {
	mux.Handle("GET "+scriptPath, http.HandlerFunc(h.serveScript))
	for _, prefix := range []string{"/pay/{token}", "/vt/{token}"} {
		mux.Handle("GET "+prefix, h.page(h.show))
		mux.Handle("POST "+prefix, h.page(h.payCard))
		mux.Handle("POST "+prefix+"/surcharge", h.page(h.surcharge))
	}
	mux.Handle("POST /pay/{token}/wallet/{method}", h.page(h.walletSheet))
	mux.Handle("POST /pay/{token}/wallet/{method}/confirm", h.page(h.walletPay))
	mux.Handle("POST /pay/{token}/zip", h.page(h.zipPage))
	mux.Handle("POST /pay/{token}/zip/confirm", h.page(h.zipPay))
	mux.Handle("GET /pay/{token}/3ds", h.page(h.threeDSReturn))
	mux.Handle("GET "+paylink.LinkReturnPath+"{id}", http.HandlerFunc(h.linkReturn))
}

// request is one page request with its link and security tokens.
type request struct {
	w     http.ResponseWriter
	r     *http.Request
	ls    *paylink.LinkSession
	base  string // the page's own path, /pay/{token} or /vt/{token}
	nonce string // CSP nonce of this response
	csrf  string // CSRF token for this browser and link
}

type pageFunc func(rq *request) error

// page opens the link of the URL's token, sets the security headers and
// a fresh CSP nonce, and renders errors as pages.
func (h *Handler) page(fn pageFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		nonce, err := h.randomString(18)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		securityHeaders(w, nonce)
		r.Body = http.MaxBytesReader(w, r.Body, maxForm)
		if r.Method == http.MethodPost {
			if err := httpx.ReadForm(r); err != nil { // the surcharge's JSON body is left unread
				h.renderError(w, r, nonce, pagePath(r), err)
				return
			}
		}
		r = r.WithContext(paylink.WithActor(r.Context(), pageActor(r)))
		ls, err := h.svc.OpenLink(r.Context(), r.PathValue("token"))
		if err != nil {
			h.renderError(w, r, nonce, "", err)
			return
		}
		rq := &request{w: w, r: r, ls: ls, base: basePath(ls, r.PathValue("token")), nonce: nonce}
		if !strings.HasPrefix(r.URL.Path, rq.base) { // the page token under /vt/, or the terminal's under /pay/
			h.renderError(w, r, nonce, "", errNoPage)
			return
		}
		if rq.csrf, err = h.csrfToken(w, r, ls); err != nil {
			h.fail(w, r, err)
			return
		}
		if err := fn(rq); err != nil {
			h.renderError(w, r, nonce, rq.base, err)
		}
	})
}

// pagePath is the address of the link page r was posted to, from its URL
// ("" when it names none): an error page's way back, before the link is
// opened (a form too large to read).
func pagePath(r *http.Request) string {
	tok := r.PathValue("token")
	for _, prefix := range []string{"/pay/", "/vt/"} {
		if tok != "" && strings.HasPrefix(r.URL.Path, prefix+tok) {
			return prefix + tok
		}
	}
	return ""
}

// pageActor is who acts on a hosted page: the customer (or, on the
// virtual terminal, whoever holds its link), known only by address.
func pageActor(r *http.Request) paylink.Actor {
	return paylink.Actor{Kind: paylink.ActorCustomer, IP: clientIP(r), RequestID: paylink.RequestIDFrom(r.Context())}
}

// basePath is the page's own path.
func basePath(ls *paylink.LinkSession, token string) string {
	if ls.Mode == paylink.ChannelVT {
		return "/vt/" + token
	}
	return "/pay/" + token
}

// securityHeaders locks the page down: scripts and styles only with this
// response's nonce, no framing, no referrer, forms only to this origin.
func securityHeaders(w http.ResponseWriter, nonce string) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'nonce-"+nonce+"'; style-src 'nonce-"+nonce+
		"'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	h.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=(), payment=(self)")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
}

// randomString returns n random bytes, base64url encoded.
func (h *Handler) randomString(n int) (string, error) {
	b := make([]byte, n)
	if _, err := io.ReadFull(h.random, b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// fail answers an unexpected error with a generic page; detail is logged.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	h.log.ErrorContext(r.Context(), "checkout page error", "route", r.Pattern, "err", err)
	http.Error(w, "Something went wrong on our side. No money was taken. Please try again.", http.StatusInternalServerError)
}

// scriptPath is where the pages' script is served; pages name its
// version (httpx.AssetVersion) in the query, so that a page always runs
// the script of the build that rendered it.
const scriptPath = "/checkout/static/app.js"

// serveScript serves the page's JavaScript (loaded with the page's nonce),
// cached by the version its address names (httpx.AssetCacheControl).
func (h *Handler) serveScript(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	w.Header().Set("Cache-Control", httpx.AssetCacheControl(r.URL.Query().Get("v"), h.scriptVersion))
	w.Write(h.script)
}

var errBadCSRF = paylink.Errorf(paylink.KindForbidden, paylink.CodeCSRFFailed,
	"This form has expired or was not sent from the payment page. Reload the page and try again.")

// errNoCookie answers a form posted without the page's cookie, which a
// browser refusing cookies never sends: reloading alone cannot help it.
var errNoCookie = paylink.Errorf(paylink.KindForbidden, paylink.CodeCSRFFailed,
	"Your browser did not send this payment page's cookie, which the form needs. Allow cookies for this site, "+
		"open the payment page again and try again. No money was taken.")

var errUnknownMethod = paylink.Errorf(paylink.KindNotFound, paylink.CodeNotFound, "That payment method is not available.")
