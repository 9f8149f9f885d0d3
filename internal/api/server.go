// Package api serves paylink's /v5 JSON API over HTTP.
package api

import (
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/buildinfo"
	"github.com/paylink/paylink/internal/httpx"
)

// Server holds the /v5 API handlers; Register puts them on the site's
// mux, where the shared middleware (internal/httpx) wraps them.
type Server struct {
	svc    *paylink.Service
	log    *slog.Logger
	limits *limiter
	spec   []byte // the OpenAPI description as JSON
	// draining, once closed, makes /readyz answer 503: the instance is
	// shutting down and a load balancer should stop sending it requests.
	draining <-chan struct{}
	// down remembers a failed readiness check, so that a database
	// outage logs when readiness changes, not at every probe.
	down atomic.Bool
}

// Option configures a Server.
type Option func(*Server)

// WithRateLimit limits each merchant to perSecond requests per second
// with bursts of burst; zero disables the limit.
func WithRateLimit(perSecond float64, burst int) Option {
	return func(s *Server) { s.limits = newLimiter(perSecond, burst) }
}

// WithDraining makes /readyz answer 503 from the moment draining is
// closed (serve closes it on SIGTERM), while the instance still serves the
// requests it gets: a load balancer stops sending before the listener
// closes.
func WithDraining(draining <-chan struct{}) Option {
	return func(s *Server) { s.draining = draining }
}

// New builds the API handlers; routes.go lists every endpoint. It fails
// only if the embedded OpenAPI description does not load.
func New(svc *paylink.Service, log *slog.Logger, opts ...Option) (*Server, error) {
	spec, err := openAPIJSON()
	if err != nil {
		return nil, err
	}
	s := &Server{svc: svc, log: log, spec: spec}
	for _, o := range opts {
		o(s)
	}
	return s, nil
}

// merchantHandler is a handler for an authenticated merchant.
type merchantHandler func(w http.ResponseWriter, r *http.Request, m *paylink.Merchant, b *body) (any, error)

// authed authenticates the API key, applies the merchant's rate limit,
// reads the body, honours an Idempotency-Key, and writes the handler's
// result or error as JSON.
func (s *Server) authed(h merchantHandler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		status, body := s.serveAuthed(w, r, h)
		writeRaw(w, status, body)
	})
}

func (s *Server) serveAuthed(w http.ResponseWriter, r *http.Request, h merchantHandler) (int, []byte) {
	actor := paylink.Actor{Kind: paylink.ActorAPIKey, IP: paylink.SourceIP(r.RemoteAddr), RequestID: paylink.RequestIDFrom(r.Context())}
	ctx := paylink.WithActor(r.Context(), actor)
	apiKey, err := bearer(r)
	if err != nil {
		s.svc.RefuseCredentials(ctx, "sent twice")
		return s.errorResponse(w, r, err)
	}
	m, err := s.svc.Authenticate(ctx, apiKey)
	if err != nil {
		return s.errorResponse(w, r, err)
	}
	actor.ID = m.APIKeyID()
	r = r.WithContext(paylink.WithActor(r.Context(), actor))
	httpx.Note(r, "merchant", m.ID)
	if wait, ok := s.limits.allow(m.ID); !ok {
		w.Header().Set("Retry-After", strconv.Itoa(int(wait.Seconds())+1))
		return s.errorResponse(w, r, paylink.Errorf(paylink.KindRateLimited, paylink.CodeRateLimited,
			"too many requests for this merchant; retry after the Retry-After seconds"))
	}
	raw, err := readRaw(w, r)
	if err == nil {
		raw, err = formBody(r, raw)
	}
	if err != nil {
		return s.errorResponse(w, r, err)
	}
	if r.Method == http.MethodGet || r.Method == http.MethodHead { // a read is idempotent already
		if err := s.readCaller(r, m, raw); err != nil {
			return s.errorResponse(w, r, err)
		}
		return s.run(w, r, m, raw, h)
	}
	key, ok := header(r, "Idempotency-Key")
	if !ok {
		return s.errorResponse(w, r, errIdempotencyKeyTwice)
	}
	if key == "" {
		return s.run(w, r, m, raw, h)
	}
	return s.idempotent(w, r, m, key, raw, h)
}

// run decodes the body and runs the handler.
func (s *Server) run(w http.ResponseWriter, r *http.Request, m *paylink.Merchant, raw []byte, h merchantHandler) (int, []byte) {
	b, err := parseBody(raw)
	status, body, _ := s.outcome(w, r, m, b, err, h)
	return status, body
}

