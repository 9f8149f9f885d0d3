package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/paylink/paylink/internal/apitest"
)

// formOf spells a JSON request body as the form a PHP or Stripe-style
// client posts: nested objects as bracketed keys, every value a string.
// A key holding a dot stays one key, as such a client sends it.
func formOf(b map[string]any) string {
	v := url.Values{}
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, x := range m {
			key := k
			if prefix != "" {
				key = prefix + "[" + k + "]"
			}
			if sub, ok := x.(map[string]any); ok {
				walk(key, sub)
				continue
			}
			v.Set(key, fmt.Sprint(x))
		}
	}
	walk("", b)
	return v.Encode()
}

// misplacedCase is one request that must be refused: body builds it
// afresh (each needs its own transaction token), field is the path the
// 400 must name and want a piece of its problem.
type misplacedCase struct {
	name, path  string
	body        func() map[string]any
	field, want string
}

// wantRefused posts each case as JSON and as a form and wants 400
// invalid_request naming the field as sent.
func wantRefused(t *testing.T, env *apitest.Env, m *apitest.Merchant, cases []misplacedCase) {
	t.Helper()
	for _, c := range cases {
		res := env.Post(c.path, m, c.body())
		if res.Status != http.StatusBadRequest || res.Str("response_code") != "invalid_request" || !strings.Contains(fieldProblem(res, c.field), c.want) {
			t.Errorf("%s (JSON): got %d %s, want 400 naming %s (%q)", c.name, res.Status, res.Raw, c.field, c.want)
		}
		status, raw := postForm(t, env, m, c.path, formOf(c.body()))
		var got apitest.Response
		_ = json.Unmarshal([]byte(raw), &got.Body)
		if status != http.StatusBadRequest || !strings.Contains(fieldProblem(got, c.field), c.want) {
			t.Errorf("%s (form): got %d %s, want 400 naming %s (%q)", c.name, status, raw, c.field, c.want)
		}
	}
}

