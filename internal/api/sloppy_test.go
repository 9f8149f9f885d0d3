package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"testing"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
	"github.com/paylink/paylink/internal/processor"
)

// sloppyCase is one endpoint called by a client that sends every key it
// knows: send posts a minimal valid request after fill has added the
// optional keys (fill adds nothing for the minimal request).
type sloppyCase struct {
	route    string // the routes.go pattern it covers; "" for a second case of a route
	optional []string
	send     func(t *testing.T, fill func(map[string]any)) apitest.Response
}

// customerKeys are the optional keys of the customer object of purchase,
// direct debit and refund requests, aliases included.
var customerKeys = []string{"customer.id", "customer.reference", "customer.customer_reference", "customer.email",
	"customer.customer_email", "customer.first_name", "customer.last_name", "customer.phone", "customer.user_agent",
	"customer.accepted_terms_conditions", "customer.accepted_terms_and_conditions"}

// cardDetailKeys are the card-detail keys sent beside a card token.
var cardDetailKeys = []string{"card.number", "card.expiry_month", "card.expiry_year", "card.cvc", "card.holder_name"}

var metadataKeys = []string{"metadata.channel", "metadata.merchant_hash"}

// TestEmptyOptionalKeysAreAbsent replays, for every /v5 POST route (and a
// card-token purchase and surcharge), a minimal valid request, then the
// same request with every optional key present and "" and again with
// every optional key null, and wants the same answer each time.
func TestEmptyOptionalKeysAreAbsent(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	company := m.Creds.CompanyToken
	year := env.Clock.Now().Year()%100 + 3
	cardBody := func(number string) map[string]any {
		return map[string]any{"number": number, "expiry_month": "12", "expiry_year": year}
	}
	purchaseBody := func(card map[string]any, amount string) map[string]any {
		return map[string]any{
			"token":    map[string]any{"company_token": company, "transaction_token": env.TransactionToken(m)},
			"customer": map[string]any{"ip_address": "203.0.113.7", "timezone": "UTC"},
			"card":     card,
			"purchase": map[string]any{"amount": amount, "currency": "AUD"},
		}
	}
	post := func(path string, b map[string]any, fill func(map[string]any)) apitest.Response {
		fill(b)
		return env.Post(path, m, b)
	}
	ok := func(t *testing.T, r apitest.Response, path, want string) string {
		t.Helper()
		if r.Status != http.StatusOK {
			t.Fatalf("setup: got %d %s", r.Status, r.Raw)
		}
		if got := r.Str(path); got == "" || (want != "" && got != want) {
			t.Fatalf("setup: got %s, want %s %s", r.Raw, path, want)
		}
		return r.Str(path)
	}
	cardToken := func(t *testing.T) string {
		r := env.Post("/v5/tokenize_card", m, map[string]any{"company_token": company, "card": cardBody(visa),
			"customer": map[string]any{"store_card_permisison": true}})
		return ok(t, r, "card.token", "")
	}
	purchased := func(t *testing.T, hold bool) string {
		b := purchaseBody(cardBody(visa), "10.00")
		apitest.Set(b, "purchase.should_service_apply_pre_authorisation", hold)
		return ok(t, env.Post("/v5/purchase", m, b), "purchase.purchase_reference", "")
	}
	tokens := func() map[string]any {
		return map[string]any{"company_token": company, "transaction_token": env.TransactionToken(m)}
	}
	debitBody := func() map[string]any {
		return map[string]any{
			"token":        tokens(),
			"bank_account": map[string]any{"number": testAccount, "holder_name": "Jo Citizen", "bsb": "062-000"},
			"customer":     map[string]any{"ip_address": "203.0.113.7", "timezone": "UTC"},
			"purchase":     map[string]any{"amount": "10", "currency": "AUD"},
		}
	}
	refundBody := func() map[string]any {
		return map[string]any{"token": tokens(), "customer": map[string]any{"ip_address": "203.0.113.7", "timezone": "UTC"},
			"refund": map[string]any{"amount": "4", "currency": "AUD"}}
	}
	link := func(t *testing.T) string {
		r := env.Post("/v5/payment-links", m, map[string]any{"amount": "5", "currency": "AUD", "merchantReference": "L-1"})
		return ok(t, r, "id", "")
	}
	purchaseOptional := append(append([]string{"token.company", "customer.should_service_apply_authentication",
		"customer.authentication_redirect_url", "customer.store_card_permission", "customer.store_card_permisison",
		"card.cvc", "card.holder_name", "card.token", "purchase.invoice_number", "purchase.should_service_apply_surcharge",
		"purchase.should_service_apply_pre_authorisation"}, customerKeys...), metadataKeys...)
	cases := []sloppyCase{
		{route: "POST /v5/transaction_token", optional: []string{"token.company_token"},
			send: func(t *testing.T, fill func(map[string]any)) apitest.Response {
				return post("/v5/transaction_token", map[string]any{"company_token": company}, fill)
			}},
		{route: "POST /v5/purchase", optional: purchaseOptional,
			send: func(t *testing.T, fill func(map[string]any)) apitest.Response {
				return post("/v5/purchase", purchaseBody(cardBody(visa), "10.00"), fill)
			}},
		{optional: append(append([]string{}, cardDetailKeys...), customerKeys...),
			send: func(t *testing.T, fill func(map[string]any)) apitest.Response {
				return post("/v5/purchase", purchaseBody(map[string]any{"token": cardToken(t)}, "10.00"), fill)
			}},
		{route: "POST /v5/surcharge", optional: []string{"card.cvc", "card.holder_name", "card.token",
			"token.company_token", "company_token"},
			send: func(t *testing.T, fill func(map[string]any)) apitest.Response {
				return post("/v5/surcharge", map[string]any{"token": map[string]any{"company": company},
					"card": cardBody(visa), "amount": "100", "currency": "AUD"}, fill)
			}},
		{optional: cardDetailKeys,
			send: func(t *testing.T, fill func(map[string]any)) apitest.Response {
				return post("/v5/surcharge", map[string]any{"token": map[string]any{"company": company},
					"card": map[string]any{"token": cardToken(t)}, "amount": "100", "currency": "AUD"}, fill)
			}},
		{route: "POST /v5/purchase/{ref}", optional: []string{"token.company_token"},
			send: func(t *testing.T, fill func(map[string]any)) apitest.Response {
				return post("/v5/purchase/"+purchased(t, false), map[string]any{"company_token": company}, fill)
			}},
		{route: "POST /v5/purchase/{ref}/capture", optional: append([]string{"capture.should_service_apply_surcharge"}, metadataKeys...),
			send: func(t *testing.T, fill func(map[string]any)) apitest.Response {
				b := map[string]any{"token": tokens(), "capture": map[string]any{"amount": "7", "currency": "AUD"}}
				return post("/v5/purchase/"+purchased(t, true)+"/capture", b, fill)
			}},
		{route: "POST /v5/purchase/{ref}/cancel", optional: metadataKeys,
			send: func(t *testing.T, fill func(map[string]any)) apitest.Response {
				return post("/v5/purchase/"+purchased(t, true)+"/cancel", map[string]any{"token": tokens()}, fill)
			}},
		{route: "POST /v5/purchase/{ref}/refund", optional: append(append([]string{"refund.invoice_number"}, customerKeys...), metadataKeys...),
			send: func(t *testing.T, fill func(map[string]any)) apitest.Response {
				return post("/v5/purchase/"+purchased(t, false)+"/refund", refundBody(), fill)
			}},
		{route: "POST /v5/purchase/{ref}/3dsredirect", optional: []string{"token.company_token"},
			send: func(t *testing.T, fill func(map[string]any)) apitest.Response {
				b := purchaseBody(cardBody(processor.CardThreeDSChallenge), "10.00")
				apitest.Set(b, "customer.should_service_apply_authentication", true)
				apitest.Set(b, "customer.authentication_redirect_url", returnURL)
				ref := ok(t, env.Post("/v5/purchase", m, b), "purchase.purchase_reference", "")
				env.Clock.Advance(paylink.ChallengeTTL) // abandoned: the answer is DECLINED
				return post("/v5/purchase/"+ref+"/3dsredirect", map[string]any{"company_token": company}, fill)
			}},
		{route: "POST /v5/refund/{ref}", optional: []string{"token.company_token"},
			send: func(t *testing.T, fill func(map[string]any)) apitest.Response {
				ref := purchased(t, false)
				ok(t, env.Post("/v5/purchase/"+ref+"/refund", m, refundBody()), "refund.refund_reference", "")
				return post("/v5/refund/"+ref, map[string]any{"company_token": company}, fill)
			}},
		{route: "POST /v5/tokenize_card", optional: []string{"token.company_token", "card.cvc", "card.holder_name", "card.token",
			"customer.id", "customer.store_card_permisison", "customer.store_card_permission"},
			send: func(t *testing.T, fill func(map[string]any)) apitest.Response {
				return post("/v5/tokenize_card", map[string]any{"company_token": company, "card": cardBody(visa)}, fill)
			}},
		{route: "POST /v5/card", optional: []string{"token.company_token", "card.token"},
			send: func(t *testing.T, fill func(map[string]any)) apitest.Response {
				return post("/v5/card", map[string]any{"company_token": company, "card_token": cardToken(t)}, fill)
			}},
		{route: "POST /v5/invalidate_card_token", optional: []string{"token.company_token", "card.token"},
			send: func(t *testing.T, fill func(map[string]any)) apitest.Response {
				return post("/v5/invalidate_card_token", map[string]any{"company_token": company, "card_token": cardToken(t)}, fill)
			}},
		{route: "POST /v5/invalidate_card", optional: []string{"token.company_token", "card.token"},
			send: func(t *testing.T, fill func(map[string]any)) apitest.Response {
				return post("/v5/invalidate_card", map[string]any{"company_token": company, "card_token": cardToken(t)}, fill)
			}},
		{route: "POST /v5/direct_debit_fee", optional: []string{"company_token", "token.company"},
			send: func(t *testing.T, fill func(map[string]any)) apitest.Response {
				return post("/v5/direct_debit_fee", map[string]any{"token": map[string]any{"company_token": company},
					"purchase": map[string]any{"amount": "10", "currency": "AUD"}}, fill)
			}},
		{route: "POST /v5/direct_debit", optional: append(append([]string{"purchase.invoice_number", "purchase.should_service_apply_fee",
			"purchase.should_service_apply_pre_authorisation"}, customerKeys...), metadataKeys...),
			send: func(t *testing.T, fill func(map[string]any)) apitest.Response {
				return post("/v5/direct_debit", debitBody(), fill)
			}},
		{route: "POST /v5/direct_debit/{ref}/refund", optional: append(append([]string{"refund.invoice_number"}, customerKeys...), metadataKeys...),
			send: func(t *testing.T, fill func(map[string]any)) apitest.Response {
				ref := ok(t, env.Post("/v5/direct_debit", m, debitBody()), "purchase.purchase_reference", "")
				clearAll(t, env)
				return post("/v5/direct_debit/"+ref+"/refund", refundBody(), fill)
			}},
		{route: "POST /v5/payment-links", optional: []string{"company_token", "token.company_token", "merchant_reference",
			"webhook_url", "expires_at", "should_service_apply_surcharge", "customer.reference", "customer.customer_reference",
			"customer.email", "customer.customer_email", "customer.first_name", "customer.last_name", "customer.phone",
			"customer.address", "customer.address2", "customer.city", "customer.state", "customer.postcode", "customer.country_code"},
			send: func(t *testing.T, fill func(map[string]any)) apitest.Response {
				r := post("/v5/payment-links", map[string]any{"amount": "5", "currency": "AUD", "merchantReference": "L-1"}, fill)
				if l, _, err := env.Service.Link(context.Background(), m.Merchant, r.Str("id")); err == nil {
					r.Body["stored_apply_surcharge"] = l.ApplySurcharge // not in the response, decided by the request
				}
				return r
			}},
		{route: "POST /v5/payment-links/{id}", optional: []string{"company_token", "token.company_token"},
			send: func(t *testing.T, fill func(map[string]any)) apitest.Response {
				return post("/v5/payment-links/"+link(t), map[string]any{}, fill)
			}},
		{route: "POST /v5/payment-links/{id}/cancel", optional: []string{"company_token", "token.company_token"},
			send: func(t *testing.T, fill func(map[string]any)) apitest.Response {
				return post("/v5/payment-links/"+link(t)+"/cancel", map[string]any{}, fill)
			}},
	}
	covered := map[string]bool{}
	for _, tc := range cases {
		covered[tc.route] = true
	}
	for route := range registeredRoutes(t) {
		if strings.HasPrefix(route, "POST /v5/") && !covered[route] {
			t.Errorf("%s has no case in this table", route)
		}
	}
	route := ""
	for i, tc := range cases {
		if tc.route != "" {
			route = tc.route
		}
		t.Run(fmt.Sprintf("%d %s", i, route), func(t *testing.T) {
			minimal := tc.send(t, func(map[string]any) {})
			if minimal.Status != http.StatusOK {
				t.Fatalf("minimal request: got %d %s, want 200", minimal.Status, minimal.Raw)
			}
			want := comparable(minimal.Body)
			for name, filler := range map[string]any{`""`: "", "null": nil} {
				got := tc.send(t, func(b map[string]any) {
					for _, k := range tc.optional {
						apitest.Set(b, k, filler)
					}
				})
				if got.Status != minimal.Status || !maps.Equal(comparable(got.Body), want) {
					t.Errorf("optional keys %s: got %d %s, want %d %s", name, got.Status, got.Raw, minimal.Status, minimal.Raw)
				}
			}
		})
	}
}

