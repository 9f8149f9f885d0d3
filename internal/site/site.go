// Package site composes paylink's one HTTP surface: a single mux on which
// the API (internal/api), the payment pages (internal/checkout) and the
// 3-D Secure challenge page (internal/acs) each register their own
// routes, wrapped once in the shared middleware (internal/httpx). It is
// the one composition cmd/paylink serves and internal/apitest tests, so
// tests run what production runs.
package site

import (
	"fmt"
	"log/slog"
	"net/http"

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
	if err := checkout.Mount(mux, svc, o.Logger); err != nil {
		return nil, fmt.Errorf("payment pages: %w", err)
	}
	dash, err := dashboard.New(svc, append([]dashboard.Option{dashboard.WithLogger(o.Logger)}, o.Dashboard...)...)
	if err != nil {
		return nil, fmt.Errorf("dashboard: %w", err)
	}
	dash.Register(mux) // the merchant dashboard at /dashboard/, and /favicon.ico
	mux.HandleFunc("/", a.NotFound)
	var m *httpx.Metrics
	if o.Registry != nil {
		m = httpx.NewMetrics(o.Registry)
	}
	return httpx.Wrap(mux, httpx.Options{Logger: o.Logger, Metrics: m}), nil
}