// TestPurchaseFlagsOutOfPlaceAreRefused: every flag a purchase reads,
// under every spelling, sent anywhere but its one home (or there under a
// spelling the decoder does not read), and every dotted key naming a
// purchase field, is refused: the second verification sweep found a
// pre-authorisation in token or card, a surcharge in token and 3-D
// Secure at the top level or in purchase ignored, and charged in full.
func TestPurchaseFlagsOutOfPlaceAreRefused(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	purchase := func(card string, set func(map[string]any)) func() map[string]any {
		return func() map[string]any { return env.CardPurchase(m, card, "12.00", set) }
	}
	at := func(path string, v any) func() map[string]any {
		return purchase("4111111111111111", func(b map[string]any) { apitest.Set(b, path, v) })
	}
	threeDS := func(path string) func() map[string]any {
		return purchase("4000000000003220", func(b map[string]any) {
			apitest.Set(b, "customer.authentication_redirect_url", "https://shop.example/back")
			apitest.Set(b, path, true)
		})
	}
	dotted := func(key string, v any) func() map[string]any {
		return purchase("4111111111111111", func(b map[string]any) { b[key] = v })
	}
	const belongs = "belongs at "
	wantRefused(t, env, m, []misplacedCase{
		{"US pre-auth in token", "/v5/purchase", at("token.should_service_apply_pre_authorization", true),
			"token.should_service_apply_pre_authorization", belongs + "purchase.should_service_apply_pre_authorisation"},
		{"US pre-auth in card", "/v5/purchase", at("card.should_service_apply_pre_authorization", true),
			"card.should_service_apply_pre_authorization", belongs},
		{"surcharge in token", "/v5/purchase", at("token.should_service_apply_surcharge", true),
			"token.should_service_apply_surcharge", belongs + "purchase.should_service_apply_surcharge"},
		{"camelCase surcharge in card", "/v5/purchase", at("card.shouldServiceApplySurcharge", true),
			"card.shouldServiceApplySurcharge", belongs},
		{"a direct debit's fee", "/v5/purchase", at("purchase.should_service_apply_fee", true),
			"purchase.should_service_apply_fee", "no direct debit fee"},
		{"pre-auth at the top, against purchase's", "/v5/purchase", purchase("4111111111111111", func(b map[string]any) {
			apitest.Set(b, "should_service_apply_pre_authorisation", false)
			apitest.Set(b, "purchase.should_service_apply_pre_authorisation", true)
		}), "should_service_apply_pre_authorisation", belongs},
		{"pre-auth run together in purchase", "/v5/purchase", at("purchase.shouldserviceapplypreauthorisation", true),
			"purchase.shouldserviceapplypreauthorisation", "send it as purchase.should_service_apply_pre_authorisation"},
		{"3-D Secure at the top", "/v5/purchase", threeDS("should_service_apply_authentication"),
			"should_service_apply_authentication", belongs + "customer.should_service_apply_authentication"},
		{"3-D Secure in purchase", "/v5/purchase", threeDS("purchase.should_service_apply_authentication"),
			"purchase.should_service_apply_authentication", belongs},
		{"card permission in purchase", "/v5/purchase", at("purchase.store_card_permission", true),
			"purchase.store_card_permission", belongs + "customer.store_card_permission"},
		{"pre-auth with a trailing space", "/v5/purchase", at("purchase.should_service_apply_pre_authorisation ", true),
			"purchase.should_service_apply_pre_authorisation ", "send it as purchase.should_service_apply_pre_authorisation"},
		{"pre-auth with a leading tab", "/v5/purchase", at("purchase.\tshould_service_apply_pre_authorisation", true),
			"purchase.\tshould_service_apply_pre_authorisation", "send it as purchase.should_service_apply_pre_authorisation"},
		{"surcharge with a zero-width space", "/v5/purchase", at("purchase.should_service_apply_\u200bsurcharge", true),
			"purchase.should_service_apply_\u200bsurcharge", "send it as purchase.should_service_apply_surcharge"},
		{"dotted pre-auth beside purchase", "/v5/purchase", dotted("purchase.should_service_apply_pre_authorisation", true),
			"purchase.should_service_apply_pre_authorisation", "send nested objects"},
		{"dotted surcharge", "/v5/purchase", dotted("purchase.shouldServiceApplySurcharge", true),
			"purchase.shouldServiceApplySurcharge", "send nested objects"},
	})
	// A body written with the spec's dotted names is told why, not that
	// purchase.amount is required.
	flat := map[string]any{
		"token.company_token": m.Creds.CompanyToken, "token.transaction_token": env.TransactionToken(m),
		"customer.ip_address": "203.0.113.7", "customer.timezone": "UTC",
		"card.number": "4111111111111111", "card.expiry_month": "12", "card.expiry_year": "39", "card.cvc": "123",
		"purchase.amount": "10.50", "purchase.currency": "AUD",
	}
	res := env.Post("/v5/purchase", m, flat)
	if p := fieldProblem(res, "purchase.amount"); res.Status != http.StatusBadRequest || !strings.Contains(p, `send nested objects: {"purchase": {"amount": ...}}`) {
		t.Errorf("a body of dotted names: got %d %s, want 400 saying to nest purchase.amount", res.Status, res.Raw)
	}
	// In its home, under the spellings the decoder reads, a flag is read.
	held := env.Post("/v5/purchase", m, env.CardPurchase(m, "4111111111111111", "12.00", func(b map[string]any) {
		b["Purchase"] = b["purchase"]
		delete(b, "purchase")
		apitest.Set(b, "Purchase.shouldServiceApplyPreAuthorization", true)
	}))
	if held.Status != http.StatusOK || held.Get("purchase.status") != "PRE_AUTHORISED" {
		t.Errorf("camelCase US pre-auth in Purchase: got %d %s, want a hold", held.Status, held.Raw)
	}
}

