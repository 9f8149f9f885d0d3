// Package webhook delivers paylink's outgoing webhooks: a dispatcher that
// drains the transactional outbox, an HTTP client that refuses to reach
// internal networks, and Standard Webhooks signatures.
package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Standard Webhooks header names.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// Sign returns the webhook-signature value for a message: one
// "v1,<base64 HMAC-SHA256(key, id.timestamp.body)>" per key, separated
// by spaces (two during a secret rotation's overlap).
func Sign(keys [][]byte, id string, ts time.Time, body []byte) string {
	sigs := make([]string, 0, len(keys))
	for _, k := range keys {
		sigs = append(sigs, "v1,"+signature(k, id, ts.Unix(), body))
	}
	return strings.Join(sigs, " ")
}

func signature(key []byte, id string, unix int64, body []byte) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + strconv.FormatInt(unix, 10) + "."))
	mac.Write(body)
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// setHeaders adds the Standard Webhooks headers to a request.
func setHeaders(h http.Header, keys [][]byte, id string, ts time.Time, body []byte) {
	h.Set(HeaderID, id)
	h.Set(HeaderTimestamp, strconv.FormatInt(ts.Unix(), 10))
	if len(keys) > 0 {
		h.Set(HeaderSignature, Sign(keys, id, ts, body))
	}
}
