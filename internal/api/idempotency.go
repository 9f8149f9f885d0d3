package api

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
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
// the client gone, another operation on the payment under way) or refuses
// the request as sent (refusedAsSent) releases the key so the request
// can be retried; one that may have taken effect
// unseen (paylink.ErrCommitInDoubt) keeps it claimed until its lock ends.
func (s *Server) idempotent(w http.ResponseWriter, r *http.Request, m *paylink.Merchant, key string, raw []byte, h merchantHandler) (int, []byte) {
	if strings.HasPrefix(key, paylink.DashboardKeyPrefix) {
		return s.errorResponse(w, r, errReservedKey)
	}
	b, perr := parseBody(raw) // once, for the fingerprint and the handler
	replay, claim, err := s.svc.BeginIdempotent(r.Context(), m, key, requestHash(r, raw, b), earlierRequestHashes(r, raw)...)
	if err != nil {
		return s.errorResponse(w, r, err)
	}
	if replay != nil {
		w.Header().Set("Idempotent-Replayed", "true")
		httpx.Note(r, "replayed", "true")
		noteReference(r, keptReference(replay.Response))
		return replay.Status, replay.Response
	}
	status, body, err := s.outcome(w, r, m, b, perr, h)
	keep, leave := keptAs(status, err, claim)
	if leave {
		return status, body
	}
	// An outage's failure is logged by FinishIdempotent, at WARN.
	if err := s.svc.FinishIdempotent(context.WithoutCancel(r.Context()), claim, keep, body); err != nil && !errors.Is(err, paylink.ErrUnavailable) {
		s.log.ErrorContext(r.Context(), "idempotency key not recorded", "route", httpx.Route(r), "err", err)
	}
	return status, body
}

// keptAs is the status a request's answer is kept under its key with (0:
// the key is freed, so that a retry runs), or leave: the claim stays as
// it is, unfinished, so that no other request under the key runs while
// what it did is unknown: a commit in doubt, or a passing failure of a
// request that took the key over from the same one that never finished
// (which may have charged; freeing the key would let a retry with another
// token run: a verification sweep).
func keptAs(status int, err error, claim *paylink.IdempotencyClaim) (keep int, leave bool) {
	switch {
	case err == nil:
		return status, false
	case errors.Is(err, paylink.ErrCommitInDoubt):
		return 0, true
	case paylink.Retryable(err) && claim.TookOver:
		return 0, true
	case paylink.Retryable(err) || refusedAsSent(err) && !claim.TookOver:
		return 0, false
	}
	return status, false
}

// keptReference is the payment, refund or link a kept answer names (a
// purchase's, a refund's, a status look-up's, a link's), "" for none:
// the access line of its replay names it as the first request's did.
func keptReference(answer []byte) string {
	var a struct {
		Purchase struct {
			Reference string `json:"purchase_reference"`
		} `json:"purchase"`
		Refund struct {
			Reference string `json:"refund_reference"`
		} `json:"refund"`
		Reference string `json:"purchase_reference"`
		ID        string `json:"id"`
	}
	if json.Unmarshal(answer, &a) != nil {
		return ""
	}
	for _, ref := range []string{a.Refund.Reference, a.Purchase.Reference, a.Reference} {
		if ref != "" {
			return ref
		}
	}
	if strings.HasPrefix(a.ID, "lnk_") {
		return a.ID
	}
	return ""
}

// refusedAsSent reports whether err refused the request as it was sent
// (a body that cannot be read, or a field that is missing or not valid),
// before anything ran: the key is not kept with that answer, so the
// corrected request under the same key runs, as Stripe's API lets it;
// unless the claim took the key over from the same request that never
// finished (IdempotencyClaim.TookOver), which may have charged: a refusal
// now (a card that has expired since) says nothing about that.
func refusedAsSent(err error) bool {
	switch paylink.AsError(err).Code {
	case paylink.CodeInvalidRequest, paylink.CodeMalformedJSON, paylink.CodeBodyTooLarge, paylink.CodeUnsupportedMediaType:
		return true
	}
	return false
}

// requestHash identifies a request: the fingerprint of its method, path,
// query and body, followed by the same without its transaction token
// (paylink.BeginIdempotent). A finished key replays to a request whose
// second half matches: a client that lost the first attempt's answer and
// its token (another process, a restart) retries with a new token, and
// the token in the fingerprint made that "a different request", 409,
// which hid the first charge from a client that would then pay again
// under a new key. An unfinished claim is taken over only by the whole,
// the same token: that retry meets the token spent (or not) by the
// attempt that never finished, and cannot charge a second time.
func requestHash(r *http.Request, raw []byte, b *body) []byte {
	line := requestLine(r)
	return append(hashRequestLine(line, raw), hashRequestLine(line, withoutTransactionToken(raw, b))...)
}

func requestLine(r *http.Request) string { return r.Method + " " + r.URL.Path + "?" + r.URL.RawQuery }

// withoutTransactionToken is raw, parsed as b (nil when it does not
// parse), with its transaction token's value, where the body holds one
// (token.transaction_token or transaction_token, a JSON string that,
// trimmed as the handlers trim it, is written as a token is), made empty
// wherever it stands, however it is spelled: with white space around it
// or escaped, the token the request spends is the same. A body without
// such a token is raw: a value that is no token ("true", "12.00") is
// never blanked, nor, with it, a field that happens to hold the same text.
func withoutTransactionToken(raw []byte, b *body) []byte {
	if b == nil {
		return raw
	}
	for _, path := range []string{"token.transaction_token", "transaction_token"} {
		if v := b.peek(path); v != nil && v.kind == kindString && paylink.LooksLikeToken(strings.TrimSpace(v.text)) {
			raw = blankStrings(raw, strings.TrimSpace(v.text))
		}
	}
	return raw
}

// blankStrings is raw (JSON) with every string whose value, decoded (by
// the decoder's own scanner, parser.str) and trimmed, is tok written as
// "".
func blankStrings(raw []byte, tok string) []byte {
	p := parser{src: string(raw)}
	var out []byte
	last := 0
	for p.i < len(p.src) {
		if p.src[p.i] != '"' {
			p.i++
			continue
		}
		start := p.i
		text, ok := p.str()
		if !ok {
			break
		}
		if strings.TrimSpace(text) == tok {
			out = append(append(out, raw[last:start]...), `""`...)
			last = p.i
		}
	}
	if out == nil {
		return raw
	}
	return append(out, raw[last:]...)
}

// earlierRequestHashes are the fingerprints earlier releases made of the
// same request, so that a key one of them stored, retried within its 24
// hours after an upgrade, replays instead of answering 409 "a different
// request": the whole body, token included (the first half of this
// build's), and before 64b5baa without the query too, for a request
// without one. A path holding a "?" or a line break (escaped in the
// request) has no query-less line: it could equal this build's line of
// another request, a path and a query.
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