// TestDirectDebitFlagsOutOfPlaceAreRefused: a direct debit's fee or
// pre-authorisation flag in token, card (where the spec's sample
// response puts the account, so clients copy it) or bank_account, under
// either spelling, is refused, where it was read as no fee; metadata
// takes any key, dots included.
func TestDirectDebitFlagsOutOfPlaceAreRefused(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	at := func(path string) func() map[string]any {
		return func() map[string]any {
			return debitBody(env, m, "123456789", "25.50", func(b map[string]any) { apitest.Set(b, path, true) })
		}
	}
	const belongs = "belongs at "
	wantRefused(t, env, m, []misplacedCase{
		{"fee in token", "/v5/direct_debit", at("token.should_service_apply_fee"), "token.should_service_apply_fee",
			belongs + "purchase.should_service_apply_fee"},
		{"fee in card", "/v5/direct_debit", at("card.should_service_apply_fee"), "card.should_service_apply_fee", belongs},
		// Flags a direct debit does not have, asked for.
		{"surcharge", "/v5/direct_debit", at("purchase.should_service_apply_surcharge"), "purchase.should_service_apply_surcharge",
			"this call has no such flag"},
		{"3-D Secure", "/v5/direct_debit", at("customer.should_service_apply_authentication"),
			"customer.should_service_apply_authentication", "no 3-D Secure"},
		{"US pre-auth in bank_account", "/v5/direct_debit", at("bank_account.should_service_apply_pre_authorization"),
			"bank_account.should_service_apply_pre_authorization", belongs + "purchase.should_service_apply_pre_authorisation"},
		{"US pre-auth in token", "/v5/direct_debit", at("token.should_service_apply_pre_authorization"),
			"token.should_service_apply_pre_authorization", belongs},
		{"dotted fee", "/v5/direct_debit", func() map[string]any {
			return debitBody(env, m, "123456789", "25.50", func(b map[string]any) { b["purchase.should_service_apply_fee"] = true })
		}, "purchase.should_service_apply_fee", "send nested objects"},
		{"dotted fee preview", "/v5/direct_debit_fee", func() map[string]any {
			return map[string]any{"token": map[string]any{"company_token": m.Creds.CompanyToken},
				"purchase.amount": "25.50", "purchase.currency": "AUD"}
		}, "purchase.amount", "send nested objects"},
	})
	ok := env.Post("/v5/direct_debit", m, debitBody(env, m, "123456789", "25.50", func(b map[string]any) {
		apitest.Set(b, "metadata.order.id", "O-1")
		b["metadata"].(map[string]any)["should_service_apply_fee"] = "kept as the client's data"
		b["metadata"].(map[string]any)["a.b"] = "x"
	}))
	if ok.Status != http.StatusOK {
		t.Errorf("metadata with dotted and flag-like keys: got %d %s, want 200", ok.Status, ok.Raw)
	}
}

