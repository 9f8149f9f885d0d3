package api_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/api"
	"github.com/paylink/paylink/internal/apitest"
)

// postKey sends a raw purchase body with an Idempotency-Key.
func postKey(t *testing.T, env *apitest.Env, m *apitest.Merchant, key string, body []byte) (*http.Response, string) {
	t.Helper()
	return postKeyTo(t, env, m, "/v5/purchase", key, body)
}

// postKeyTo sends a raw body to path with an Idempotency-Key.
func postKeyTo(t *testing.T, env *apitest.Env, m *apitest.Merchant, path, key string, body []byte) (*http.Response, string) {
	t.Helper()
	return postWith(t, env, path, body, map[string][]string{"Authorization": {"Bearer " + m.Creds.APIKey}, "Idempotency-Key": {key}})
}

// postWith sends a raw body to path with each header's values, in order,
// and returns the answer and its body.
func postWith(t *testing.T, env *apitest.Env, path string, body []byte, headers map[string][]string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, env.Server.URL+path, bytes.NewReader(body))
	for name, values := range headers {
		for _, v := range values {
			req.Header.Add(name, v)
		}
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return res, string(raw)
}

// onboardWithWebhooks onboards a merchant whose company webhook is a
// real receiver, and returns a count of the payment webhooks it got once
// every due delivery was attempted: what a merchant sees of how many
// payments were made. Deliveries are counted by webhook-id, as a
// receiver de-duplicates them: one attempted again (at least once, as
// when a test clock jumps past its lease) is one webhook.
func onboardWithWebhooks(t *testing.T, env *apitest.Env) (*apitest.Merchant, func() int) {
	t.Helper()
	var mu sync.Mutex
	deliveries := map[string]bool{} // by webhook-id: a delivery attempted twice (at least once) is one
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("webhook-id")
		if id == "" {
			t.Error("a webhook without its webhook-id")
		}
		mu.Lock()
		deliveries[id] = true
		mu.Unlock()
	}))
	t.Cleanup(rc.Close)
	m := env.Onboard(func(nm *paylink.NewMerchant) { nm.Settings.Webhook.URL = rc.URL + "/hook" })
	return m, func() int {
		env.WaitWebhooks()
		mu.Lock()
		defer mu.Unlock()
		return len(deliveries)
	}
}

func TestIdempotencyKeyReplaysTheFirstResponse(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m, webhooks := onboardWithWebhooks(t, env)
	body, _ := json.Marshal(env.CardPurchase(m, "4111111111111111", "12.00"))
	first, firstBody := postKey(t, env, m, "order-1", body)
	again, againBody := postKey(t, env, m, "order-1", body)
	if first.StatusCode != 200 || again.StatusCode != 200 || firstBody != againBody {
		t.Fatalf("got %d %s then %d %s, want the same 200 response twice", first.StatusCode, firstBody, again.StatusCode, againBody)
	}
	if again.Header.Get("Idempotent-Replayed") != "true" || first.Header.Get("Idempotent-Replayed") != "" {
		t.Errorf("got Idempotent-Replayed %q then %q, want empty then true", first.Header.Get("Idempotent-Replayed"), again.Header.Get("Idempotent-Replayed"))
	}
	if n := webhooks(); n != 1 {
		t.Errorf("got %d payment webhooks, want 1: the replay must not pay again", n)
	}
	// The query is part of the request: the same key with another query
	// is another request, not a replay.
	req, _ := http.NewRequest(http.MethodPost, env.Server.URL+"/v5/purchase?test=1", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+m.Creds.APIKey)
	req.Header.Set("Idempotency-Key", "order-1")
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != http.StatusConflict {
		t.Errorf("same key and body, another query: got %v, %v; want 409", res, err)
	} else {
		res.Body.Close()
	}
	other, _ := json.Marshal(env.CardPurchase(m, "4111111111111111", "13.00"))
	if res, raw := postKey(t, env, m, "order-1", other); res.StatusCode != http.StatusConflict || !strings.Contains(raw, "idempotency_key_conflict") {
		t.Errorf("same key, other body: got %d %s, want 409 idempotency_key_conflict", res.StatusCode, raw)
	}
	// Keys are per merchant: another merchant may use the same key.
	m2 := env.Onboard()
	body2, _ := json.Marshal(env.CardPurchase(m2, "4111111111111111", "12.00"))
	if res, raw := postKey(t, env, m2, "order-1", body2); res.StatusCode != 200 || res.Header.Get("Idempotent-Replayed") != "" {
		t.Errorf("another merchant's key: got %d %s", res.StatusCode, raw)
	}
	// A refused request is remembered too: the replay is the same 4xx.
	bad := []byte(`{"purchase":{}}`)
	r1, b1 := postKey(t, env, m, "bad-1", bad)
	r2, b2 := postKey(t, env, m, "bad-1", bad)
	if r1.StatusCode != 400 || r2.StatusCode != 400 || b1 != b2 {
		t.Errorf("bad request replay: got %d then %d", r1.StatusCode, r2.StatusCode)
	}
}