// volatileKeys differ between two runs of the same request: references,
// tokens, ids, addresses built from them and times.
var volatileKeys = map[string]bool{"purchase_reference": true, "refund_reference": true, "transaction_token": true,
	"token": true, "card_token": true, "id": true, "url": true, "virtual_terminal_url": true, "transaction_time_utc": true,
	"created_timestamp_utc": true, "created_at": true, "expires_at": true}

// comparable flattens a response to dotted paths with the volatile values
// replaced by whether they were set.
func comparable(body map[string]any) map[string]string {
	out := map[string]string{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		obj, isObj := v.(map[string]any)
		if !isObj {
			raw, _ := json.Marshal(v)
			key := prefix[strings.LastIndex(prefix, ".")+1:]
			if s, isStr := v.(string); volatileKeys[key] && isStr && s != "" {
				raw = []byte("<set>")
			}
			out[prefix] = string(raw)
			return
		}
		for k, x := range obj {
			walk(strings.TrimPrefix(prefix+"."+k, "."), x)
		}
	}
	walk("", body)
	return out
}

// TestByteOrderMarkIsIgnored: a body some tool wrote with a UTF-8 byte
// order mark before the JSON is read as the JSON.
func TestByteOrderMarkIsIgnored(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	res := env.Post("/v5/transaction_token", m, "\ufeff"+`{"company_token":"`+m.Creds.CompanyToken+`"}`)
	if res.Status != http.StatusOK || res.Get("transaction_token") == "" {
		t.Errorf("got %d %s, want 200 with a token", res.Status, res.Raw)
	}
}

