package api

import (
	"strings"
	"testing"
)

// TestLooseEqual: the names a flag goes by, in every case and with or
// without separators, are one name; others are not.
func TestLooseEqual(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"should_service_apply_surcharge", "should_service_apply_surcharge", true},
		{"shouldServiceApplySurcharge", "should_service_apply_surcharge", true},
		{"SHOULDSERVICEAPPLYSURCHARGE", "should_service_apply_surcharge", true},
		{"should-service-apply-surcharge", "should_service_apply_surcharge", true},
		{"merchantreference", "merchantReference", true},
		{"should_service_apply_surcharges", "should_service_apply_surcharge", false},
		{"surcharge", "should_service_apply_surcharge", false},
		{"", "amount", false},
		{"__", "", true},
	} {
		if got := looseEqual(c.a, c.b); got != c.want {
			t.Errorf("looseEqual(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// TestCheckPlacementAllocatesNothing: the walk every purchase takes
// allocates nothing for a body with every flag in its home (the
// purchase handler is the hot path of issue 14).
func TestCheckPlacementAllocatesNothing(t *testing.T) {
	b, err := parseBody([]byte(`{"token":{"company_token":"C","transaction_token":"T"},
		"customer":{"ip_address":"203.0.113.7","timezone":"UTC","store_card_permission":false,"should_service_apply_authentication":false},
		"card":{"number":"4111111111111111","expiry_month":"12","expiry_year":"39","cvc":"123"},
		"Purchase":{"amount":"10.50","currency":"AUD","shouldServiceApplySurcharge":true,"should_service_apply_pre_authorisation":false},
		"metadata":{"a.b":"x","should_service_apply_fee":true}}`))
	if err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(100, func() { b.checkPlacement(&purchasePlacement) })
	if b.err() != nil {
		t.Fatalf("a body with every flag at home: %v", b.err())
	}
	if allocs > 0 {
		t.Errorf("checkPlacement allocated %v times, want none", allocs)
	}
}

// TestSameKey: sameKey agrees with snakeKey, which the look-up uses.
func TestSameKey(t *testing.T) {
	for _, key := range []string{"amount", "Amount", "AMOUNT", "IPAddress", "ipAddress", "merchantReference",
		"shouldServiceApplyPreAuthorisation", "should_service_apply_Surcharge", "card_CVC", "A", "aB", "x.Y", ""} {
		for _, name := range []string{"amount", "ip_address", "merchant_reference", "should_service_apply_pre_authorisation",
			"should_service_apply_surcharge", "card_cvc", "a", "a_b", "x.y", ""} {
			if got, want := sameKey(key, name), snakeKey(key) == name; got != want {
				t.Errorf("sameKey(%q, %q) = %v, snakeKey says %v", key, name, got, want)
			}
		}
	}
}

// TestFlagNames: a placement finds its flags under every loose spelling
// and nothing else, the squashed comparison agreeing with looseEqual.
func TestFlagNames(t *testing.T) {
	for key, want := range map[string]*keyRule{
		"should_service_apply_surcharge":          &purchaseSurcharge,
		"SHOULD-SERVICE-APPLY-SURCHARGE":          &purchaseSurcharge,
		"shouldserviceapplypreauthorization":      &purchasePreAuth,
		"ShouldServiceApplyPreAuthorisation":      &purchasePreAuth,
		"multiUse":                                nil, // a purchase reads none (a stored card's answer carries it)
		"store_card_permisison":                   &purchaseStoreCard,
		"_should_service_apply_authentication_":   &purchaseThreeDS,
		"should_service_apply_surcharges":         nil,
		"should_service_apply_fee":                &purchaseNoFee, // a direct debit's, which a purchase lacks
		"amount":                                  nil,
		"":                                        nil,
		strings.Repeat("should_service_apply", 9): nil,
	} {
		got, ok := purchasePlacement.flag(key)
		if ok != (want != nil) || got != want {
			t.Errorf("flag(%q) = %v, %v; want %v", key, got, ok, want)
		}
	}
	if got, ok := tokenizePlacement.flag("multiUse"); !ok || got != &tokenizeStoreCard {
		t.Errorf("a tokenisation's flag(multiUse) = %v, %v; want its card storage", got, ok)
	}
}