// TestARetryWithANewTransactionTokenReplays: a client that lost the first
// attempt's answer and its transaction token (another process, a
// restart) retries under the same Idempotency-Key with a new token. The
// token was part of the fingerprint, so the retry was "a different
// request", 409, which hid the first charge, and a client that then tried
// a new key paid twice. It replays now, on both engines; another amount
// under the key is still refused, and a key a build before this one
// stored (its fingerprint with the token) still replays the same request.
func TestARetryWithANewTransactionTokenReplays(t *testing.T) {
	eachEngine(t, func(t *testing.T, dsn string) {
		env := apitest.Start(t, apitest.Options{DSN: dsn})
		m, webhooks := onboardWithWebhooks(t, env)
		first, _ := json.Marshal(env.CardPurchase(m, "4111111111111111", "12.00"))
		res1, body1 := postKey(t, env, m, "order-9", first)
		retry, _ := json.Marshal(env.CardPurchase(m, "4111111111111111", "12.00")) // a new token
		if bytes.Equal(first, retry) {
			t.Fatal("the retry's body has the first's token")
		}
		res2, body2 := postKey(t, env, m, "order-9", retry)
		if res1.StatusCode != 200 || res2.StatusCode != 200 || body1 != body2 || res2.Header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("a retry with a new token: got %d %s then %d (replayed %q) %s, want the first answer replayed",
				res1.StatusCode, body1, res2.StatusCode, res2.Header.Get("Idempotent-Replayed"), body2)
		}
		other, _ := json.Marshal(env.CardPurchase(m, "4111111111111111", "13.00"))
		if res, raw := postKey(t, env, m, "order-9", other); res.StatusCode != http.StatusConflict {
			t.Errorf("another amount under the key: got %d %s, want 409", res.StatusCode, raw)
		}
		if n := webhooks(); n != 1 {
			t.Errorf("got %d payment webhooks, want 1: the retry must not pay again", n)
		}
		body, _ := json.Marshal(env.CardPurchase(m, "4111111111111111", "14.00"))
		stored := []byte(`{"response_code":"success"}`)
		before := sha256.Sum256([]byte("POST /v5/purchase?\n" + string(body)))
		_, claim, err := env.Service.BeginIdempotent(context.Background(), m.Merchant, "order-before", before[:])
		if err != nil {
			t.Fatal(err)
		}
		if err := env.Service.FinishIdempotent(context.Background(), claim, http.StatusOK, stored); err != nil {
			t.Fatal(err)
		}
		if res, raw := postKey(t, env, m, "order-before", body); res.Header.Get("Idempotent-Replayed") != "true" || raw != string(stored) {
			t.Errorf("a key the previous build stored, the same request: got %d (replayed %q) %s, want the stored answer", res.StatusCode, res.Header.Get("Idempotent-Replayed"), raw)
		}
	})
}

