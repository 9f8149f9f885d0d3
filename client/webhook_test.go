package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/client"
	"github.com/paylink/paylink/internal/apitest"
)

// delivery is a webhook request as a receiver got it.
type delivery struct {
	header http.Header
	body   []byte
}

// webhookReceiver is a merchant's webhook endpoint: a real HTTP server
// on 127.0.0.1 that keeps what paylink delivers and answers 200.
type webhookReceiver struct {
	*httptest.Server
	mu  sync.Mutex
	got []delivery
}

func newWebhookReceiver(t *testing.T) *webhookReceiver {
	rc := &webhookReceiver{}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got = append(rc.got, delivery{header: r.Header.Clone(), body: body})
		rc.mu.Unlock()
	}))
	t.Cleanup(rc.Close)
	return rc
}

// count is how many webhooks arrived so far.
func (rc *webhookReceiver) count() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.got)
}

// nth is the n-th webhook that arrived.
func (rc *webhookReceiver) nth(n int) delivery {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.got[n]
}

// webhookMerchant onboards a merchant whose webhooks go to rc, with a
// client of its own.
func webhookMerchant(env *apitest.Env, rc *webhookReceiver) (*client.Client, *apitest.Merchant) {
	m := env.Onboard(func(n *paylink.NewMerchant) {
		n.Settings.Webhook.URL, n.Settings.Webhook.Domains = rc.URL+"/paylink", []string{"127.0.0.1"}
	})
	return client.New(env.Server.URL, m.Creds.APIKey, m.Creds.CompanyToken), m
}

// payAndReceive makes a purchase of card number and returns its result
// and the webhook paylink delivered for it.
func payAndReceive(t *testing.T, c *client.Client, env *apitest.Env, rc *webhookReceiver, number string) (*client.TransactionResult, delivery) {
	t.Helper()
	n := rc.count()
	res, err := c.Purchase(context.Background(), client.PurchaseRequest{
		Customer: buyer,
		Card:     &client.Card{Number: number, ExpiryMonth: "12", ExpiryYear: year(env), CVC: "123"},
		Purchase: client.PurchaseDetails{Amount: "10.00", Currency: "AUD", InvoiceNumber: "WH-" + number[12:]},
	})
	if err != nil {
		t.Fatalf("purchase: %v", err)
	}
	env.WaitWebhooks()
	if rc.count() != n+1 {
		t.Fatalf("got %d webhooks for the purchase, want 1", rc.count()-n)
	}
	return res, rc.nth(n)
}

// verifyWith verifies d under secrets at now, with the default tolerance.
func verifyWith(secrets []string, d delivery, now time.Time) error {
	return client.VerifyWebhook(secrets, d.header, d.body, now)
}

