package api_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
)

// tokenize posts a tokenisation of number; mutate adjusts the body.
func tokenize(env *apitest.Env, m *apitest.Merchant, number string, mutate ...func(map[string]any)) apitest.Response {
	b := map[string]any{
		"company_token": m.Creds.CompanyToken,
		"card": map[string]any{"number": number, "expiry_month": "07", "expiry_year": env.Clock.Now().Year()%100 + 2,
			"cvc": "123", "holder_name": "Jo Citizen"},
	}
	for _, f := range mutate {
		f(b)
	}
	return env.Post("/v5/tokenize_card", m, b)
}

func withPermission(field string) func(map[string]any) {
	return func(b map[string]any) { apitest.Set(b, "customer."+field, true) }
}

// payWithToken purchases 5.00 with a card token.
func payWithToken(env *apitest.Env, m *apitest.Merchant, token string) apitest.Response {
	return env.Post("/v5/purchase", m, env.CardPurchase(m, "", "5.00", func(b map[string]any) {
		b["card"] = map[string]any{"token": token}
	}))
}

func lookup(env *apitest.Env, m *apitest.Merchant, token string) apitest.Response {
	return env.Post("/v5/card", m, map[string]any{"company_token": m.Creds.CompanyToken, "card_token": token})
}

var specTime = regexp.MustCompile(`^\d{4}-\d{2}-\d{2} (0\d|1[0-2]):\d{2}:\d{2} (AM|PM)$`)

func TestTokenizeCard(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	tests := []struct {
		name       string
		mutate     func(map[string]any)
		multiUse   bool
		customerID string // "*" any non-empty
	}{
		{"spec spelling store_card_permisison", withPermission("store_card_permisison"), true, "*"},
		{"correct spelling store_card_permission", withPermission("store_card_permission"), true, "*"},
		{"customer id kept", func(b map[string]any) {
			withPermission("store_card_permisison")(b)
			apitest.Set(b, "customer.id", "cust-42")
		}, true, "cust-42"},
		{"no permission is single-use", func(map[string]any) {}, false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := tokenize(env, m, visa, tc.mutate)
			if r.Status != http.StatusOK || len(r.Str("card.token")) != paylink.TokenLength {
				t.Fatalf("got %d %s, want 200 with a 128-character token", r.Status, r.Raw)
			}
			if got := r.Get("card.multi_use"); got != tc.multiUse {
				t.Errorf("multi_use: got %v, want %v", got, tc.multiUse)
			}
			id := r.Str("customer.id")
			if (tc.customerID == "*" && id == "") || (tc.customerID != "*" && id != tc.customerID) {
				t.Errorf("customer.id: got %q, want %q", id, tc.customerID)
			}
			if got := r.Str("created_timestamp_utc"); !specTime.MatchString(got) {
				t.Errorf("created_timestamp_utc: got %q, want YYYY-MM-DD hh:mm:ss AM|PM", got)
			}
			if r.Str("card.number") != "411111******1111" || r.Str("card.expiry_month") != "07" || r.Str("card.brand") != "VISA" {
				t.Errorf("card: got %s", r.Raw)
			}
		})
	}
	t.Run("card details are required", func(t *testing.T) {
		r := env.Post("/v5/tokenize_card", m, map[string]any{"company_token": m.Creds.CompanyToken})
		expectError(t, r, http.StatusBadRequest, paylink.CodeInvalidRequest)
	})
	t.Run("a number without its expiry asks for the expiry, a card token beside it or not", func(t *testing.T) {
		// tokenize_card takes no card token: one sent is no reason to
		// excuse the expiry (verification sweep: the answer said
		// "expiry month must be 1 to 12" of a month never sent).
		r := tokenize(env, m, visa, func(b map[string]any) {
			apitest.Set(b, "card.token", strings.Repeat("a", paylink.TokenLength))
			apitest.Delete(b, "card.expiry_month")
			apitest.Delete(b, "card.expiry_year")
		})
		expectError(t, r, http.StatusBadRequest, paylink.CodeInvalidRequest)
		if !strings.Contains(r.Raw, `"card.expiry_month":"is required with card details"`) || !strings.Contains(r.Raw, `"card.expiry_year"`) {
			t.Errorf("got %s, want the expiry month and year asked for", r.Raw)
		}
	})
	t.Run("a customer id holding a card number or too long is refused", func(t *testing.T) {
		for _, id := range []string{"5555 5555 5555 4444", strings.Repeat("c", paylink.MaxFieldLength+1)} {
			r := tokenize(env, m, visa, withPermission("store_card_permission"), func(b map[string]any) { apitest.Set(b, "customer.id", id) })
			expectError(t, r, http.StatusBadRequest, paylink.CodeInvalidRequest)
			if !strings.Contains(r.Raw, `"customer.id"`) {
				t.Errorf("customer.id %.20q: got %s, want the field named", id, r.Raw)
			}
		}
	})
	t.Run("fingerprint is equal across tokenisations of one card", func(t *testing.T) {
		a, b := tokenize(env, m, visa), tokenize(env, m, "4111 1111 1111 1111", withPermission("store_card_permission"))
		c := tokenize(env, m, "5555555555554444")
		if a.Str("card.finger_print") == "" || a.Str("card.finger_print") != b.Str("card.finger_print") {
			t.Errorf("fingerprints: got %q and %q, want equal", a.Str("card.finger_print"), b.Str("card.finger_print"))
		}
		if a.Str("card.token") == b.Str("card.token") || a.Str("card.finger_print") == c.Str("card.finger_print") {
			t.Errorf("tokens must differ and other cards' fingerprints must differ: %s / %s", a.Raw, c.Raw)
		}
	})
}