// TestPaddedReferencesInPathsAreTrimmed: an invoice number is stored
// trimmed, so a look-up, capture or refund by the padded value the client
// sent (and may keep, from a fixed-width column) finds the payment.
func TestPaddedReferencesInPathsAreTrimmed(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	buy := env.Post("/v5/purchase", m, env.CardPurchase(m, "4111111111111111", "12.00", func(b map[string]any) {
		apitest.Set(b, "purchase.invoice_number", "  INV 7  ")
	}))
	if buy.Status != http.StatusOK {
		t.Fatalf("purchase: %d %s", buy.Status, buy.Raw)
	}
	for _, path := range []string{"/v5/purchase/INV%207%20%20", "/v5/purchase/%20%20INV%207"} {
		if res := env.Do(http.MethodGet, path, m, nil); res.Status != http.StatusOK || res.Get("invoice_number") != "INV 7" {
			t.Errorf("GET %s: got %d %s, want the payment", path, res.Status, res.Raw)
		}
	}
}

// TestMoneyFlagsAreNeverIgnored: a hold asked for in camelCase or with
// the US spelling holds, and a money flag sent outside its object is
// refused, naming the key as sent, where it used to be ignored as an
// unknown key and the card charged in full. placement_test.go has every
// flag of every endpoint out of place, as JSON and as a form.
func TestMoneyFlagsAreNeverIgnored(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	for name, set := range map[string]func(map[string]any){
		"camelCase":   func(b map[string]any) { apitest.Set(b, "purchase.shouldServiceApplyPreAuthorisation", true) },
		"US spelling": func(b map[string]any) { apitest.Set(b, "purchase.should_service_apply_pre_authorization", true) },
		"PascalCase":  func(b map[string]any) { apitest.Set(b, "purchase.ShouldServiceApplyPreAuthorisation", "true") },
	} {
		res := env.Post("/v5/purchase", m, env.CardPurchase(m, "4111111111111111", "12.00", set))
		if res.Status != http.StatusOK || res.Get("purchase.status") != "PRE_AUTHORISED" {
			t.Errorf("%s: got %d %s, want a hold", name, res.Status, res.Raw)
		}
	}
	for name, c := range map[string]struct {
		path, field string
	}{
		"pre-auth at the top":     {"should_service_apply_pre_authorisation", "should_service_apply_pre_authorisation"},
		"pre-auth in customer":    {"customer.should_service_apply_pre_authorisation", "customer.should_service_apply_pre_authorisation"},
		"surcharge at the top":    {"shouldServiceApplySurcharge", "shouldServiceApplySurcharge"}, // named as sent
		"US pre-auth in customer": {"customer.should_service_apply_pre_authorization", "customer.should_service_apply_pre_authorization"},
		"pre-auth in card":        {"card.should_service_apply_pre_authorisation", "card.should_service_apply_pre_authorisation"},
	} {
		res := env.Post("/v5/purchase", m, env.CardPurchase(m, "4111111111111111", "12.00", func(b map[string]any) {
			apitest.Set(b, c.path, true)
		}))
		fields, _ := res.Body["fields"].(map[string]any)
		if res.Status != http.StatusBadRequest || fields[c.field] == nil {
			t.Errorf("%s: got %d %s, want 400 naming %s", name, res.Status, res.Raw, c.field)
		}
	}
}

