// Package httpx is the middleware every paylink HTTP response passes
// through, applied once around the site's one mux (internal/site): a
// request id, panic recovery, an access log line (with what handlers
// note on it: notes.go), a body size cap, the
// security headers every response shares, and the request metrics. It
// knows nothing of the packages that register routes, so none of them is
// the router for the others.
package httpx

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/paylink/paylink"
)

// RequestIDHeader carries the request id in both directions.
const RequestIDHeader = "X-Request-Id"

// MaxBodyBytes caps every request body of the site. The API (64 KiB) and
// the pages (16 KiB) keep their own smaller limits; this is the outer
// bound for any route that forgets one.
const MaxBodyBytes = 1 << 20

// Options configure the middleware.
type Options struct {
	Logger  *slog.Logger
	Metrics *Metrics // nil records nothing
}

// Wrap applies the shared middleware around next (the site's mux).
func Wrap(next http.Handler, o Options) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := RequestID(r.Header.Get(RequestIDHeader))
		ctx, notes := withNotes(paylink.WithRequestID(r.Context(), id), o.Logger)
		r = r.WithContext(ctx)
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		sharedHeaders(rec.Header(), id)
		r.Body = http.MaxBytesReader(rec, r.Body, MaxBodyBytes)
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v) // the handler asked net/http to drop the connection: no answer
				}
				o.Logger.ErrorContext(r.Context(), "panic", "method", r.Method, "route", Route(r), "panic", v)
				if !rec.wrote {
					writeInternalError(rec, id)
				}
			}
			route := answeredRoute(r, rec.status)
			o.Logger.InfoContext(r.Context(), "request", notes.appendTo([]any{"method", r.Method, "route", route, "status", rec.status,
				"duration_ms", time.Since(start).Milliseconds()})...)
			o.Metrics.observe(route, rec.status, time.Since(start))
		}()
		if !addressIsText(r) {
			writeNotText(rec, r)
			return
		}
		next.ServeHTTP(rec, r)
	})
}

// addressIsText reports whether the request's path and query decode to
// text (isText). Anything else is refused before routing, so that no
// route looks up, stores or shows such bytes: PostgreSQL refuses them in
// a text parameter (an error, not an answer), and SQLite would keep them.
func addressIsText(r *http.Request) bool {
	if !isText(r.URL.Path) {
		return false
	}
	return r.URL.RawQuery == "" || valuesAreText(r.URL.Query())
}

// isText reports whether s is UTF-8 without NUL, the one character
// PostgreSQL cannot store in text.
func isText(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}

// ReadForm parses a posted form (URL-encoded or multipart; the caller has
// bounded the body) and checks that every name and value is text (UTF-8
// without NUL). The payment pages, the dashboard and the 3-D Secure
// challenge call it before reading any field, so that a form that cannot
// be read is refused instead of read as empty. Its errors are the
// Service's kinds: too large, or invalid.
func ReadForm(r *http.Request) error {
	var err error
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "multipart/form-data" {
		err = r.ParseMultipartForm(maxFormMemory)
	} else {
		err = r.ParseForm()
	}
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return paylink.Errorf(paylink.KindTooLarge, paylink.CodeBodyTooLarge, "The form is too large.")
	case err != nil:
		return paylink.Errorf(paylink.KindInvalid, paylink.CodeInvalidRequest, "The form could not be read.")
	case !valuesAreText(r.Form):
		return paylink.Errorf(paylink.KindInvalid, paylink.CodeInvalidRequest, "The form must be UTF-8 text without NUL characters.")
	}
	return nil
}

// maxFormMemory bounds what a multipart form keeps in memory; the pages'
// own body limits are smaller.
const maxFormMemory = 32 << 10

// valuesAreText reports whether every name and value of vs is text.
func valuesAreText(vs url.Values) bool {
	for k, v := range vs {
		if !isText(k) {
			return false
		}
		for _, s := range v {
			if !isText(s) {
				return false
			}
		}
	}
	return true
}

// notText is the message of the answer to an address that is not text.
const notText = "the request's path and query must be UTF-8 text without NUL characters"

// writeNotText answers 400 to an address that is not text: with the
// API's error body under /v5/, a small page elsewhere. No page of
// paylink's sends such an address, but a link to one can carry another
// site's query (a campaign tag in Latin-1), so a browser is told what to
// do rather than shown bare text.
func writeNotText(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/v5/") {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`{"response_code":"invalid_request","response_message":"` + notText +
			`","error_code":"invalid_request","error_message":"` + notText + `"}` + "\n"))
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'")
	w.WriteHeader(http.StatusBadRequest)
	w.Write([]byte(notTextPage))
}