// TestVerifyRealWebhooks verifies webhooks a real paylink delivered to a
// real receiver: what paylink signed passes, and every change to the
// body, id or timestamp, a wrong secret or an old or future timestamp is
// refused with its own error. Then a rotation: during the overlap the
// old and the new secret both verify; after it, only the new.
func TestVerifyRealWebhooks(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	rc := newWebhookReceiver(t)
	c, m := webhookMerchant(env, rc)
	_, other := webhookMerchant(env, rc)
	oldSecret := []string{m.Creds.WebhookSecret}
	now := env.Clock.Now

	res, d := payAndReceive(t, c, env, rc, "4111111111111111")
	if err := verifyWith(oldSecret, d, now()); err != nil {
		t.Fatalf("a webhook paylink signed: got %v, want it verified", err)
	}
	changed := func(name, value string) delivery {
		h := d.header.Clone()
		h.Set(name, value)
		return delivery{header: h, body: d.body}
	}
	sent, err := strconv.ParseInt(d.header.Get("webhook-timestamp"), 10, 64)
	if err != nil {
		t.Fatalf("webhook-timestamp: %v", err)
	}
	refusals := []struct {
		name    string
		d       delivery
		secrets []string
		now     time.Time
		want    error
	}{
		{"a tampered body", delivery{d.header, bytes.Replace(d.body, []byte(`"10.00"`), []byte(`"99.00"`), 1)}, oldSecret, now(), client.ErrWebhookBadSignature},
		{"a body with a byte more", delivery{d.header, append(append([]byte(nil), d.body...), ' ')}, oldSecret, now(), client.ErrWebhookBadSignature},
		{"a changed timestamp", changed("webhook-timestamp", strconv.FormatInt(sent+1, 10)), oldSecret, now(), client.ErrWebhookBadSignature},
		{"a changed id", changed("webhook-id", d.header.Get("webhook-id")+"x"), oldSecret, now(), client.ErrWebhookBadSignature},
		{"another merchant's secret", d, []string{other.Creds.WebhookSecret}, now(), client.ErrWebhookBadSignature},
		{"no signature", changed("webhook-signature", ""), oldSecret, now(), client.ErrWebhookNotSigned},
		{"only an unknown signature version", changed("webhook-signature", "v1a,"+strings.TrimPrefix(d.header.Get("webhook-signature"), "v1,")), oldSecret, now(), client.ErrWebhookNotSigned},
		{"no id", changed("webhook-id", ""), oldSecret, now(), client.ErrWebhookBadHeader},
		{"a timestamp not in seconds", changed("webhook-timestamp", time.Unix(0, 0).Format(time.RFC3339)), oldSecret, now(), client.ErrWebhookBadHeader},
		{"replayed 6 minutes later", d, oldSecret, now().Add(6 * time.Minute), client.ErrWebhookTooOld},
		{"received 6 minutes before it was sent", d, oldSecret, now().Add(-6 * time.Minute), client.ErrWebhookTooNew},
	}
	for _, r := range refusals {
		if err := verifyWith(r.secrets, r.d, r.now); !errors.Is(err, r.want) {
			t.Errorf("%s: got %v, want %v", r.name, err, r.want)
		}
	}
	if err := verifyWith(oldSecret, d, now().Add(4*time.Minute)); err != nil {
		t.Errorf("4 minutes later, within the default tolerance: got %v", err)
	}
	lenient, err := client.NewWebhookVerifier(oldSecret, 10*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := lenient.Verify(d.header, d.body, now().Add(6*time.Minute)); err != nil {
		t.Errorf("6 minutes later with a 10-minute tolerance: got %v", err)
	}

	w, err := lenient.ReadWebhook(httptest.NewRequest(http.MethodPost, "/paylink", bytes.NewReader(d.body)), now())
	if !errors.Is(err, client.ErrWebhookNotSigned) || w != nil {
		t.Errorf("ReadWebhook without headers: got %+v, %v; want ErrWebhookNotSigned", w, err)
	}
	req := httptest.NewRequest(http.MethodPost, "/paylink", bytes.NewReader(d.body))
	req.Header = d.header
	if w, err = lenient.ReadWebhook(req, now()); err != nil {
		t.Fatalf("ReadWebhook: %v", err)
	}
	if w.ID != d.header.Get("webhook-id") || !strings.HasPrefix(w.ID, "msg_") || w.Status != client.StatusApproved ||
		w.TransactionReference != res.Purchase.PurchaseReference || w.Amount != "10.00" || w.MID != m.ID ||
		w.TransactionAuthCode == nil || len(w.FeeDetail.FeeLines) == 0 || w.FeeDetail.TotalFeeSummary.LineCount != len(w.FeeDetail.FeeLines) {
		t.Errorf("ReadWebhook: got %+v, want the approved purchase %s of 10.00", w, res.Purchase.PurchaseReference)
	}

	// Every field paylink sends has its place in client.Webhook.
	dec := json.NewDecoder(bytes.NewReader(d.body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(new(client.Webhook)); err != nil {
		t.Errorf("a real payload has a field client.Webhook lacks: %v", err)
	}

	newSecret, err := env.Service.RotateWebhookSecret(context.Background(), m.ID, env.WebhookSecretVersion(m.ID), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	both := []string{m.Creds.WebhookSecret, newSecret}
	_, d = payAndReceive(t, c, env, rc, "4000000000000002")
	if n := len(strings.Fields(d.header.Get("webhook-signature"))); n != 2 {
		t.Errorf("during the overlap: got %d signatures, want 2", n)
	}
	for name, secrets := range map[string][]string{"old": oldSecret, "new": {newSecret}, "both": both, "new without whsec_": {strings.TrimPrefix(newSecret, "whsec_")}} {
		if err := verifyWith(secrets, d, now()); err != nil {
			t.Errorf("during the overlap, the %s secret: got %v, want it verified", name, err)
		}
	}
	if w, err := client.DecodeWebhook(d.body); err != nil || w.Status != client.StatusDeclined || w.TransactionAuthCode != nil || len(w.FeeDetail.FeeLines) != 0 {
		t.Errorf("the declined purchase's webhook: got %+v, %v; want DECLINED without auth code or fees", w, err)
	}

	env.Clock.Advance(61 * time.Minute)
	_, d = payAndReceive(t, c, env, rc, "4111111111111111")
	if err := verifyWith(oldSecret, d, now()); !errors.Is(err, client.ErrWebhookBadSignature) {
		t.Errorf("after the overlap, the old secret: got %v, want ErrWebhookBadSignature", err)
	}
	if err := verifyWith(both, d, now()); err != nil {
		t.Errorf("after the overlap, old and new: got %v, want it verified by the new", err)
	}
}

func TestNewWebhookVerifierRefusesBadSetUps(t *testing.T) {
	for name, tc := range map[string]struct {
		secrets   []string
		tolerance time.Duration
	}{
		"no secret":          {nil, 0},
		"an empty secret":    {[]string{"whsec_"}, 0},
		"not base64":         {[]string{"whsec_not*base64"}, 0},
		"negative tolerance": {[]string{"whsec_c2VjcmV0"}, -time.Second},
	} {
		if v, err := client.NewWebhookVerifier(tc.secrets, tc.tolerance); err == nil || v != nil {
			t.Errorf("%s: got %v, %v; want an error", name, v, err)
		} else if strings.Contains(err.Error(), "not*base64") {
			t.Errorf("%s: the error %q quotes the secret", name, err)
		}
	}
}
