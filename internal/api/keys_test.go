package api

import (
	"fmt"
	"strings"
	"testing"
)

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

func TestFormPath(t *testing.T) {
	for key, want := range map[string]string{
		"amount":                 "[amount]",
		"purchase[amount]":       "[purchase amount]",
		"a[b][c]":                "[a b c]",
		"a[]":                    "",
		"a[b":                    "",
		"a]b":                    "",
		"[a]":                    "",
		"a[b]c":                  "",
		"a[b][":                  "",
		"a[b[c]]":                "",
		"customer[ip_address]":   "[customer ip_address]",
		"token[company_token]x":  "",
		"token[company_token][]": "",
	} {
		path, ok := formPath(key)
		got := ""
		if ok {
			got = fmt.Sprint(path)
		}
		if got != want {
			t.Errorf("formPath(%q) = %q, want %q", key, got, want)
		}
	}
}

func FuzzFormPath(f *testing.F) {
	for _, s := range []string{"a", "a[b]", "a[b][c]", "a[]", "[", "]", "a[[b]]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		if path, ok := formPath(key); ok {
			for _, p := range path {
				if p == "" || strings.ContainsAny(p, "[]") {
					t.Errorf("formPath(%q) = %q: empty or bracketed part", key, path)
				}
			}
		}
	})
}