// notTextPage is the page writeNotText answers outside the API.
const notTextPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>This address cannot be opened</title></head>
<body><main><h1>This address cannot be opened</h1>
<p>Part of it is not UTF-8 text (` + notText + `). If you followed a link,
remove everything from the "?" on in the address bar and try again, or ask
whoever sent the link for a new one.</p></main></body></html>
`

// writeInternalError answers a panic with the API's error body shape; a
// panic is a bug, and the body says nothing about it. Headers the handler
// set before it panicked (a cookie, a cache lifetime) are dropped.
func writeInternalError(w http.ResponseWriter, id string) {
	h := w.Header()
	clear(h)
	sharedHeaders(h, id)
	h.Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusInternalServerError)
	w.Write([]byte(`{"response_code":"internal_error","response_message":"internal error","error_code":"internal_error","error_message":"internal error"}` + "\n"))
}

// sharedHeaders sets the headers of every response: its request id, no
// sniffing, no referrer, and no caching unless a handler allows it.
func sharedHeaders(h http.Header, id string) {
	h.Set(RequestIDHeader, id)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
}

// Route is the matched route pattern, never the raw path, so that
// references and page tokens in paths stay out of logs and metric labels.
// The mux sets it on the request it was given, which is the one the
// middleware holds.
func Route(r *http.Request) string {
	if r.Pattern != "" {
		return r.Pattern
	}
	return "unmatched"
}

// answeredRoute is the route a request's access line and metrics name,
// given the status it was answered with: Route, or "redirect" for the
// mux's own redirects (a path with "//", "." or ".." to its clean form, a
// subtree's path to the same with a slash), for which the mux sets the
// pattern of a route that did not run. They are the only 301, 307 and
// 308 answers: paylink's handlers redirect with 303 See Other.
func answeredRoute(r *http.Request, status int) string {
	switch status {
	case http.StatusMovedPermanently, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return "redirect"
	}
	return Route(r)
}

// maxRequestID bounds an inbound request id that is kept: room for a
// UUID, a ULID or a trace id, and shorter than paylink's company,
// transaction and card tokens (paylink.TokenLength), so that a token sent
// as a request id is never logged.
const maxRequestID = 64

// RequestID keeps an inbound id of sane form (1 to 64 characters of
// [A-Za-z0-9._-]), so that a caller can follow its own id through our
// logs, and otherwise returns a new random one: anything else could
// forge log lines or carry personal data.
func RequestID(inbound string) string {
	if saneID(inbound) {
		return inbound
	}
	b := make([]byte, 16)
	rand.Read(b) // never fails (crypto/rand since Go 1.24)
	return hex.EncodeToString(b)
}

// saneID reports whether a client's request id may be used (and logged):
// 1 to maxRequestID characters of [A-Za-z0-9._-], without a card number
// (its groups joined by '.' or '_' as much as by '-', or its digits run
// into letters: "order4111111111111111") or the start of one of
// paylink's prefixed secrets.
func saneID(s string) bool {
	if s == "" || len(s) > maxRequestID || paylink.LooksLikeSecret(s) ||
		paylink.ContainsCardNumberWithin(strings.Map(dashForSeparator, s)) {
		return false
	}
	for _, c := range []byte(s) {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
		if !ok {
			return false
		}
	}
	return true
}

// dashForSeparator maps the other separators a request id may hold to
// the '-' that ContainsCardNumber reads between a card number's groups.
func dashForSeparator(c rune) rune {
	if c == '.' || c == '_' {
		return '-'
	}
	return c
}

// statusRecorder remembers the status code and whether a response began.
type statusRecorder struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (r *statusRecorder) WriteHeader(code int) {
	if !r.wrote {
		r.status, r.wrote = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	r.wrote = true
	return r.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// LogHandler adds the request id in the context to every record, so that
// every line logged with a request's context (slog's ...Context methods)
// names its request.
type LogHandler struct{ slog.Handler }

// Handle adds request_id when the context has one.
func (h LogHandler) Handle(ctx context.Context, rec slog.Record) error {
	if id := paylink.RequestIDFrom(ctx); id != "" {
		rec.AddAttrs(slog.String("request_id", id))
	}
	return h.Handler.Handle(ctx, rec)
}

// WithAttrs keeps the wrapper around the derived handler.
func (h LogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return LogHandler{h.Handler.WithAttrs(attrs)}
}

// WithGroup keeps the wrapper around the derived handler.
func (h LogHandler) WithGroup(name string) slog.Handler {
	return LogHandler{h.Handler.WithGroup(name)}
}

// StatusClientClosedRequest is the status logged and counted for a
// request whose client went away before its answer (nginx's 499): no
// client receives it, and it is not a server error.
const StatusClientClosedRequest = 499

// ClientGone reports whether err is r's client hanging up (its context
// cancelled) rather than a failure of the server: the API, the payment
// pages and the dashboard answer it with StatusClientClosedRequest and
// log no error. An outage met by a request whose client has gone (a
// SQLite write that waited out the busy timeout while the client hung
// up) is the client's too: nobody reads the 503, and the store has
// already counted the outage (paylink_database_unavailable_total).
func ClientGone(r *http.Request, err error) bool {
	return r.Context().Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, paylink.ErrUnavailable))
}

// ClientLeft reports whether err, from writing r's answer, is the client
// having left (a download cancelled, a page closed): no error of the
// server's. ClientGone is the same rule for an error met before writing.
func ClientLeft(r *http.Request, err error) bool {
	return r.Context().Err() != nil || errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET)
}

// RetryAfterSeconds is the Retry-After of every answer that a retry after
// a short wait passes: every 503 (a database restart or fail-over, an
// acquirer out of reach, takes seconds) and the 409 of an Idempotency-Key
// whose request is still being answered.
const RetryAfterSeconds = 1

// SetRetryAfter sets Retry-After on the answer to err when a retry after
// RetryAfterSeconds may pass: err is of KindUnavailable (a 503, whatever
// its code) or paylink.ErrKeyInProgress. The API, the payment pages, the
// 3-D Secure challenge pages and the dashboard all ask it.
func SetRetryAfter(w http.ResponseWriter, err error) {
	if paylink.AsError(err).Kind == paylink.KindUnavailable || errors.Is(err, paylink.ErrKeyInProgress) {
		SetUnavailable(w)
	}
}

// LogFailure logs a request's failure by its kind, the one rule of the
// API, the payment pages, the 3-D Secure challenge pages and the
// dashboard: a bug (KindInternal, a 500) at ERROR as "internal error", an
// outage (KindUnavailable, a 503, already signalled by the readiness
// probe) at WARN as "unavailable", so that alerting on ERROR sees bugs
// only; any other kind is the client's and is not logged. Every failure's
// code goes on the request's access line (Note "error_code").
func LogFailure(log *slog.Logger, r *http.Request, e *paylink.Error) {
	Note(r, "error_code", e.Code)
	switch e.Kind {
	case paylink.KindInternal:
		log.ErrorContext(r.Context(), "internal error", "route", Route(r), "err", e.Error())
	case paylink.KindUnavailable:
		log.WarnContext(r.Context(), "unavailable", "route", Route(r), "err", e.Error())
	}
}

// SetUnavailable sets the Retry-After of a 503 that no Service error
// comes with (the readiness check's).
func SetUnavailable(w http.ResponseWriter) {
	w.Header().Set("Retry-After", strconv.Itoa(RetryAfterSeconds))
}

// Status is the HTTP status of a Service error of kind k, the one mapping
// the API, the payment pages and the dashboard answer with: an outage is
// 503 everywhere, anything unknown a 500.
func Status(k paylink.Kind) int {
	switch k {
	case paylink.KindInvalid:
		return http.StatusBadRequest
	case paylink.KindUnauthorized:
		return http.StatusUnauthorized
	case paylink.KindForbidden:
		return http.StatusForbidden
	case paylink.KindNotFound:
		return http.StatusNotFound
	case paylink.KindConflict:
		return http.StatusConflict
	case paylink.KindTooLarge:
		return http.StatusRequestEntityTooLarge
	case paylink.KindRateLimited:
		return http.StatusTooManyRequests
	case paylink.KindUnavailable:
		return http.StatusServiceUnavailable
	case paylink.KindMethodNotAllowed:
		return http.StatusMethodNotAllowed
	case paylink.KindUnsupportedMedia:
		return http.StatusUnsupportedMediaType
	}
	return http.StatusInternalServerError
}