// outcome is run's answer for a body parsed as b (or refused with err),
// with the handler's error, if it failed.
func (s *Server) outcome(w http.ResponseWriter, r *http.Request, m *paylink.Merchant, b *body, err error, h merchantHandler) (int, []byte, error) {
	if err == nil {
		var out any
		if out, err = h(w, r, m, b); err == nil {
			if csv, ok := out.(csvBody); ok {
				w.Header().Set("Content-Type", "text/csv; charset=utf-8")
				return http.StatusOK, csv, nil
			}
			return http.StatusOK, encodeJSON(out), nil
		}
	}
	if b != nil {
		err = b.asSent(err)
	}
	status, body := s.errorResponse(w, r, err)
	return status, body, err
}

// noteReference names, on the request's access line, the payment,
// refund or link it made or read (httpx.Note).
func noteReference(r *http.Request, ref string) { httpx.Note(r, "reference", ref) }

// bearer extracts the API key from "Authorization: Bearer <key>"; ""
// when there is none. The header sent twice with different values is
// 401: the request carries no one key to authenticate.
func bearer(r *http.Request) (string, error) {
	auth, ok := header(r, "Authorization")
	if !ok {
		return "", errAuthorizationTwice
	}
	scheme, key, ok := strings.Cut(strings.TrimSpace(auth), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", nil
	}
	return strings.TrimSpace(key), nil
}

// header is the request's header name, read once: sent more than once
// with one value (trimmed), it is that value; with different values, ok
// is false, since a proxy or a log that reads another of them would see
// another key or another merchant than paylink (the rule of a JSON key
// sent twice).
func header(r *http.Request, name string) (value string, ok bool) {
	values := r.Header.Values(name)
	if len(values) == 0 {
		return "", true
	}
	for _, v := range values[1:] {
		if strings.TrimSpace(v) != strings.TrimSpace(values[0]) {
			return "", false
		}
	}
	return values[0], true
}

// problemSentTwice is the field problem of a header or a body key sent
// twice with different values.
const problemSentTwice = "sent twice with different values"

// sentTwice is the answer to a header sent twice with different values,
// naming it in fields.
func sentTwice(kind paylink.Kind, code, name string) *paylink.Error {
	return &paylink.Error{Kind: kind, Code: code, Message: name + " " + problemSentTwice + ": send it once",
		Fields: map[string]string{name: problemSentTwice}}
}

// errAuthorizationTwice and errIdempotencyKeyTwice refuse those headers
// sent twice with different values.
var (
	errAuthorizationTwice  = sentTwice(paylink.KindUnauthorized, paylink.CodeUnauthorized, "Authorization")
	errIdempotencyKeyTwice = sentTwice(paylink.KindInvalid, paylink.CodeInvalidRequest, "Idempotency-Key")
)

func writeJSON(w http.ResponseWriter, status int, v any) {
	writeRaw(w, status, encodeJSON(v))
}

// writeRaw writes a body, JSON unless the handler chose another type.
func writeRaw(w http.ResponseWriter, status int, body []byte) {
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
	}
	w.WriteHeader(status)
	w.Write(body)
}

// encodeJSON encodes a response value; values are built by paylink and
// always encodable. The hot responses write themselves into one
// allocation (encode.go); the others go through encoding/json.
func encodeJSON(v any) []byte {
	if a, ok := v.(appender); ok {
		return append(a.appendJSON(make([]byte, 0, 1024)), '\n')
	}
	b, err := json.Marshal(v)
	if err != nil {
		b = []byte(`{"response_code":"internal_error","response_message":"internal error","error_code":"internal_error","error_message":"internal error"}`)
	}
	return append(b, '\n')
}

// errorBody is every non-2xx response: the spec's response_code pair, the
// error_code pair deployed clients read, and field problems.
type errorBody struct {
	ResponseCode    string            `json:"response_code"`
	ResponseMessage string            `json:"response_message"`
	ErrorCode       string            `json:"error_code"`
	ErrorMessage    string            `json:"error_message"`
	Fields          map[string]string `json:"fields,omitempty"`
}

// writeError logs internal detail and sends only the client-safe part.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	status, body := s.errorResponse(w, r, err)
	writeRaw(w, status, body)
}