// TestARetryWithANewTokenReplaysHoweverTheTokenIsSpelled: a token sent
// with white space around it (a line read with its newline) or escaped
// is the token the purchase spends, and a retry under the key with a new
// one replays the first answer (the idempotency sweep found it 409 "a
// different request", which hid the first charge).
func TestARetryWithANewTokenReplaysHoweverTheTokenIsSpelled(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	for key, spell := range map[string]func(raw []byte, tok string) []byte{
		"order-newline": func(raw []byte, tok string) []byte {
			return bytes.Replace(raw, []byte(`"`+tok+`"`), []byte(`"`+tok+`\n"`), 1)
		},
		"order-spaces": func(raw []byte, tok string) []byte {
			return bytes.Replace(raw, []byte(`"`+tok+`"`), []byte(`" `+tok+` "`), 1)
		},
		"order-escaped": func(raw []byte, tok string) []byte {
			return bytes.Replace(raw, []byte(`"`+tok+`"`), []byte(fmt.Sprintf(`"\u%04x%s"`, tok[0], tok[1:])), 1)
		},
	} {
		body := func() []byte {
			b := env.CardPurchase(m, "4111111111111111", "12.00")
			raw, _ := json.Marshal(b)
			return spell(raw, b["token"].(map[string]any)["transaction_token"].(string))
		}
		res1, body1 := postKey(t, env, m, key, body())
		res2, body2 := postKey(t, env, m, key, body())
		if res1.StatusCode != http.StatusOK || res2.StatusCode != http.StatusOK || body1 != body2 || res2.Header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("%s: got %d %s then, with a new token, %d %s; want the first answer replayed", key, res1.StatusCode, body1, res2.StatusCode, body2)
		}
	}
}

// fingerprint is the API's fingerprint of a purchase body whose token is
// tok: the body's, then the body's without the token.
func fingerprint(body []byte, tok string) []byte {
	return fingerprintOf("/v5/purchase", body, tok)
}

// fingerprintOf is the fingerprint of a POST to path of body whose
// transaction token is tok ("" for none).
func fingerprintOf(path string, body []byte, tok string) []byte {
	full := sha256.Sum256([]byte("POST " + path + "?\n" + string(body)))
	blind := full
	if tok != "" {
		blind = sha256.Sum256([]byte("POST " + path + "?\n" + string(bytes.ReplaceAll(body, []byte(`"`+tok+`"`), []byte(`""`)))))
	}
	return append(full[:], blind[:]...)
}

// TestAnUnfinishedCreationIsNeverTakenOver: a payment link created under
// a key whose first attempt never finished (its commit in doubt, or its
// instance gone) is not created again by the same request after the
// key's lock: a request that spends no transaction token has nothing to
// stop a second link, so its retry is 409 "never finished" (a
// verification sweep made two links this way), on both engines. A money
// call's retry still takes its key over (TestAnUnfinishedKeyIsNotTakenOverByAnotherToken).
func TestAnUnfinishedCreationIsNeverTakenOver(t *testing.T) {
	eachEngine(t, func(t *testing.T, dsn string) {
		env := apitest.Start(t, apitest.Options{DSN: dsn})
		m := env.Onboard()
		body, _ := json.Marshal(map[string]any{"amount": "10.00", "currency": "AUD", "merchantReference": "INV-DOUBT"})
		if _, claim, err := env.Service.BeginIdempotent(context.Background(), m.Merchant, "link-doubt",
			fingerprintOf("/v5/payment-links", body, "")); err != nil || claim == nil {
			t.Fatalf("claim: %v, %v", claim, err)
		}
		env.Clock.Advance(paylink.IdempotencyLock + time.Second)
		if res, raw := postKeyTo(t, env, m, "/v5/payment-links", "link-doubt", body); res.StatusCode != http.StatusConflict || !strings.Contains(raw, "never finished") {
			t.Errorf("the same link request after the lock: got %d %s, want 409 saying the first never finished", res.StatusCode, raw)
		}
		if links, err := env.Service.ListLinks(context.Background(), m.Merchant, 10); err != nil || len(links) != 0 {
			t.Errorf("links made: %d (%v), want none", len(links), err)
		}
	})
}

