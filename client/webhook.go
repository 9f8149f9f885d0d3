package client

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Why a webhook failed verification. Verify wraps them with detail; test
// with errors.Is. Only ErrWebhookTooOld and ErrWebhookTooNew concern a
// webhook paylink really signed: answer every one of them with a 4xx
// and do nothing.
var (
	// ErrWebhookNotSigned: the request has no v1 webhook-signature (a
	// merchant onboarded before signing existed has no secret until
	// paylink merchant rotate-webhook-secret gives it one).
	ErrWebhookNotSigned = errors.New("paylink: webhook is not signed")
	// ErrWebhookBadHeader: webhook-id or webhook-timestamp is missing,
	// or the timestamp is not unix seconds.
	ErrWebhookBadHeader = errors.New("paylink: webhook headers are missing or malformed")
	// ErrWebhookBadSignature: no signature matches any of the secrets:
	// the body, id or timestamp was changed, or the secret is not this
	// merchant's (or was rotated out).
	ErrWebhookBadSignature = errors.New("paylink: webhook signature does not match")
	// ErrWebhookTooOld: the signature is right, but the webhook was sent
	// longer ago than the tolerance: a replay, or one held up on the way.
	ErrWebhookTooOld = errors.New("paylink: webhook timestamp is too old")
	// ErrWebhookTooNew: the signature is right, but the webhook claims to
	// be sent later than now plus the tolerance (a clock is wrong).
	ErrWebhookTooNew = errors.New("paylink: webhook timestamp is in the future")
)

// DefaultWebhookTolerance is how far a webhook's timestamp may be from
// the receiver's clock, either way, unless the verifier says otherwise:
// the Standard Webhooks default. paylink stamps each attempt as it sends
// it, so a retry or a resend carries a fresh timestamp.
const DefaultWebhookTolerance = 5 * time.Minute

// maxWebhookBody bounds the webhook body ReadWebhook reads: far above
// any payload paylink sends (a few KiB).
const maxWebhookBody = 1 << 20

// webhookSecretPrefix begins a signing secret as paylink prints it.
const webhookSecretPrefix = "whsec_"

// WebhookVerifier checks the Standard Webhooks signatures paylink puts
// on its webhooks (docs/webhooks.md, "Signatures"). It is safe for
// concurrent use.
type WebhookVerifier struct {
	keys      [][]byte
	tolerance time.Duration
}

// NewWebhookVerifier returns a verifier accepting a webhook signed under
// any of secrets, the merchant's "whsec_..." signing secrets (the prefix
// may be left out). During a rotation's overlap paylink signs under the
// new and the previous secret, so a receiver given both, or either,
// accepts every webhook: switch to the new secret at any moment in the
// overlap, or pass both for its length. tolerance bounds how far a
// webhook's timestamp may be from now, either way; 0 means
// DefaultWebhookTolerance.
func NewWebhookVerifier(secrets []string, tolerance time.Duration) (*WebhookVerifier, error) {
	if len(secrets) == 0 {
		return nil, errors.New("paylink: webhook verifier: no signing secret")
	}
	if tolerance < 0 {
		return nil, fmt.Errorf("paylink: webhook verifier: negative tolerance %s", tolerance)
	}
	if tolerance == 0 {
		tolerance = DefaultWebhookTolerance
	}
	v := &WebhookVerifier{tolerance: tolerance}
	for i, s := range secrets {
		key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, webhookSecretPrefix))
		if err != nil || len(key) == 0 {
			// Never quote the secret: it is a credential.
			return nil, fmt.Errorf("paylink: webhook verifier: secret %d is not whsec_ and base64", i+1)
		}
		v.keys = append(v.keys, key)
	}
	return v, nil
}

// VerifyWebhook checks a webhook's signature under any of secrets with
// the default tolerance: NewWebhookVerifier(secrets, 0), then Verify. A
// receiver verifying many webhooks builds its verifier once.
func VerifyWebhook(secrets []string, header http.Header, body []byte, now time.Time) error {
	v, err := NewWebhookVerifier(secrets, 0)
	if err != nil {
		return err
	}
	return v.Verify(header, body, now)
}

// Verify checks that body, exactly as received, is a webhook paylink
// signed under one of the verifier's secrets, sent within the tolerance
// of now. The error wraps one of the ErrWebhook values. The signature is
// checked before the timestamp, so ErrWebhookTooOld and ErrWebhookTooNew
// are only ever said of a webhook paylink signed.
func (v *WebhookVerifier) Verify(header http.Header, body []byte, now time.Time) error {
	sigs := v1Signatures(header.Get("webhook-signature"))
	if len(sigs) == 0 {
		return ErrWebhookNotSigned
	}
	id, ts := header.Get("webhook-id"), header.Get("webhook-timestamp")
	sent, err := strconv.ParseInt(ts, 10, 64)
	if id == "" || err != nil {
		return fmt.Errorf("%w: webhook-id %q, webhook-timestamp %q", ErrWebhookBadHeader, id, ts)
	}
	if !v.signed(sigs, id, ts, body) {
		return ErrWebhookBadSignature
	}
	at := time.Unix(sent, 0)
	switch age := now.Sub(at); {
	case age > v.tolerance:
		return fmt.Errorf("%w: sent at %s, %s before now (tolerance %s)", ErrWebhookTooOld, at.UTC().Format(time.RFC3339), age, v.tolerance)
	case -age > v.tolerance:
		return fmt.Errorf("%w: sent at %s, %s after now (tolerance %s)", ErrWebhookTooNew, at.UTC().Format(time.RFC3339), -age, v.tolerance)
	}
	return nil
}

// signed reports whether one of sigs is the base64 HMAC-SHA256 of
// id.timestamp.body under one of the keys, comparing in constant time.
func (v *WebhookVerifier) signed(sigs []string, id, ts string, body []byte) bool {
	for _, key := range v.keys {
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte(id + "." + ts + "."))
		mac.Write(body)
		want := []byte(base64.StdEncoding.EncodeToString(mac.Sum(nil)))
		for _, sig := range sigs {
			if hmac.Equal([]byte(sig), want) {
				return true
			}
		}
	}
	return false
}

// v1Signatures is the v1 signatures of a webhook-signature value
// ("v1,<base64>", space-separated), other versions left out.
func v1Signatures(header string) []string {
	var sigs []string
	for _, field := range strings.Fields(header) {
		if version, value, _ := strings.Cut(field, ","); version == "v1" {
			sigs = append(sigs, value)
		}
	}
	return sigs
}

// ReadWebhook reads a webhook request's body (at most 1 MiB), verifies
// it as Verify does, and decodes it. Answer 200 at once, before any
// slow work: paylink counts any other answer, or none within its
// timeout, as a failed delivery. A webhook that fails verification is
// an error wrapping one of the ErrWebhook values; answer it with a 4xx.
func (v *WebhookVerifier) ReadWebhook(r *http.Request, now time.Time) (*Webhook, error) {
	body, err := readAtMost(r.Body, maxWebhookBody, "webhook body")
	if err != nil {
		return nil, fmt.Errorf("paylink: %w", err)
	}
	if err := v.Verify(r.Header, body, now); err != nil {
		return nil, err
	}
	w, err := DecodeWebhook(body)
	if err != nil {
		return nil, err
	}
	w.ID = r.Header.Get("webhook-id")
	return w, nil
}