// TestTokensAreReadUnderEveryName: the company and transaction tokens
// are read flat or in token on every endpoint, as the token endpoint and
// the card calls always read them.
func TestTokensAreReadUnderEveryName(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	hold := env.Post("/v5/purchase", m, env.CardPurchase(m, "4111111111111111", "12.00", func(b map[string]any) {
		apitest.Set(b, "purchase.should_service_apply_pre_authorisation", true)
		delete(b, "token")
		b["company_token"], b["transaction_token"] = m.Creds.CompanyToken, env.TransactionToken(m)
	}))
	ref, _ := hold.Get("purchase.purchase_reference").(string)
	if hold.Status != http.StatusOK || ref == "" {
		t.Fatalf("purchase with flat tokens: got %d %s", hold.Status, hold.Raw)
	}
	res := env.Post("/v5/purchase/"+ref+"/cancel", m, map[string]any{
		"company_token": m.Creds.CompanyToken, "transaction_token": env.TransactionToken(m),
		"customer": map[string]any{"ip_address": "203.0.113.7", "timezone": "UTC"},
	})
	if res.Status != http.StatusOK || res.Get("purchase.status") != "PRE_AUTHORISED_REVERSED" {
		t.Errorf("cancel with flat tokens: got %d %s", res.Status, res.Raw)
	}
}

