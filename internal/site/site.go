// Package site composes paylink's one HTTP surface: a single mux on which
// the API (internal/api), the payment pages (internal/checkout), the 3-D
// Secure challenge page (internal/acs) and the merchant dashboard
// (internal/dashboard) each register their own routes, wrapped once in the shared middleware (internal/httpx). It is
// the one composition cmd/paylink serves and internal/apitest tests, so
// tests run what production runs.
package site

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/acs"
	"github.com/paylink/paylink/internal/api"
	"github.com/paylink/paylink/internal/checkout"
	"github.com/paylink/paylink/internal/dashboard"
	"github.com/paylink/paylink/internal/httpx"
)

// Options adjust the site.
type Options struct {
	// Logger is used by every part; wrap its handler in httpx.LogHandler
	// so that lines logged during a request carry its id.
	Logger *slog.Logger
	// Registry, when set, receives the HTTP request series.
	Registry prometheus.Registerer
	// API options (rate limits).
	API []api.Option
	// Dashboard options (session idle timeout); the logger is Logger.
	Dashboard []dashboard.Option
}

// Handler builds the site's handler around svc.
func Handler(svc *paylink.Service, o Options) (http.Handler, error) {
	a, err := api.New(svc, o.Logger, o.API...)
	if err != nil {
		return nil, fmt.Errorf("api: %w", err)
	}
	mux := http.NewServeMux()
	a.Register(mux)                  // /v5, /healthz, /readyz
	acs.Register(mux, svc, o.Logger) // the sandbox 3-D Secure challenge page
	pages, err := checkout.New(svc, o.Logger, checkout.Options{})
	if err != nil {
		return nil, fmt.Errorf("payment pages: %w", err)
	}
	pages.Register(mux)
	dash, err := dashboard.New(svc, append([]dashboard.Option{dashboard.WithLogger(o.Logger)}, o.Dashboard...)...)
	if err != nil {
		return nil, fmt.Errorf("dashboard: %w", err)
	}
	dash.Register(mux) // the merchant dashboard at /dashboard/, and /favicon.ico
	mux.HandleFunc("/", fallback(mux, a, pages))
	var m *httpx.Metrics
	if o.Registry != nil {
		m = httpx.NewMetrics(o.Registry)
	}
	return httpx.Wrap(cleanAPIPath(mux, a), httpx.Options{Logger: o.Logger, Metrics: m}), nil
}

// cleanAPIPath serves an API path whose slashes a base URL's join
// doubled (//v5/transaction_token, from a base URL that ends in "/"
// joined to "/v5/..."; /v5//purchase, from one ending in "/v5/") as the
// path with those slashes made one, where the mux would answer 307 with
// an empty body: PHP's curl and Java's HttpURLConnection do not follow a
// 307 on a POST, and .NET drops Authorization on a redirect. An API path
// with any other empty segment (/v5/purchase//refund: a reference left
// out), or a "." or ".." segment, is refused with the API's JSON 400
// rather than cleaned or redirected: which payment or endpoint it names
// is not the API's to guess (cleaned, /v5/purchase//refund would look up
// a payment called "refund", and /v5/purchase/a/../b would look up b).
// Other paths (the pages and the dashboard, which browsers open) keep
// the mux's redirect.
func cleanAPIPath(mux *http.ServeMux, a *api.Server) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The escaped path, as the mux reads it: a reference's own
		// "%2F%2F" is no doubled slash.
		sent := r.URL.EscapedPath()
		p := joinSlashes(sent)
		if !underAPI(p) || p == sent && !dotSegments(p) && !strings.Contains(p, "//") {
			mux.ServeHTTP(w, r)
			return
		}
		path, err := url.PathUnescape(p)
		if err != nil || dotSegments(p) || strings.Contains(p, "//") {
			a.NotCanonical(w, r)
			return
		}
		r2 := r.Clone(r.Context())
		u := *r.URL
		u.Path, u.RawPath = path, p
		r2.URL = &u
		mux.ServeHTTP(w, r2)
		r.Pattern = r2.Pattern // the route served, for the access log and metrics
	})
}

// underAPI reports whether path is the API's: /v5 and below.
func underAPI(path string) bool {
	return path == "/v5" || strings.HasPrefix(path, "/v5/")
}

// joinSlashes is path with the slashes a base URL's join doubles made
// one: those it starts with, and those right after a leading /v5.
func joinSlashes(path string) string {
	if !strings.Contains(path, "//") {
		return path
	}
	p := "/" + strings.TrimLeft(path, "/")
	if rest, ok := strings.CutPrefix(p, "/v5/"); ok {
		return "/v5/" + strings.TrimLeft(rest, "/")
	}
	return p
}

// dotSegments reports whether path has a "." or ".." segment.
func dotSegments(path string) bool {
	if !strings.Contains(path, "/.") {
		return false
	}
	for _, seg := range strings.Split(path, "/") {
		if seg == "." || seg == ".." {
			return true
		}
	}
	return false
}

// fallback answers a request no route matched. A path with a trailing
// slash that a route serves without it (/pay/{token}/, /v5/purchase/)
// is served as that route, for the clients and mail programs that add
// one; a path routes serve under other methods is 405 with Allow (a
// customer's page address the pages' HTML one); a customer's page address
// that is no page is the pages' HTML 404; anything else is the API's
// JSON 404.
func fallback(mux *http.ServeMux, a *api.Server, pages *checkout.Handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		u := withoutSlash(r.URL)
		if u != nil && httpx.Routed(mux, r.Method, r.Host, u, "/") {
			r2 := r.Clone(r.Context())
			r2.URL = u
			mux.ServeHTTP(w, r2)
			r.Pattern = r2.Pattern // the route served, for the access log and metrics
			return
		}
		if allow := allowedMethods(mux, r.Host, r.URL, u); len(allow) > 0 {
			if customerPage(r.URL.Path) {
				pages.MethodNotAllowed(w, r, strings.Join(allow, ", "))
			} else {
				a.MethodNotAllowed(w, r, strings.Join(allow, ", "))
			}
			return
		}
		if customerPage(r.URL.Path) {
			pages.NotFound(w, r)
			return
		}
		a.NotFound(w, r)
	}
}

// allowedMethods is the methods routes serve u under or, when none does
// and the path has a trailing slash to drop, those they serve the
// slash-less path under: POST /v5/balance/ is told what /v5/balance
// allows, as the slash would be dropped for a method it allows.
func allowedMethods(mux *http.ServeMux, host string, u, slashless *url.URL) []string {
	allow := httpx.Allowed(mux, host, u, "/")
	if len(allow) == 0 && slashless != nil {
		allow = httpx.Allowed(mux, host, slashless, "/")
	}
	return allow
}

// customerPage reports whether path is under the addresses customers
// open in a browser: the payment pages, their 3-D Secure return and the
// sandbox issuer's challenge page.
func customerPage(path string) bool {
	for _, p := range []string{"/pay", "/vt"} {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return strings.HasPrefix(path, "/checkout/") || strings.HasPrefix(path, "/acs/")
}

// withoutSlash is u without one trailing slash, nil when its path has
// none to drop.
func withoutSlash(u *url.URL) *url.URL {
	if len(u.Path) < 2 || !strings.HasSuffix(u.Path, "/") {
		return nil
	}
	v := *u
	v.Path, v.RawPath = strings.TrimSuffix(u.Path, "/"), strings.TrimSuffix(u.RawPath, "/")
	return &v
}
