package api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"net/http"
	"strings"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/httpx"
)

// errReservedKey refuses an Idempotency-Key in the dashboard's namespace.
var errReservedKey = &paylink.Error{Kind: paylink.KindInvalid, Code: paylink.CodeInvalidRequest,
	Message: "Idempotency-Key: keys beginning with " + paylink.DashboardKeyPrefix + " are reserved for the dashboard",
	Fields:  map[string]string{"Idempotency-Key": "keys beginning with " + paylink.DashboardKeyPrefix + " are reserved for the dashboard"}}

// idempotent runs a request at most once per Idempotency-Key: a retry
// with the same key and body gets the first response again (with
// Idempotent-Replayed: true), a different body or a concurrent retry gets
// 409. An answer that describes a passing state (paylink.Retryable: 5xx,
// the client gone, another operation on the payment under way) releases
// the key so the request can be retried.
func (s *Server) idempotent(w http.ResponseWriter, r *http.Request, m *paylink.Merchant, key string, raw []byte, h merchantHandler) (int, []byte) {
	if strings.HasPrefix(key, paylink.DashboardKeyPrefix) {
		return s.errorResponse(w, r, errReservedKey)
	}
	replay, claim, err := s.svc.BeginIdempotent(r.Context(), m, key, requestHash(r, raw), earlierRequestHashes(r, raw)...)
	if err != nil {
		return s.errorResponse(w, r, err)
	}
	if replay != nil {
		w.Header().Set("Idempotent-Replayed", "true")
		return replay.Status, replay.Response
	}
	status, body, err := s.outcome(w, r, m, raw, h)
	keep := status
	if err != nil && paylink.Retryable(err) {
		keep = 0
	}
	if err := s.svc.FinishIdempotent(context.WithoutCancel(r.Context()), claim, keep, body); err != nil {
		s.log.ErrorContext(r.Context(), "idempotency key not recorded", "route", httpx.Route(r), "err", err)
	}
	return status, body
}

// requestHash identifies a request: method, path, query and body, but
// not its transaction token. A token is single use, so a retry from a
// client that no longer has the first attempt's (another process, a
// restart) carries a new one: with the token in the fingerprint such a
// retry was "a different request", 409, which hid that the first had
// been charged, and a client that then tried a new key paid twice.
func requestHash(r *http.Request, raw []byte) []byte {
	return hashRequestLine(requestLine(r), withoutTransactionToken(raw))
}

func requestLine(r *http.Request) string { return r.Method + " " + r.URL.Path + "?" + r.URL.RawQuery }

// withoutTransactionToken is raw with its transaction token's value,
// wherever the body holds it as sent (token.transaction_token or
// transaction_token, in plain JSON string form), made empty. A body that
// does not parse, or whose token is written with escapes, is raw.
func withoutTransactionToken(raw []byte) []byte {
	b, err := parseBody(raw)
	if err != nil {
		return raw
	}
	for _, path := range []string{"token.transaction_token", "transaction_token"} {
		if v := b.lookup(path); v != nil && v.kind == kindString && v.text != "" {
			raw = bytes.ReplaceAll(raw, []byte(`"`+v.text+`"`), []byte(`""`))
		}
	}
	return raw
}

// earlierRequestHashes are the fingerprints earlier releases made of the
// same request, so that a key one of them stored, retried within its 24
// hours after an upgrade, replays instead of answering 409 "a different
// request": the whole body, token included (before this build), and
// before 64b5baa without the query too, for a request without one. A
// path holding a "?" or a line break (escaped in the request) has no
// query-less line: it could equal this build's line of another request,
// a path and a query.
func earlierRequestHashes(r *http.Request, raw []byte) [][]byte {
	earlier := [][]byte{hashRequestLine(requestLine(r), raw)}
	if r.URL.RawQuery == "" && !strings.ContainsAny(r.URL.Path, "?\n") {
		earlier = append(earlier, hashRequestLine(r.Method+" "+r.URL.Path, raw))
	}
	return earlier
}

func hashRequestLine(line string, raw []byte) []byte {
	h := sha256.New()
	h.Write([]byte(line + "\n"))
	h.Write(raw)
	return h.Sum(nil)
}