// TestCompanyTokensThatDisagreeAreRefused: a company token sent under two
// names with different values is a 400 naming the other field, on a
// money call and on a link call; the same token twice is fine.
func TestCompanyTokensThatDisagreeAreRefused(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	link := env.Post("/v5/payment-links", m, map[string]any{"amount": "5", "currency": "AUD", "merchantReference": "R-9"})
	twice := func(second string) func(map[string]any) {
		return func(b map[string]any) { b["company_token"] = second }
	}
	bad := env.Post("/v5/purchase", m, env.CardPurchase(m, "4111111111111111", "12.00", twice("not-the-company-token")))
	if fields, _ := bad.Get("fields").(map[string]any); bad.Status != http.StatusBadRequest || fields["company_token"] == nil {
		t.Errorf("purchase with two different company tokens: got %d %s, want 400 naming company_token", bad.Status, bad.Raw)
	}
	if ok := env.Post("/v5/purchase", m, env.CardPurchase(m, "4111111111111111", "12.00", twice(m.Creds.CompanyToken))); ok.Status != http.StatusOK {
		t.Errorf("purchase with the same company token twice: got %d %s, want 200", ok.Status, ok.Raw)
	}
	lookup := env.Post("/v5/payment-links/"+link.Str("id"), m, map[string]any{"company_token": m.Creds.CompanyToken,
		"token": map[string]any{"company": "not-the-company-token"}})
	if lookup.Status != http.StatusBadRequest {
		t.Errorf("link look-up with two different company tokens: got %d %s, want 400", lookup.Status, lookup.Raw)
	}
}

