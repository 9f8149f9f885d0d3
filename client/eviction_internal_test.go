package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paylink/paylink/internal/apitest"
)

// TestAnOwnRetryRecoversAfterItsKeyLeftTheCache: a purchase under an
// Idempotency-Key whose first attempt's answer is lost (a 503 after
// paylink paid, the key released) retries and is refused
// transaction_token_used; meanwhile other calls of the client filled its
// key cache (maxKeyedTokens newer keys) and pushed this call's entry
// out. The call still holds the record of who sent its token, so it
// recovers its payment (verification sweep: it returned the refusal).
func TestAnOwnRetryRecoversAfterItsKeyLeftTheCache(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	var c *Client
	var n atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		first := r.URL.Path == "/v5/purchase" && n.Add(1) == 1
		out, _ := http.NewRequest(r.Method, env.Server.URL+r.URL.RequestURI(), bytes.NewReader(body))
		out.Header = r.Header.Clone()
		if first {
			out.Header.Del("Idempotency-Key") // paylink's 503 releases the key
		}
		res, err := http.DefaultClient.Do(out)
		if err != nil {
			t.Error(err)
			return
		}
		data, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if first {
			// Other calls of this client under other keys, meanwhile.
			now := time.Now().Add(time.Second)
			for i := range maxKeyedTokens {
				c.keyed.putIfAbsent(fmt.Sprint("other-", i), "tok", now)
			}
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusServiceUnavailable)
			_ = json.NewEncoder(w).Encode(map[string]string{"response_code": "service_unavailable", "response_message": "briefly unavailable",
				"error_code": "service_unavailable", "error_message": "briefly unavailable"})
			return
		}
		for k, v := range res.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(res.StatusCode)
		_, _ = w.Write(data)
	}))
	defer proxy.Close()
	c = New(proxy.URL, m.Creds.APIKey, m.Creds.CompanyToken, WithRetries(3), WithRetryWaits(10*time.Millisecond, 100*time.Millisecond))
	req := PurchaseRequest{
		Customer: Customer{IPAddress: "203.0.113.7", Timezone: "UTC"},
		Card:     &Card{Number: "4111111111111111", ExpiryMonth: "12", ExpiryYear: env.Clock.Now().AddDate(3, 0, 0).Format("06"), CVC: "123"},
		Purchase: PurchaseDetails{Amount: "7.00", Currency: "AUD", InvoiceNumber: "EVICT-1"},
	}
	res, err := c.Purchase(context.Background(), req, IdempotencyKey("k-evict"))
	if err != nil || !res.Recovered {
		t.Fatalf("got %+v, %v; want the first attempt's payment, recovered", res, err)
	}
}