// TestAnUnfinishedKeyIsNotTakenOverByAnotherToken: an instance claimed a
// key, spent its token and charged, and died before recording the answer
// (or the database was away past the key's lock). A retry with a new
// token must not take the key over and charge again (a verification
// sweep found it did, once the token was left out of the fingerprint):
// it is 409, saying the first may have completed. The same request with
// the first token takes it over and meets that token spent, after its
// lifetime too (transaction_token_used naming the payment, not
// "expired"), and that answer is kept: a later retry with yet another
// token replays it. One charge in all, on both engines.
func TestAnUnfinishedKeyIsNotTakenOverByAnotherToken(t *testing.T) {
	eachEngine(t, func(t *testing.T, dsn string) {
		env := apitest.Start(t, apitest.Options{DSN: dsn})
		m, webhooks := onboardWithWebhooks(t, env)
		first := env.CardPurchase(m, "4111111111111111", "12.00")
		tok := first["token"].(map[string]any)["transaction_token"].(string)
		body, _ := json.Marshal(first)
		if _, claim, err := env.Service.BeginIdempotent(context.Background(), m.Merchant, "order-crash", fingerprint(body, tok)); err != nil || claim == nil {
			t.Fatalf("claim: %v, %v", claim, err)
		}
		res, raw := postWith(t, env, "/v5/purchase", body, map[string][]string{"Authorization": {"Bearer " + m.Creds.APIKey}})
		if res.StatusCode != http.StatusOK {
			t.Fatalf("the attempt that never finished: got %d %s", res.StatusCode, raw)
		}
		var charged struct {
			Purchase struct {
				PurchaseReference string `json:"purchase_reference"`
			}
		}
		json.Unmarshal([]byte(raw), &charged)

		// Within the claim's lock a retry is told to come back shortly
		// (Retry-After, the one 409 under a key worth retrying as it is).
		if res, raw := postKey(t, env, m, "order-crash", body); res.StatusCode != http.StatusConflict ||
			!strings.Contains(raw, "still in progress") || res.Header.Get("Retry-After") != "1" {
			t.Errorf("a retry within the lock: got %d %s (Retry-After %q), want 409 still in progress with Retry-After 1",
				res.StatusCode, raw, res.Header.Get("Retry-After"))
		}
		env.Clock.Advance(paylink.IdempotencyLock + time.Second)
		other, _ := json.Marshal(env.CardPurchase(m, "4111111111111111", "12.00"))
		if res, raw := postKey(t, env, m, "order-crash", other); res.StatusCode != http.StatusConflict ||
			!strings.Contains(raw, "never finished") || res.Header.Get("Retry-After") != "" {
			t.Errorf("a new token after the lock: got %d %s (Retry-After %q), want 409 saying the first never finished, no Retry-After",
				res.StatusCode, raw, res.Header.Get("Retry-After"))
		}
		env.Clock.Advance(paylink.DefaultTransactionTokenTTL)
		res, raw = postKey(t, env, m, "order-crash", body)
		if res.StatusCode != http.StatusConflict || !strings.Contains(raw, "transaction_token_used") || !strings.Contains(raw, charged.Purchase.PurchaseReference) {
			t.Errorf("the same request after its token's lifetime: got %d %s, want 409 transaction_token_used naming %s", res.StatusCode, raw, charged.Purchase.PurchaseReference)
		}
		later, _ := json.Marshal(env.CardPurchase(m, "4111111111111111", "12.00"))
		if res, again := postKey(t, env, m, "order-crash", later); res.Header.Get("Idempotent-Replayed") != "true" || again != raw {
			t.Errorf("a later retry with a new token: got %d (replayed %q) %s, want the kept answer", res.StatusCode, res.Header.Get("Idempotent-Replayed"), again)
		}
		if n := webhooks(); n != 1 {
			t.Errorf("got %d payment webhooks, want 1: a retry under the key paid again", n)
		}
	})
}

