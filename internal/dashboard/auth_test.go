package dashboard

import "testing"

// TestSafeNext: only a path of the dashboard, never the sign-in pages or
// another site, is a page to return to.
func TestSafeNext(t *testing.T) {
	for next, want := range map[string]string{
		"/dashboard/team":                 "/dashboard/team",
		"/dashboard/payments?q=INV-1":     "/dashboard/payments?q=INV-1",
		"":                                "",
		"/dashboard/login":                "",
		"/dashboard/login/totp":           "",
		"//evil.example/dashboard/":       "",
		"https://evil.example/dashboard/": "",
		"/v5/balance":                     "",
		"/dashboard\\..\\x":               "",
		"/dashboard/x\r\nSet-Cookie: a=b": "",
		"javascript:alert(1)":             "",
		"/dashboard/../..//evil.example":  "",
		"/dashboard/%2e%2e/v5/balance":    "",
		"/dashboard//evil.example":        "",
		"/dashboard/./team":               "",
		"/dashboard/":                     "/dashboard/",
		"/dashboard/payments/":            "/dashboard/payments/",
	} {
		if got := safeNext(next); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", next, got, want)
		}
	}
}
