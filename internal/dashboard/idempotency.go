package dashboard

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strings"

	"github.com/paylink/paylink"
)

// Forms that create something carry an idempotency key in a hidden
// field, claimed through the same Service methods as the API's
// Idempotency-Key header.

// newIdempotencyKey is the key a create form carries, so that a form
// submitted twice (a double click, a resent POST) creates one object.
func newIdempotencyKey() (string, error) {
	b := make([]byte, 18)
	if _, err := rand.Read(b); err != nil {
		return "", paylink.Internal("idempotency key", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// once claims the idempotency key of the posted form (its hidden
// idempotency_key field) for an action on what parts describe, as the
// API claims an Idempotency-Key. It returns the first submission's
// record when this one repeats it, or a finish function the action calls
// with its outcome (status 0 releases the key for a retry). Stored keys
// are prefixed so that they never meet the API's keys of the merchant.
func (h *Handler) once(rq *request, action string, parts ...string) (*paylink.IdempotencyKey, func(int, []byte), error) {
	form := rq.r.PostFormValue("idempotency_key")
	if form == "" {
		return nil, nil, paylink.Errorf(paylink.KindInvalid, paylink.CodeInvalidRequest,
			"this form has no idempotency key; reload the page and try again")
	}
	ctx, m, key := rq.r.Context(), rq.ss.Merchant, paylink.DashboardKeyPrefix+form
	hash := sha256.Sum256([]byte(action + "\x00" + strings.Join(parts, "\x00")))
	replay, claim, err := h.svc.BeginIdempotent(ctx, m, key, hash[:])
	if paylink.AsError(err).Code == paylink.CodeIdempotencyConflict {
		return nil, nil, errStaleForm()
	}
	if err != nil || replay != nil {
		return replay, nil, err
	}
	finish := func(status int, response []byte) {
		// An outage's failure is logged by FinishIdempotent, at WARN.
		if err := h.svc.FinishIdempotent(context.WithoutCancel(ctx), claim, status, response); err != nil && !errors.Is(err, paylink.ErrUnavailable) {
			h.log.ErrorContext(ctx, "dashboard: finish idempotency key", "action", action, "err", err)
		}
	}
	return nil, finish, nil
}

// failed ends a form's key after its action failed with err: released,
// so that the corrected form goes through, unless the database could not
// be reached. The action may then have committed with its answer lost (a
// link made, a key rolled, a refund reserved), so the key is kept, and the
// same form sent again shows the page as it now is instead of acting a
// second time.
func failed(finish func(int, []byte), err error) {
	if paylink.AsError(err).Code != paylink.CodeServiceUnavailable {
		finish(0, nil)
	}
}