// TestARefusalAfterATakeOverKeepsTheKey: a key taken over from the same
// request that never finished (it may have charged) keeps the retry's
// answer even when that is a refusal of the request as sent (the card
// expired since), so a corrected request under the key is refused 409
// rather than charged a second time (a verification sweep charged twice
// under one key this way).
func TestARefusalAfterATakeOverKeepsTheKey(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m, webhooks := onboardWithWebhooks(t, env)
	now := env.Clock.Now()
	nextMonth := time.Date(now.Year(), now.Month()+1, 1, 0, 0, 0, 0, time.UTC)
	env.Clock.Advance(nextMonth.Add(-10 * time.Minute).Sub(now)) // the month's last minutes
	now = env.Clock.Now()
	expiring := func(b map[string]any) {
		apitest.Set(b, "card.expiry_month", fmt.Sprintf("%02d", int(now.Month())))
		apitest.Set(b, "card.expiry_year", fmt.Sprintf("%02d", now.Year()%100))
	}
	first := env.CardPurchase(m, "4111111111111111", "12.00", expiring)
	body, _ := json.Marshal(first)
	tok := first["token"].(map[string]any)["transaction_token"].(string)
	if _, claim, err := env.Service.BeginIdempotent(context.Background(), m.Merchant, "order-expiring", fingerprint(body, tok)); err != nil || claim == nil {
		t.Fatalf("claim: %v, %v", claim, err)
	}
	if res, raw := postWith(t, env, "/v5/purchase", body, map[string][]string{"Authorization": {"Bearer " + m.Creds.APIKey}}); res.StatusCode != http.StatusOK {
		t.Fatalf("the attempt that charged and never finished: got %d %s", res.StatusCode, raw)
	}
	env.Clock.Advance(nextMonth.Sub(now) + paylink.IdempotencyLock) // within the key's 24 hours
	if res, raw := postKey(t, env, m, "order-expiring", body); res.StatusCode != http.StatusBadRequest {
		t.Fatalf("its retry once the card expired: got %d %s, want 400", res.StatusCode, raw)
	}
	corrected, _ := json.Marshal(env.CardPurchase(m, "4111111111111111", "12.00"))
	if res, raw := postKey(t, env, m, "order-expiring", corrected); res.StatusCode != http.StatusConflict {
		t.Errorf("a corrected request under the key: got %d %s, want 409", res.StatusCode, raw)
	}
	if n := webhooks(); n != 1 {
		t.Errorf("got %d payment webhooks, want 1: a request under the key paid again", n)
	}
}

// TestOnlyATokenIsLeftOutOfTheFingerprint: a value that is no
// transaction token ("true") sent as the token is not left out, and so
// neither is a field holding the same text: a hold asked for under a
// sale's key is another request (409), not the sale's replay.
func TestOnlyATokenIsLeftOutOfTheFingerprint(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	sale := env.CardPurchase(m, "4111111111111111", "5.00")
	apitest.Set(sale, "purchase.should_service_apply_pre_authorisation", "")
	body, _ := json.Marshal(sale)
	if res, raw := postKey(t, env, m, "k-hold", body); res.StatusCode != http.StatusOK {
		t.Fatalf("the sale: got %d %s", res.StatusCode, raw)
	}
	hold := env.CardPurchase(m, "4111111111111111", "5.00")
	apitest.Set(hold, "purchase.should_service_apply_pre_authorisation", "true")
	apitest.Set(hold, "token.transaction_token", "true")
	body, _ = json.Marshal(hold)
	if res, raw := postKey(t, env, m, "k-hold", body); res.StatusCode != http.StatusConflict || res.Header.Get("Idempotent-Replayed") != "" {
		t.Errorf("a hold under the sale's key: got %d (replayed %q) %s, want 409", res.StatusCode, res.Header.Get("Idempotent-Replayed"), raw)
	}
}

// TestAKeyAnEarlierReleaseStoredReplays: releases before 64b5baa
// fingerprinted a request without its query. A key one of them stored,
// retried unchanged after an upgrade within its 24 hours, answered 409
// "already used with a different request", which a client could take as
// its own bug and pay again with a new key. It replays now; with a query
// it is another request.
func TestAKeyAnEarlierReleaseStoredReplays(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	body, _ := json.Marshal(env.CardPurchase(m, "4111111111111111", "12.00"))
	stored := []byte(`{"response_code":"success","purchase":{"status":"APPROVED"}}`)
	earlier := sha256.Sum256([]byte("POST /v5/purchase\n" + string(body)))
	ctx := context.Background()
	_, claim, err := env.Service.BeginIdempotent(ctx, m.Merchant, "order-before-upgrade", earlier[:])
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Service.FinishIdempotent(ctx, claim, http.StatusOK, stored); err != nil {
		t.Fatal(err)
	}
	res, raw := postKey(t, env, m, "order-before-upgrade", body)
	if res.StatusCode != http.StatusOK || res.Header.Get("Idempotent-Replayed") != "true" || raw != string(stored) {
		t.Errorf("the same request retried after the upgrade: got %d (replayed %q) %s, want the stored answer replayed",
			res.StatusCode, res.Header.Get("Idempotent-Replayed"), raw)
	}
	if res, raw := postKeyTo(t, env, m, "/v5/purchase?test=1", "order-before-upgrade", body); res.StatusCode != http.StatusConflict {
		t.Errorf("with a query: got %d %s, want 409", res.StatusCode, raw)
	}
	// This build's line of a path and a query ("/v5/purchase/INV-7?" and
	// "/capture") is the earlier line of a path with an escaped "?": that
	// other request is no replay of it.
	lookup, _ := json.Marshal(map[string]any{"company_token": m.Creds.CompanyToken})
	if res, raw := postKeyTo(t, env, m, "/v5/purchase/INV-7?/capture", "order-7", lookup); res.StatusCode != http.StatusNotFound {
		t.Fatalf("a status look-up of INV-7 with a query: got %d %s, want 404", res.StatusCode, raw)
	}
	if res, raw := postKeyTo(t, env, m, "/v5/purchase/INV-7%3F/capture", "order-7", lookup); res.StatusCode != http.StatusConflict {
		t.Errorf("a capture of INV-7? with the same key: got %d (replayed %q) %s, want 409", res.StatusCode, res.Header.Get("Idempotent-Replayed"), raw)
	}
}