// TestSpellingsThatDisagreeAreRefused: one key sent under two spellings
// with two values is a 400 naming the other spelling, never a silent
// choice of either amount; the same value twice, or an empty alias, is
// fine.
func TestSpellingsThatDisagreeAreRefused(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	for name, c := range map[string]struct {
		set    func(map[string]any)
		status int
		field  string
	}{
		"spec spelling and PascalCase": {func(b map[string]any) { apitest.Set(b, "purchase.Amount", "1200.00") },
			http.StatusBadRequest, "purchase.Amount"},
		"two aliases": {func(b map[string]any) {
			apitest.Set(b, "customer.IPAddress", "203.0.113.8")
			apitest.Set(b, "customer.ipAddress", "203.0.113.9")
			delete(b["customer"].(map[string]any), "ip_address")
		}, http.StatusBadRequest, "customer.I"},
		"a flag both ways": {func(b map[string]any) {
			apitest.Set(b, "purchase.shouldServiceApplyPreAuthorisation", true)
			apitest.Set(b, "purchase.ShouldServiceApplyPreAuthorisation", false)
		}, http.StatusBadRequest, "purchase."},
		"the same value twice": {func(b map[string]any) { apitest.Set(b, "purchase.AMOUNT", "12.00") }, http.StatusOK, ""},
		"an empty alias":       {func(b map[string]any) { apitest.Set(b, "purchase.Amount", "") }, http.StatusOK, ""},
	} {
		res := env.Post("/v5/purchase", m, env.CardPurchase(m, "4111111111111111", "12.00", c.set))
		if res.Status != c.status {
			t.Errorf("%s: got %d %s, want %d", name, res.Status, res.Raw, c.status)
			continue
		}
		if c.status == http.StatusOK {
			if got := fmt.Sprint(res.Get("purchase.amount")); got != "12" && got != "12.00" {
				t.Errorf("%s: charged %v, want 12.00", name, got)
			}
			continue
		}
		fields, _ := res.Body["fields"].(map[string]any)
		named := false
		for f := range fields {
			named = named || strings.HasPrefix(f, c.field)
		}
		if !named || !strings.Contains(res.Raw, "differs from the value sent as") {
			t.Errorf("%s: got %s, want a field error on %s...", name, res.Raw, c.field)
		}
	}
}

