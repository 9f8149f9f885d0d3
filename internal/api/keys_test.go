package api

import "testing"

func TestSnakeKey(t *testing.T) {
	for in, want := range map[string]string{
		"amount":                             "amount",
		"Amount":                             "amount",
		"AMOUNT":                             "amount",
		"merchantReference":                  "merchant_reference",
		"merchant_reference":                 "merchant_reference",
		"shouldServiceApplyPreAuthorisation": "should_service_apply_pre_authorisation",
		"ShouldServiceApplySurcharge":        "should_service_apply_surcharge",
		"IPAddress":                          "ip_address",
		"ipAddress":                          "ip_address",
		"card_CVC":                           "card_cvc",
		"expiryMonth2":                       "expiry_month2",
		"Should_Service":                     "should_service",
		"":                                   "",
	} {
		if got := snakeKey(in); got != want {
			t.Errorf("snakeKey(%q) = %q, want %q", in, got, want)
		}
	}
}