// TestARequestRefusedAsSentLeavesItsKey: a request whose body is refused
// (malformed, or a field missing or not valid) ran nothing, so its key is
// not kept with that answer: the corrected request under the same key
// runs, as Stripe's API lets it (the idempotency sweep: it was 409 "a
// different request", and the client needed a new key).
func TestARequestRefusedAsSentLeavesItsKey(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	for _, bad := range [][]byte{[]byte(`{"token":`), []byte(`{"purchase":{"amount":"12.00"}}`)} {
		if res, raw := postKey(t, env, m, "order-corrected", bad); res.StatusCode != http.StatusBadRequest {
			t.Fatalf("a bad body %s: got %d %s, want 400", bad, res.StatusCode, raw)
		}
	}
	good, _ := json.Marshal(env.CardPurchase(m, "4111111111111111", "12.00"))
	res1, raw1 := postKey(t, env, m, "order-corrected", good)
	res2, raw2 := postKey(t, env, m, "order-corrected", good)
	if res1.StatusCode != http.StatusOK || res2.Header.Get("Idempotent-Replayed") != "true" || raw1 != raw2 {
		t.Errorf("the corrected request under the key: got %d %s, then %d (replayed %q); want it run once, then replayed",
			res1.StatusCode, raw1, res2.StatusCode, res2.Header.Get("Idempotent-Replayed"))
	}
}

// TestEmptyIdempotencyKeyIsNoKey: an empty or blank Idempotency-Key is
// the same as none, so a sloppy client that always sends the header
// keeps working: each call runs, none is a replay of another.
func TestEmptyIdempotencyKeyIsNoKey(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	body, _ := json.Marshal(map[string]any{"company_token": m.Creds.CompanyToken})
	for _, key := range []string{"", "   "} {
		t.Run(strconv.Quote(key), func(t *testing.T) {
			seen := map[string]bool{}
			for i := 0; i < 2; i++ {
				res, raw := postKeyTo(t, env, m, "/v5/transaction_token", key, body)
				if res.StatusCode != http.StatusOK || res.Header.Get("Idempotent-Replayed") != "" || seen[raw] {
					t.Fatalf("call %d: got %d replayed %q %s, want a fresh 200", i+1, res.StatusCode, res.Header.Get("Idempotent-Replayed"), raw)
				}
				seen[raw] = true
			}
		})
	}
}

// TestDashboardKeysAreReserved: the dashboard's forms claim keys under
// a prefix the API refuses, so an API client's key never meets one.
func TestDashboardKeysAreReserved(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	body, _ := json.Marshal(env.CardPurchase(m, "4111111111111111", "12.00"))
	res, raw := postKey(t, env, m, paylink.DashboardKeyPrefix+"refund-1", body)
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(raw, "reserved for the dashboard") {
		t.Errorf("got %d %s, want 400: the prefix is the dashboard's", res.StatusCode, raw)
	}
	if res, raw := postKey(t, env, m, "x"+paylink.DashboardKeyPrefix+"refund-1", body); res.StatusCode != http.StatusOK {
		t.Errorf("the prefix elsewhere in a key: got %d %s, want 200", res.StatusCode, raw)
	}
}