func TestCardTokenUse(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m, other := env.Onboard(), env.Onboard()
	t.Run("single-use token pays once", func(t *testing.T) {
		tok := tokenize(env, m, visa).Str("card.token")
		if r := payWithToken(env, m, tok); r.Str("purchase.status") != "APPROVED" {
			t.Fatalf("first use: got %s, want APPROVED", r.Raw)
		}
		expectError(t, payWithToken(env, m, tok), http.StatusConflict, paylink.CodeCardTokenUsed)
	})
	t.Run("multi-use token pays repeatedly and is returned", func(t *testing.T) {
		tok := tokenize(env, m, visa, withPermission("store_card_permisison")).Str("card.token")
		for i := range 2 {
			r := payWithToken(env, m, tok)
			if r.Str("purchase.status") != "APPROVED" || r.Str("card.token") != tok {
				t.Fatalf("use %d: got %s, want APPROVED with the token", i, r.Raw)
			}
		}
	})
	t.Run("look-up", func(t *testing.T) {
		tok := tokenize(env, m, visa, withPermission("store_card_permisison"))
		r := lookup(env, m, tok.Str("card.token"))
		if r.Status != http.StatusOK || r.Get("multi_use") != true || r.Str("customer.id") != tok.Str("customer.id") ||
			r.Str("card.number") != "411111******1111" || !specTime.MatchString(r.Str("created_timestamp_utc")) {
			t.Errorf("look-up: got %d %s", r.Status, r.Raw)
		}
		if r.Get("response_code") != nil {
			t.Errorf("look-up has response_code: %s", r.Raw)
		}
		single := lookup(env, m, tokenize(env, m, visa).Str("card.token"))
		if single.Get("multi_use") != false || single.Get("customer") != nil {
			t.Errorf("single-use look-up: got %s, want multi_use false and no customer.id", single.Raw)
		}
	})
	t.Run("tokens are scoped to their merchant", func(t *testing.T) {
		tok := tokenize(env, m, visa, withPermission("store_card_permisison")).Str("card.token")
		expectError(t, lookup(env, other, tok), http.StatusNotFound, paylink.CodeNotFound)
		expectError(t, payWithToken(env, other, tok), http.StatusNotFound, paylink.CodeNotFound)
		r := env.Post("/v5/invalidate_card_token", other, map[string]any{"company_token": other.Creds.CompanyToken, "card_token": tok})
		expectError(t, r, http.StatusNotFound, paylink.CodeNotFound)
	})
	for _, path := range []string{"/v5/invalidate_card_token", "/v5/invalidate_card"} {
		t.Run("invalidate via "+path, func(t *testing.T) {
			tok := tokenize(env, m, visa, withPermission("store_card_permisison")).Str("card.token")
			r := env.Post(path, m, map[string]any{"company_token": m.Creds.CompanyToken, "card_token": tok})
			if r.Status != http.StatusOK || r.Str("card_token") != tok || r.Str("card.number") != "411111******1111" ||
				r.Str("card.expiry_month") != "07" || r.Str("response_code") != "success" {
				t.Fatalf("invalidate: got %d %s", r.Status, r.Raw)
			}
			expectError(t, payWithToken(env, m, tok), http.StatusConflict, paylink.CodeCardTokenInvalid)
			expectError(t, lookup(env, m, tok), http.StatusConflict, paylink.CodeCardTokenInvalid)
			surcharge := env.Post("/v5/surcharge", m, map[string]any{"token": map[string]any{"company": m.Creds.CompanyToken},
				"card": map[string]any{"token": tok}, "amount": "10.00", "currency": "AUD"})
			expectError(t, surcharge, http.StatusConflict, paylink.CodeCardTokenInvalid)
			again := env.Post(path, m, map[string]any{"company_token": m.Creds.CompanyToken, "card_token": tok})
			expectError(t, again, http.StatusConflict, paylink.CodeCardTokenInvalid)
		})
	}
}