// TestCaptureAndLinkFlagsOutOfPlaceAreRefused: a capture's surcharge
// outside capture, a link's surcharge opt-out outside the top level
// (links surcharge by default: ignored, it overcharges), a link's
// merchant reference run together (it was told "merchantReference: is
// required"), a flag's key carrying a stray blank or invisible character
// (the twenty-fifth stop's sloppy-client sweep: ignored, so a link
// meant not to surcharge did), and a tokenisation's permission outside customer (or as
// card.multi_use) are refused.
func TestCaptureAndLinkFlagsOutOfPlaceAreRefused(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	ref := hold(t, env, m, "20.00")
	captureWith := func(path string) func() map[string]any {
		return func() map[string]any {
			b := map[string]any{
				"token":   map[string]any{"company_token": m.Creds.CompanyToken, "transaction_token": env.TransactionToken(m)},
				"capture": map[string]any{"amount": "20.00", "currency": "AUD"},
			}
			apitest.Set(b, path, true)
			return b
		}
	}
	link := func(set func(map[string]any)) func() map[string]any {
		return func() map[string]any {
			b := map[string]any{"amount": "5.00", "currency": "AUD", "merchantReference": "R-1"}
			set(b)
			return b
		}
	}
	tokenizeWith := func(set func(map[string]any)) func() map[string]any {
		return func() map[string]any {
			b := map[string]any{"company_token": m.Creds.CompanyToken,
				"card": map[string]any{"number": "4111111111111111", "expiry_month": "07", "expiry_year": "39", "cvc": "123", "holder_name": "Jo"}}
			set(b)
			return b
		}
	}
	const belongs = "belongs at "
	wantRefused(t, env, m, []misplacedCase{
		{"capture surcharge at the top", "/v5/purchase/" + ref + "/capture", captureWith("should_service_apply_surcharge"),
			"should_service_apply_surcharge", belongs + "capture.should_service_apply_surcharge"},
		{"capture surcharge in purchase", "/v5/purchase/" + ref + "/capture", captureWith("purchase.should_service_apply_surcharge"),
			"purchase.should_service_apply_surcharge", belongs},
		// Flags a capture or a refund does not have, asked for (third
		// verification sweep: ignored).
		{"capture fee", "/v5/purchase/" + ref + "/capture", captureWith("capture.should_service_apply_fee"),
			"capture.should_service_apply_fee", "no direct debit fee"},
		{"capture 3-D Secure", "/v5/purchase/" + ref + "/capture", captureWith("should_service_apply_authentication"),
			"should_service_apply_authentication", "without 3-D Secure"},
		{"refund surcharge", "/v5/purchase/" + ref + "/refund", captureWith("refund.should_service_apply_surcharge"),
			"refund.should_service_apply_surcharge", "a refund returns refund.amount"},
		{"link opt-out in customer", "/v5/payment-links",
			link(func(b map[string]any) { apitest.Set(b, "customer.should_service_apply_surcharge", false) }),
			"customer.should_service_apply_surcharge", belongs + "should_service_apply_surcharge"},
		{"link opt-out in purchase", "/v5/payment-links",
			link(func(b map[string]any) { apitest.Set(b, "purchase.should_service_apply_surcharge", false) }),
			"purchase.should_service_apply_surcharge", belongs},
		{"link opt-out with a no-break space", "/v5/payment-links",
			link(func(b map[string]any) { b["should_service_apply_surcharge\u00a0"] = false }),
			"should_service_apply_surcharge\u00a0", "send it as should_service_apply_surcharge"},
		// Flags a payment link does not have, asked for: a hold would be
		// charged in full.
		{"link hold", "/v5/payment-links",
			link(func(b map[string]any) { b["should_service_apply_pre_authorisation"] = true }),
			"should_service_apply_pre_authorisation", "never a hold"},
		{"link hold, US, in purchase", "/v5/payment-links",
			link(func(b map[string]any) { apitest.Set(b, "purchase.shouldServiceApplyPreAuthorization", "yes") }),
			"purchase.shouldServiceApplyPreAuthorization", "never a hold"},
		{"link fee", "/v5/payment-links", link(func(b map[string]any) { b["should_service_apply_fee"] = true }),
			"should_service_apply_fee", "no direct debit fee"},
		{"link reference run together", "/v5/payment-links", link(func(b map[string]any) {
			delete(b, "merchantReference")
			b["merchantreference"] = "R-1"
		}), "merchantreference", "send it as merchantReference"},
		{"permission at the top", "/v5/tokenize_card",
			tokenizeWith(func(b map[string]any) { b["store_card_permission"] = true }),
			"store_card_permission", belongs + "customer.store_card_permisison"},
		{"multi_use in card", "/v5/tokenize_card",
			tokenizeWith(func(b map[string]any) { apitest.Set(b, "card.multi_use", true) }), "card.multi_use", belongs},
	})
	if res := capture(env, m, ref, "20.00"); res.Status != http.StatusOK {
		t.Errorf("the hold after the refusals: got %d %s, want it captured", res.Status, res.Raw)
	}
}

// TestFieldErrorsNameTheKeySent: a problem the Service finds in a field
// read under an alias is reported under the alias the client sent
// (customer.customer_email), not the name the rule uses
// (customer.email), on a direct debit and its refund.
func TestFieldErrorsNameTheKeySent(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	debitRes := env.Post("/v5/direct_debit", m, debitBody(env, m, "123456789", "25.50", func(b map[string]any) {
		apitest.Set(b, "customer.customer_email", "not-an-email")
	}))
	refundReq := refundBody(env, m, "1.00")
	apitest.Set(refundReq, "customer.customer_email", "not-an-email")
	refundRes := env.Post("/v5/direct_debit/dd_none/refund", m, refundReq)
	for name, res := range map[string]apitest.Response{"direct debit": debitRes, "direct debit refund": refundRes} {
		fields, _ := res.Get("fields").(map[string]any)
		if res.Status != http.StatusBadRequest || fields["customer.customer_email"] == nil || fields["customer.email"] != nil ||
			!strings.Contains(res.Str("response_message"), "customer.customer_email: ") {
			t.Errorf("%s: got %d %s, want 400 naming customer.customer_email", name, res.Status, res.Raw)
		}
	}
}