// TestAliasesThatDisagreeAreRefused: a key the API reads under several
// names (the spec's spelling beside the correct one, a nested name beside
// a flat one) sent under two of them with two values is a 400 naming the
// second, on every endpoint, never the first name's value: read either
// way, a hold would be a charge in full, or a single-use card a stored
// one. The same value under both is read once (for a flag, true and 1
// are one value).
func TestAliasesThatDisagreeAreRefused(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	stored := tokenize(env, m, "4111111111111111", withPermission("store_card_permission")).Str("card.token")
	purchase := func(set func(map[string]any)) apitest.Response {
		return env.Post("/v5/purchase", m, env.CardPurchase(m, "4111111111111111", "12.00", set))
	}
	for name, c := range map[string]struct {
		send  func() apitest.Response
		field string
	}{
		"a hold both ways": {func() apitest.Response {
			return purchase(func(b map[string]any) {
				apitest.Set(b, "purchase.should_service_apply_pre_authorisation", true)
				apitest.Set(b, "purchase.should_service_apply_pre_authorization", false)
			})
		}, "purchase.should_service_apply_pre_authorization"},
		"storing the card both ways, purchase": {func() apitest.Response {
			return purchase(func(b map[string]any) {
				apitest.Set(b, "customer.store_card_permission", true)
				apitest.Set(b, "customer.store_card_permisison", false)
			})
		}, "customer.store_card_permisison"},
		"storing the card both ways, tokenisation": {func() apitest.Response {
			return tokenize(env, m, "4111111111111111", func(b map[string]any) {
				apitest.Set(b, "customer.store_card_permission", true)
				apitest.Set(b, "customer.store_card_permisison", false)
			})
		}, "customer.store_card_permission"},
		"two customer references": {func() apitest.Response {
			return purchase(func(b map[string]any) {
				apitest.Set(b, "customer.reference", "CUST-1")
				apitest.Set(b, "customer.customer_reference", "CUST-2")
			})
		}, "customer.customer_reference"},
		"two card tokens": {func() apitest.Response {
			return env.Post("/v5/card", m, map[string]any{"company_token": m.Creds.CompanyToken,
				"card_token": stored, "card": map[string]any{"token": strings.Repeat("x", paylink.TokenLength)}})
		}, "card.token"},
	} {
		r := c.send()
		fields, _ := r.Body["fields"].(map[string]any)
		if r.Status != http.StatusBadRequest || fields[c.field] == nil || !strings.Contains(r.Raw, "differs from the value sent as") {
			t.Errorf("%s: got %d %s, want 400 naming %s", name, r.Status, r.Raw, c.field)
		}
	}
	for _, same := range []any{"true", 1, " YES "} { // one flag, as the lenient rules read it
		held := purchase(func(b map[string]any) {
			apitest.Set(b, "purchase.should_service_apply_pre_authorisation", true)
			apitest.Set(b, "purchase.should_service_apply_pre_authorization", same)
		})
		if held.Status != http.StatusOK || held.Str("purchase.status") != "PRE_AUTHORISED" {
			t.Errorf("a hold under both names, true and %q: got %d %s, want PRE_AUTHORISED", same, held.Status, held.Raw)
		}
	}
	if r := env.Post("/v5/card", m, map[string]any{"company_token": m.Creds.CompanyToken, "card_token": stored,
		"card": map[string]any{"token": stored}}); r.Status != http.StatusOK {
		t.Errorf("one card token under both names: got %d %s, want 200", r.Status, r.Raw)
	}
}

// TestDuplicateKeysThatDisagreeAreRefused: a key sent twice with two
// values is 400 naming it (a proxy reading the first would see another
// amount); twice with one value, or with an empty one, is read once.
func TestDuplicateKeysThatDisagreeAreRefused(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	send := func(amounts string) apitest.Response {
		b, err := json.Marshal(env.CardPurchase(m, "4111111111111111", "12.00"))
		if err != nil {
			t.Fatal(err)
		}
		raw := strings.Replace(string(b), `"amount":12.00`, amounts, 1)
		if raw == string(b) {
			t.Fatalf("no amount to duplicate in %s", b)
		}
		return env.Post("/v5/purchase", m, json.RawMessage(raw))
	}
	if r := send(`"amount":"12.00","amount":"1200.00"`); r.Status != http.StatusBadRequest || !strings.Contains(r.Raw, "purchase.amount") {
		t.Errorf("two amounts: got %d %s, want 400 naming purchase.amount", r.Status, r.Raw)
	}
	for _, same := range []string{`"amount":"12.00","amount":12.00`, `"amount":null,"amount":"12.00"`} {
		if r := send(same); r.Status != http.StatusOK || r.Str("purchase.status") != "APPROVED" {
			t.Errorf("%s: got %d %s, want it read once", same, r.Status, r.Raw)
		}
	}
}

