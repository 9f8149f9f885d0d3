package httpx

import (
	"net/http"
	"net/url"
	"slices"
)

// Routed reports whether mux serves method at u's path by a route other
// than its catch-alls (the patterns named, which answer what nothing
// else does).
func Routed(mux *http.ServeMux, method, host string, u *url.URL, catchAll ...string) bool {
	_, pattern := mux.Handler(&http.Request{Method: method, Host: host, URL: u})
	return pattern != "" && !slices.Contains(catchAll, pattern)
}

// Allowed lists the methods under which mux serves u's path (Routed),
// for a 405's Allow header: GET, then HEAD with it, then POST; nil when
// none does.
func Allowed(mux *http.ServeMux, host string, u *url.URL, catchAll ...string) []string {
	var allow []string
	if Routed(mux, http.MethodGet, host, u, catchAll...) {
		allow = append(allow, http.MethodGet, http.MethodHead)
	}
	if Routed(mux, http.MethodPost, host, u, catchAll...) {
		allow = append(allow, http.MethodPost)
	}
	return allow
}