// TestFlagsOutOfPlaceThatChangeNothingAreRead: a flag out of place that
// says what the call does anyway (false where false is the default, the
// same value as the flag at its home, a stored card's multi_use echoed
// beside its token) is left unread as before, not refused: refusing it
// broke clients that echo an answer's fields (verification sweep).
func TestFlagsOutOfPlaceThatChangeNothingAreRead(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	stored := env.Post("/v5/purchase", m, env.CardPurchase(m, "4111111111111111", "5.00", func(b map[string]any) {
		apitest.Set(b, "customer.store_card_permission", true)
	})).Str("card.token")
	if stored == "" {
		t.Fatal("no multi-use token")
	}
	tokenize := func(set func(map[string]any)) map[string]any {
		b := map[string]any{"company_token": m.Creds.CompanyToken,
			"card":     map[string]any{"number": "4111111111111111", "expiry_month": "12", "expiry_year": "39", "holder_name": "Jo"},
			"customer": map[string]any{"store_card_permisison": true}}
		set(b)
		return b
	}
	for _, c := range []struct {
		name, path string
		body       map[string]any
	}{
		{"pre-auth false at the top", "/v5/purchase", env.CardPurchase(m, "4111111111111111", "12.00", func(b map[string]any) {
			apitest.Set(b, "should_service_apply_pre_authorisation", false)
		})},
		{"3-D Secure false in purchase", "/v5/purchase", env.CardPurchase(m, "4111111111111111", "12.00", func(b map[string]any) {
			apitest.Set(b, "purchase.should_service_apply_authentication", "false")
		})},
		{"pre-auth true in token beside purchase's", "/v5/purchase", env.CardPurchase(m, "4111111111111111", "12.00", func(b map[string]any) {
			apitest.Set(b, "purchase.should_service_apply_pre_authorisation", true)
			apitest.Set(b, "token.shouldServiceApplyPreAuthorization", "yes")
		})},
		{"a stored card with its multi_use", "/v5/purchase", env.CardPurchase(m, "", "12.00", func(b map[string]any) {
			b["card"] = map[string]any{"token": stored, "multi_use": true}
		})},
		{"multi_use false in card", "/v5/purchase", env.CardPurchase(m, "4111111111111111", "12.00", func(b map[string]any) {
			apitest.Set(b, "card.multi_use", false)
		})},
		{"tokenise: multi_use beside the permission", "/v5/tokenize_card", tokenize(func(b map[string]any) {
			apitest.Set(b, "customer.multi_use", true)
		})},
		{"link: no hold, said so", "/v5/payment-links", map[string]any{"amount": "5.00", "currency": "AUD",
			"merchantReference": "ECHO-2", "should_service_apply_pre_authorisation": false}},
		{"link: surcharge on in customer, as by default", "/v5/payment-links", map[string]any{"amount": "5.00", "currency": "AUD",
			"merchantReference": "ECHO-1", "customer": map[string]any{"should_service_apply_surcharge": true}}},
	} {
		if res := env.Post(c.path, m, c.body); res.Status != http.StatusOK {
			t.Errorf("%s: got %d %s, want 200", c.name, res.Status, res.Raw)
		}
	}
}