// TestATokenWithItsExpiryEchoed: a client that sends a card look-up's
// expiry beside the card token pays (and previews the surcharge) with the
// token's card; a number beside the token is still refused.
func TestATokenWithItsExpiryEchoed(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	token := tokenize(env, m, "4111111111111111", withPermission("store_card_permisison")).Str("card.token")
	withToken := func(b map[string]any) {
		b["card"] = map[string]any{"token": token, "expiry_month": "12", "expiry_year": "2031"}
	}
	if res := env.Post("/v5/purchase", m, env.CardPurchase(m, "", "10.00", withToken)); res.Status != http.StatusOK || res.Str("purchase.status") != "APPROVED" {
		t.Errorf("purchase: got %d %s, want APPROVED", res.Status, res.Raw)
	}
	preview := env.Post("/v5/surcharge", m, map[string]any{"company_token": m.Creds.CompanyToken,
		"card": map[string]any{"token": token, "expiry_month": "12", "expiry_year": "31"}, "amount": "10.00", "currency": "AUD"})
	if preview.Status != http.StatusOK {
		t.Errorf("surcharge preview: got %d %s, want 200", preview.Status, preview.Raw)
	}
	both := env.Post("/v5/purchase", m, env.CardPurchase(m, "", "10.00", func(b map[string]any) {
		b["card"] = map[string]any{"token": token, "number": "4111111111111111", "expiry_month": "12", "expiry_year": "31"}
	}))
	expectError(t, both, http.StatusBadRequest, paylink.CodeInvalidRequest)
}

// TestSealedCardNumbersOpenOnlyWhereTheyWereSealed: a sealed card number
// copied by someone who can write to the database, but has no master key,
// into another merchant's idempotency answer or card opens in neither
// (security review: the replay of the idempotency key answered the other
// merchant's card number in clear, and a card row given another card's
// sealed number would have charged that number). Each copy is refused as
// the server's failure to open it, with no card number in the answer.
func TestSealedCardNumbersOpenOnlyWhereTheyWereSealed(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	victim, attacker := env.Onboard(), env.Onboard()
	const pan = "5555555555554444"
	victimCard := tokenize(env, victim, pan, withPermission("store_card_permission")).Str("card.token")
	attackerCard := tokenize(env, attacker, "4111111111111111", withPermission("store_card_permission")).Str("card.token")
	if victimCard == "" || attackerCard == "" {
		t.Fatal("tokenize: no card token")
	}
	body := []byte(`{"company_token":"` + attacker.Creds.CompanyToken + `"}`)
	if res, raw := postKeyTo(t, env, attacker, "/v5/transaction_token", "k1", body); res.StatusCode != http.StatusOK {
		t.Fatalf("first request: got %d %s, want a 200 kept under the key", res.StatusCode, raw)
	}
	db := env.WriterDB(t)
	for _, q := range []string{
		`UPDATE idempotency_keys SET response = (SELECT pan_sealed FROM cards WHERE token = $1),
			response_key_id = (SELECT key_id FROM cards WHERE token = $1) WHERE merchant_id = $2 AND key = 'k1'`,
		`UPDATE cards SET pan_sealed = (SELECT pan_sealed FROM cards WHERE token = $1) WHERE merchant_id = $2`,
	} {
		if res, err := db.Exec(q, victimCard, attacker.ID); err != nil {
			t.Fatal(err)
		} else if n, _ := res.RowsAffected(); n != 1 {
			t.Fatalf("%s: changed %d rows, want 1: the test would check nothing", q, n)
		}
	}
	res, raw := postKeyTo(t, env, attacker, "/v5/transaction_token", "k1", body)
	if res.StatusCode != http.StatusInternalServerError || strings.Contains(raw, pan) {
		t.Errorf("replay of a stored answer holding another merchant's sealed card number: got %d %s, want 500 without it", res.StatusCode, raw)
	}
	if r := payWithToken(env, attacker, attackerCard); r.Status != http.StatusInternalServerError || strings.Contains(r.Raw, pan[12:]) {
		t.Errorf("purchase with a card holding another merchant's sealed number: got %d %s, want 500 and nothing charged", r.Status, r.Raw)
	}
}