// errorResponse renders an error as its status and body, logging
// internal detail.
func (s *Server) errorResponse(w http.ResponseWriter, r *http.Request, err error) (int, []byte) {
	if httpx.ClientGone(r, err) { // nobody reads this answer: not a server error to log
		return httpx.StatusClientClosedRequest, encodeJSON(errorBody{ResponseCode: paylink.CodeClientClosedRequest,
			ResponseMessage: clientClosed, ErrorCode: paylink.CodeClientClosedRequest, ErrorMessage: clientClosed})
	}
	e := paylink.AsError(err)
	status := httpx.Status(e.Kind)
	httpx.LogFailure(s.log, r, e)
	if e.Kind == paylink.KindUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="paylink"`)
	}
	httpx.SetRetryAfter(w, err) // every 503, and the one 409 under a key that a retry passes
	msg, fields := redact(e.Message), maskedFields(e.Fields)
	return status, encodeJSON(errorBody{ResponseCode: e.Code, ResponseMessage: msg,
		ErrorCode: e.Code, ErrorMessage: msg, Fields: fields})
}

// clientClosed is the message of an answer to a client that went away.
const clientClosed = "the client closed the request before its answer"

// redact masks every card number and paylink secret in s: an error may
// quote a value it refused, or a key the client wrote ("card.4111…"), and
// an error body is kept with its Idempotency-Key.
func redact(s string) string { return paylink.MaskSecrets(paylink.MaskCardNumbers(s)) }

// maskedFields is fields with every card number and secret redacted, in
// the paths as in their problems.
func maskedFields(fields map[string]string) map[string]string {
	var out map[string]string
	for k, v := range fields {
		mk, mv := redact(k), redact(v)
		if mk == k && mv == v {
			continue
		}
		if out == nil {
			out = maps.Clone(fields)
		}
		delete(out, k)
		out[mk] = mv
	}
	if out == nil {
		return fields
	}
	return out
}

// health answers liveness, with the running version.
func (s *Server) health(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok", "version": buildinfo.Read().Version})
}

// ready answers readiness: the database is reachable and the instance is
// not shutting down. An unreachable database is a 503 with Retry-After, as
// for every other call, logged at WARN when readiness is lost (an outage is
// no bug) and at INFO when it comes back, not at every probe.
func (s *Server) ready(w http.ResponseWriter, r *http.Request) {
	select {
	case <-s.draining: // nil without WithDraining, so never
		httpx.SetUnavailable(w)
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable",
			"reason": "shutting down: this instance finishes the requests it has and takes no new ones"})
		return
	default:
	}
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := s.svc.Ping(ctx); err != nil {
		if !s.down.Swap(true) {
			s.log.WarnContext(r.Context(), "not ready: the database cannot be reached or commits nothing; /readyz answers 503 until it does", "err", err)
		}
		httpx.SetUnavailable(w)
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable",
			"reason": "the database cannot be reached, is restarting or commits nothing"})
		return
	}
	if s.down.Swap(false) {
		s.log.InfoContext(r.Context(), "ready again: the database commits")
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

// openAPI serves the OpenAPI description as JSON.
func (s *Server) openAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Cache-Control", "public, max-age=300")
	writeRaw(w, http.StatusOK, s.spec)
}

// NotFound answers routes no package registered, with the API's error
// body; the site registers it as its catch-all.
func (s *Server) NotFound(w http.ResponseWriter, r *http.Request) {
	s.writeError(w, r, paylink.Errorf(paylink.KindNotFound, paylink.CodeNotFound, "no such endpoint: calls are POST /v5/... (status and link look-ups also GET), except the ledger's, which are GET only: GET /v5/balance, /v5/balance_transactions, /v5/payouts, /v5/reports/settlement"))
}

// NotCanonical answers an API path with an empty segment that no base
// URL's join doubled (/v5/purchase//refund), or "." or ".." segments
// (/v5/purchase/a/../b), which the site refuses rather than redirects.
func (s *Server) NotCanonical(w http.ResponseWriter, r *http.Request) {
	s.writeError(w, r, paylink.Errorf(paylink.KindInvalid, paylink.CodeInvalidRequest,
		"the path has an empty, \".\" or \"..\" segment (a reference left out?): send the endpoint's own path (/v5/...), with every reference in it"))
}

// MethodNotAllowed answers a path that routes serve under other methods,
// named in allow ("GET, HEAD"), with 405 and the Allow header.
func (s *Server) MethodNotAllowed(w http.ResponseWriter, r *http.Request, allow string) {
	w.Header().Set("Allow", allow)
	s.writeError(w, r, paylink.Errorf(paylink.KindMethodNotAllowed, paylink.CodeMethodNotAllowed,
		"%s is not allowed here: this endpoint answers %s", r.Method, allow))
}