// TestSecretsAreNeverIdempotencyKeys: a key that is the merchant's API
// key, company token or a webhook secret is refused, as a card number is,
// and so is free text holding an API key: keys and free text are stored
// in clear, these secrets only hashed or sealed (the secrets sweep found
// all three stored in clear).
func TestSecretsAreNeverIdempotencyKeys(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	body, _ := json.Marshal(map[string]any{"company_token": m.Creds.CompanyToken})
	for name, key := range map[string]string{"API key": m.Creds.APIKey, "company token": m.Creds.CompanyToken,
		"webhook secret": "whsec_vXyRU+CACfwxrCZHks+8JPpVQ4H9lW4NGQpfZ4z+2AQ=", "API key inside": "order-7:" + m.Creds.APIKey} {
		res, raw := postKeyTo(t, env, m, "/v5/transaction_token", key, body)
		if res.StatusCode != http.StatusBadRequest || !strings.Contains(raw, "one of the merchant's secrets") || strings.Contains(raw, key) {
			t.Errorf("%s as the key: got %d %s, want 400 naming the rule, not the key", name, res.StatusCode, raw)
		}
	}
	if res, raw := postKeyTo(t, env, m, "/v5/transaction_token", "order-7", body); res.StatusCode != http.StatusOK {
		t.Errorf("an order id as the key: got %d %s, want 200", res.StatusCode, raw)
	}
	r := env.Post("/v5/payment-links", m, map[string]any{"amount": "5.00", "currency": "AUD", "merchantReference": "ref " + m.Creds.APIKey})
	if r.Status != http.StatusBadRequest || !strings.Contains(r.Raw, "must not contain an API key") || strings.Contains(r.Raw, m.Creds.APIKey) {
		t.Errorf("an API key as a link's merchantReference: got %d %s, want 400 without the key", r.Status, r.Raw)
	}
}

func TestIdempotencyKeyConcurrentRetries(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m, webhooks := onboardWithWebhooks(t, env)
	body, _ := json.Marshal(env.CardPurchase(m, "4111111111111111", "12.00"))
	var wg sync.WaitGroup
	codes := make([]int, 8)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, _ := postKey(t, env, m, "race-1", body)
			codes[i] = res.StatusCode
		}()
	}
	wg.Wait()
	for _, c := range codes {
		if c != 200 && c != http.StatusConflict {
			t.Errorf("got status %d, want 200 (first or replay) or 409 (in progress)", c)
		}
	}
	if n := webhooks(); n != 1 {
		t.Errorf("got %d payment webhooks from 8 retries with one key, want 1 (codes %v)", n, codes)
	}
}

func TestRateLimitPerMerchant(t *testing.T) {
	env := apitest.Start(t, apitest.Options{API: []api.Option{api.WithRateLimit(0.001, 3)}})
	m, other := env.Onboard(), env.Onboard()
	body := map[string]any{"company_token": m.Creds.CompanyToken}
	for i := range 3 {
		if r := env.Post("/v5/transaction_token", m, body); r.Status != 200 {
			t.Fatalf("request %d within the burst: got %d", i, r.Status)
		}
	}
	r := env.Post("/v5/transaction_token", m, body)
	if r.Status != http.StatusTooManyRequests || r.Str("response_code") != "rate_limited" {
		t.Errorf("over the limit: got %d %s, want 429 rate_limited", r.Status, r.Raw)
	}
	if r := env.Post("/v5/transaction_token", other, map[string]any{"company_token": other.Creds.CompanyToken}); r.Status != 200 {
		t.Errorf("another merchant: got %d, want 200 (limits are per merchant)", r.Status)
	}
}