// TestAnEmptyDuplicateHidesNothing: an empty member is as if not sent, so
// one sent beside a value, under the same spelling or another, never
// hides it: a hold asked for next to a null is a hold (it used to be
// charged in full), and a link's reference next to a null is kept.
func TestAnEmptyDuplicateHidesNothing(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	for name, flags := range map[string]string{
		"true, then null":                 `"should_service_apply_pre_authorisation":true,"should_service_apply_pre_authorisation":null`,
		"true, then blank":                `"should_service_apply_pre_authorisation":true,"should_service_apply_pre_authorisation":" "`,
		"null, then camelCase true":       `"should_service_apply_pre_authorisation":null,"shouldServiceApplyPreAuthorisation":true`,
		"camelCase true, then snake \"\"": `"shouldServiceApplyPreAuthorisation":true,"should_service_apply_pre_authorisation":""`,
	} {
		raw, _ := json.Marshal(env.CardPurchase(m, "4111111111111111", "10.00"))
		res := env.Post("/v5/purchase", m, strings.Replace(string(raw), `"currency":"AUD"`, `"currency":"AUD",`+flags, 1))
		if res.Status != http.StatusOK || res.Get("purchase.status") != "PRE_AUTHORISED" {
			t.Errorf("%s: got %d %s, want a hold", name, res.Status, res.Raw)
		}
	}
	link := env.Post("/v5/payment-links", m, `{"amount":"5","currency":"AUD","merchantReference":"L-3","merchantReference":null,"merchant_reference":""}`)
	if link.Status != http.StatusOK || link.Str("merchantReference") != "L-3" {
		t.Errorf("link with its reference beside empty ones: got %d %s", link.Status, link.Raw)
	}
}

// TestNothingMayFollowTheBody: bytes after the JSON object are refused,
// a stray "}" or "]" too (encoding/json's More let those, and anything
// after them, pass): a proxy that reads the body otherwise would see
// another request than paylink.
func TestNothingMayFollowTheBody(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	raw, _ := json.Marshal(env.CardPurchase(m, "4111111111111111", "10.00"))
	for _, tail := range []string{" xyz", "}", `] {"purchase":{"amount":"999.00"}}`} {
		expectError(t, env.Post("/v5/purchase", m, string(raw)+tail), http.StatusBadRequest, paylink.CodeMalformedJSON)
	}
	if res := env.Post("/v5/purchase", m, string(raw)+" \r\n\t"); res.Status != http.StatusOK {
		t.Errorf("body with white space after it: got %d %s, want 200", res.Status, res.Raw)
	}
}

// TestACasedKeyTwiceWithTwoValues: a camelCase or PascalCase key repeated
// with two values is refused as a snake_case one is ("sent twice with
// different values"), never read as the last: a proxy that reads the
// first would see another amount, or a hold where paylink charged in
// full. The same value twice is read once.
func TestACasedKeyTwiceWithTwoValues(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	raw, _ := json.Marshal(env.CardPurchase(m, "4111111111111111", "12.00"))
	body := func(members string) string {
		return strings.Replace(string(raw), `"amount":12.00`, members, 1)
	}
	for _, members := range []string{
		`"Amount":"12.00","Amount":"1200.00"`,
		`"amount":12.00,"shouldServiceApplyPreAuthorisation":true,"shouldServiceApplyPreAuthorisation":false`,
	} {
		res := env.Post("/v5/purchase", m, body(members))
		if res.Status != http.StatusBadRequest || !strings.Contains(res.Raw, "sent twice with different values") {
			t.Errorf("%s: got %d %s, want 400 sent twice with different values", members, res.Status, res.Raw)
		}
	}
	if res := env.Post("/v5/purchase", m, body(`"Amount":"12.00","Amount":12.00`)); res.Status != http.StatusOK || res.Str("purchase.status") != "APPROVED" {
		t.Errorf("the same amount twice: got %d %s, want it read once", res.Status, res.Raw)
	}
}
