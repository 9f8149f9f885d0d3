package api_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
)

// gzipped is b gzip-compressed.
func gzipped(t *testing.T, b []byte) string {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// TestContentEncoding: a gzipped body (Content-Encoding: gzip) is read
// decompressed, within the same 64 KiB as a plain one (a small body that
// inflates past it is 413, unread beyond); a body under another encoding
// is 415 naming it, and nothing runs (its transaction token still pays).
func TestContentEncoding(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	tokenBody := `{"company_token":"` + m.Creds.CompanyToken + `"}`
	purchase, err := json.Marshal(env.CardPurchase(m, "4111111111111111", "10.00"))
	if err != nil {
		t.Fatal(err)
	}
	bomb := gzipped(t, bytes.Repeat([]byte(" "), 32<<20)) // 32 MiB of blanks in about 32 KiB
	over := gzipped(t, append([]byte(tokenBody), bytes.Repeat([]byte(" "), 64<<10)...))
	tests := []struct {
		name, path, encoding, body string
		status                     int
		code, says                 string
	}{
		{"gzip", "/v5/transaction_token", "gzip", gzipped(t, []byte(tokenBody)), 200, "success", `"transaction_token":"`},
		{"x-gzip, any case", "/v5/transaction_token", "X-GZIP", gzipped(t, []byte(tokenBody)), 200, "success", ""},
		{"identity", "/v5/transaction_token", "identity", tokenBody, 200, "success", ""},
		{"gzip and identity", "/v5/transaction_token", "identity, gzip", gzipped(t, []byte(tokenBody)), 200, "success", ""},
		{"a bomb", "/v5/transaction_token", "gzip", bomb, 413, paylink.CodeBodyTooLarge, "65536"},
		{"a byte over", "/v5/transaction_token", "gzip", over, 413, paylink.CodeBodyTooLarge, ""},
		{"not gzip", "/v5/transaction_token", "gzip", tokenBody, 400, paylink.CodeMalformedJSON, "not valid gzip"},
		{"br", "/v5/purchase", "br", string(purchase), 415, paylink.CodeUnsupportedMediaType, `\"br\"`},
		{"deflate", "/v5/purchase", "deflate", string(purchase), 415, paylink.CodeUnsupportedMediaType, `\"deflate\"`},
		{"gzip twice", "/v5/purchase", "gzip, gzip", gzipped(t, []byte(gzipped(t, purchase))), 415, paylink.CodeUnsupportedMediaType, `gzip, gzip`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, raw := env.Raw(env.RawRequest(http.MethodPost, tt.path, m, tt.body,
				"Content-Type", "application/json", "Content-Encoding", tt.encoding))
			if res.StatusCode != tt.status || !strings.Contains(raw, `"response_code":"`+tt.code+`"`) || !strings.Contains(raw, tt.says) {
				t.Errorf("got %d %.300s, want %d %s saying %s", res.StatusCode, raw, tt.status, tt.code, tt.says)
			}
		})
	}
	if r := env.Post("/v5/purchase", m, json.RawMessage(purchase)); r.Status != 200 || r.Str("purchase.status") != "APPROVED" {
		t.Errorf("the purchase refused with 415, sent again plainly: got %d %s, want it approved (its token unspent)", r.Status, r.Raw)
	}
}