func TestMetricsCountRequestsByRoute(t *testing.T) {
	reg := prometheus.NewRegistry()
	env := apitest.Start(t, apitest.Options{Registry: reg})
	m := env.Onboard()
	env.TransactionToken(m)
	env.Post("/v5/purchase/pr_secret_reference", m, map[string]any{"company_token": m.Creds.CompanyToken})
	want := `
# HELP paylink_http_requests_total HTTP requests by route pattern and status code.
# TYPE paylink_http_requests_total counter
paylink_http_requests_total{code="200",route="POST /v5/transaction_token"} 1
paylink_http_requests_total{code="404",route="POST /v5/purchase/{ref}"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "paylink_http_requests_total"); err != nil {
		t.Error(err)
	}
}

// TestReadsIgnoreIdempotencyKey: a GET answers afresh whatever its key,
// so a CSV report asked twice under one key comes back as CSV both times
// (a replay used to carry JSON's content type), never marked replayed.
func TestReadsIgnoreIdempotencyKey(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	path := env.Server.URL + "/v5/reports/settlement?date=" + env.Service.Now().UTC().Format("2006-01-02")
	for i, method := range []string{http.MethodGet, http.MethodGet, http.MethodHead, http.MethodHead} {
		req, _ := http.NewRequest(method, path, nil)
		req.Header.Set("Authorization", "Bearer "+m.Creds.APIKey)
		req.Header.Set("Idempotency-Key", "report-1")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/csv") || res.Header.Get("Idempotent-Replayed") != "" {
			t.Errorf("call %d (%s): got %d %q replayed %q, want 200 text/csv, not replayed", i+1, method, res.StatusCode,
				res.Header.Get("Content-Type"), res.Header.Get("Idempotent-Replayed"))
		}
	}
	// The key was never taken by the reads: a call may use it.
	if res, body := postKey(t, env, m, "report-1", []byte(`{}`)); res.StatusCode == http.StatusConflict {
		t.Errorf("a POST with the key the reads carried: got %d %s, want it run", res.StatusCode, body)
	}
}

// postHeaders sends a raw purchase body with each header's values, in
// order, and decodes the answer.
func postHeaders(t *testing.T, env *apitest.Env, body []byte, headers map[string][]string) (int, http.Header, map[string]any) {
	t.Helper()
	res, raw := postWith(t, env, "/v5/purchase", body, headers)
	var out map[string]any
	json.Unmarshal([]byte(raw), &out)
	return res.StatusCode, res.Header, out
}

// TestHeadersSentTwiceWithDifferentValues: an Idempotency-Key or an
// Authorization sent twice with different values was read first-wins,
// while a proxy or a log reading the last saw another key or merchant.
// Now it is refused, naming the header, and nothing is paid; the same
// value sent twice is read once.
func TestHeadersSentTwiceWithDifferentValues(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m, webhooks := onboardWithWebhooks(t, env)
	other := env.Onboard()
	body, _ := json.Marshal(env.CardPurchase(m, "4111111111111111", "12.00"))
	auth := "Bearer " + m.Creds.APIKey
	tests := []struct {
		name    string
		headers map[string][]string
		status  int
		code    string
	}{
		{"two keys", map[string][]string{"Authorization": {auth}, "Idempotency-Key": {"order-1", "order-2"}}, 400, "invalid_request"},
		{"a key and an empty one", map[string][]string{"Authorization": {auth}, "Idempotency-Key": {"order-1", ""}}, 400, "invalid_request"},
		{"two merchants' keys", map[string][]string{"Authorization": {auth, "Bearer " + other.Creds.APIKey}}, 401, "unauthorized"},
		{"a wrong key then the right one", map[string][]string{"Authorization": {"Bearer pk_wrong", auth}}, 401, "unauthorized"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := "Authorization"
			if tt.code == "invalid_request" {
				name = "Idempotency-Key"
			}
			status, _, out := postHeaders(t, env, body, tt.headers)
			fields, _ := out["fields"].(map[string]any)
			if status != tt.status || out["response_code"] != tt.code || fields[name] == nil {
				t.Errorf("got %d %v, want %d %s naming %s", status, out, tt.status, tt.code, name)
			}
		})
	}
	if n := webhooks(); n != 0 {
		t.Fatalf("got %d payment webhooks, want none: a refused request pays nothing", n)
	}
	same := map[string][]string{"Authorization": {auth, " " + auth}, "Idempotency-Key": {"order-3", "order-3 "}}
	status, _, out := postHeaders(t, env, body, same)
	again, h, _ := postHeaders(t, env, body, map[string][]string{"Authorization": {auth}, "Idempotency-Key": {"order-3"}})
	if status != 200 || again != 200 || h.Get("Idempotent-Replayed") != "true" {
		t.Errorf("the same values twice: got %d %v, then %d replayed %q; want 200 under key order-3, then its replay",
			status, out, again, h.Get("Idempotent-Replayed"))
	}
}