// TestKeysEchoedInErrorsAreRedacted: a refusal names the key a client
// wrote, which may hold a card number or a paylink secret (a nested
// object keyed by a card number, a dotted key): the error body masks
// them in its fields' paths as in its messages (third verification
// sweep: the paths came back whole).
func TestKeysEchoedInErrorsAreRedacted(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	for name, set := range map[string]func(map[string]any){
		"card number as a key":        func(b map[string]any) { apitest.Set(b, "card.4111111111111111.should_service_apply_fee", true) },
		"grouped card number key":     func(b map[string]any) { b["4111-1111-1111-1111"] = map[string]any{"should_service_apply_fee": true} },
		"card number in a dotted key": func(b map[string]any) { b["purchase.4111111111111111"] = 1 },
		"API key in a dotted key":     func(b map[string]any) { b["token."+m.Creds.APIKey] = 1 },
	} {
		res := env.Post("/v5/purchase", m, env.CardPurchase(m, "4111111111111111", "12.00", set))
		if res.Status != http.StatusBadRequest {
			t.Errorf("%s: got %d %s, want 400", name, res.Status, res.Raw)
		}
		for _, secret := range []string{"4111111111111111", "4111-1111-1111-1111", m.Creds.APIKey} {
			if strings.Contains(res.Raw, secret) {
				t.Errorf("%s: the error body holds %.12s…: %s", name, secret, res.Raw)
			}
		}
	}
}

// TestDottedCompanyTokenIsRefusedEverywhere: a company token under a
// dotted key is refused naming the key on every call that reads one, as
// api.md says, not only on those with flags (docs sweep: the transaction
// token, a status look-up, a card's tokenisation, look-up and
// invalidation took {"company_token": right, "token.company_token":
// wrong} and answered 200); a card token sent dotted is told so, not "is
// required". A read's body is the exception: a key it does not take is
// ignored there, a dotted one too (it never refuses a read; api.md).
func TestDottedCompanyTokenIsRefusedEverywhere(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	ref := env.Post("/v5/purchase", m, env.CardPurchase(m, "4111111111111111", "5.00")).Str("purchase.purchase_reference")
	link := env.Post("/v5/payment-links", m, map[string]any{"amount": "5.00", "currency": "AUD", "merchantReference": "D"}).Str("id")
	for _, path := range []string{"/v5/transaction_token", "/v5/purchase/" + ref, "/v5/tokenize_card", "/v5/card",
		"/v5/invalidate_card_token", "/v5/payment-links/" + link + "/cancel"} {
		body := map[string]any{"company_token": m.Creds.CompanyToken, "token.company_token": "WRONG"}
		if path == "/v5/tokenize_card" {
			body["card"] = map[string]any{"number": "4111111111111111", "expiry_month": "12", "expiry_year": "39"}
		}
		if r := env.Post(path, m, body); r.Status != http.StatusBadRequest || !strings.Contains(fieldProblem(r, "token.company_token"), "send nested objects") {
			t.Errorf("%s with a dotted token.company_token: got %d %s, want 400 naming the key", path, r.Status, r.Raw)
		}
	}
	// A read's body never refuses it: a token there that a POST would
	// refuse as malformed is ignored, on a link's GET too (third
	// verification sweep: the link's GET alone answered 400).
	for _, path := range []string{"/v5/purchase/" + ref, "/v5/payment-links/" + link, "/v5/balance"} {
		for _, body := range []map[string]any{{"token.company_token": "ignored"}, {"company_token": "WRONG1", "companyToken": "WRONG2"}} {
			if r := env.Do(http.MethodGet, path, m, body); r.Status != http.StatusOK {
				t.Errorf("GET %s with %v in its body: got %d %s, want 200", path, body, r.Status, r.Raw)
			}
		}
	}
	// PHP's json_encode([]) under curl's form type is an empty form, as it
	// was (second verification sweep: a first change refused it).
	if status, body := postForm(t, env, m, "/v5/payment-links/"+link, "[]"); status != http.StatusOK {
		t.Errorf("[] under the form type to a call needing nothing: got %d %s, want 200", status, body)
	}
	r := env.Post("/v5/card", m, map[string]any{"company_token": m.Creds.CompanyToken, "card.token": "X"})
	if !strings.Contains(fieldProblem(r, "card.token"), "send nested objects") {
		t.Errorf("/v5/card with a dotted card.token: got %d %s, want the dotted key refused", r.Status, r.Raw)
	}
}
