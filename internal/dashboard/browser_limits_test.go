package dashboard_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
	"github.com/paylink/paylink/internal/browsertest"
)

// TestBrowserLimits shows the dashboard's refusals in a real browser:
// each role's limits (a viewer sees no action forms and is refused the
// team page; staff is refused the developers page; an admin opens both),
// a form whose CSRF token was tampered with (403, nothing refunded),
// another merchant's payment (404), idle expiry (back to the sign-in page
// once the session's clock passed 15 minutes) and sign-in throttling (429
// after 10 failures, even with the right password). The rules behind each
// are tested over HTTP (http_test.go) and at the Service level.
func TestBrowserLimits(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m, other := env.Onboard(), env.Onboard()
	addUser(t, env, m, "viewer@example.com", paylink.RoleViewer)
	addUser(t, env, m, "clerk@example.com", paylink.RoleStaff)
	addUser(t, env, m, "owner@example.com", paylink.RoleAdmin)
	ours, theirs := purchase(t, env, m, "40.00", false), purchase(t, env, other, "12.00", false)
	base := env.Server.URL

	roles := []struct {
		email, allowed, refused string
		forms                   bool
	}{
		{"viewer@example.com", "/dashboard/payments", "/dashboard/team", false},
		{"clerk@example.com", "/dashboard/payments", "/dashboard/developers", true},
		{"owner@example.com", "/dashboard/developers", "", true},
	}
	for _, r := range roles {
		t.Run("role "+r.email, func(t *testing.T) {
			ctx := chromium.Tab(t)
			signInBrowser(t, ctx, base, r.email)
			if got := open(t, ctx, base+r.allowed); got != http.StatusOK {
				t.Errorf("%s: got %d, want 200", r.allowed, got)
			}
			if r.refused != "" {
				if got := open(t, ctx, base+r.refused); got != http.StatusForbidden {
					t.Errorf("%s: got %d, want 403", r.refused, got)
				}
			}
			open(t, ctx, base+"/dashboard/payments/"+ours)
			forms, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById("refund") !== null`))
			if err != nil || forms != r.forms {
				t.Errorf("refund form shown: got %v (%v), want %v", forms, err, r.forms)
			}
			if got := open(t, ctx, base+"/dashboard/payments/"+theirs); got != http.StatusNotFound {
				t.Errorf("another merchant's payment: got %d, want 404", got)
			}
		})
	}

	t.Run("CSRF token tampered with", func(t *testing.T) {
		ctx := chromium.Tab(t)
		signInBrowser(t, ctx, base, "clerk@example.com")
		open(t, ctx, base+"/dashboard/payments/"+ours)
		browsertest.Run(t, ctx, "forge the form",
			chromedp.SetValue(chromedp.ID("refund-amount"), "10.00"),
			chromedp.SetValue(chromedp.CSS(`form[action$="/refund"] input[name="csrf"]`), "forged"))
		if got := click(t, ctx, "refund"); got != http.StatusForbidden {
			t.Errorf("refund with a forged token: got %d, want 403", got)
		}
		if got := stored(t, env, m, ours).Refunded; got != 0 {
			t.Errorf("refunded: got %d, want 0", got)
		}
	})

	t.Run("idle expiry", func(t *testing.T) {
		ctx := chromium.Tab(t)
		signInBrowser(t, ctx, base, "owner@example.com")
		browsertest.WantText(t, ctx, "signed in", "Balances")
		env.Clock.Advance(paylink.SessionIdleDefault - time.Second)
		open(t, ctx, base+"/dashboard/team")
		browsertest.WantText(t, ctx, "used within the idle time", "Members")
		env.Clock.Advance(paylink.SessionIdleDefault + time.Second)
		open(t, ctx, base+"/dashboard/team")
		browsertest.WantText(t, ctx, "idle too long", "Sign in", "Password")
	})

	t.Run("sign-in throttling", func(t *testing.T) {
		ctx := chromium.Tab(t)
		for i := range paylink.SignInFailureLimit + 1 {
			pw, want := "not the right password", http.StatusUnauthorized
			if i == paylink.SignInFailureLimit {
				pw, want = password, http.StatusTooManyRequests
			}
			open(t, ctx, base+"/dashboard/login")
			browsertest.Run(t, ctx, "type credentials",
				chromedp.SendKeys(chromedp.ID("email"), "viewer@example.com"),
				chromedp.SendKeys(chromedp.ID("password"), pw))
			if got := click(t, ctx, "sign-in"); got != int64(want) {
				t.Fatalf("attempt %d: got %d, want %d", i+1, got, want)
			}
		}
		browsertest.WantText(t, ctx, "throttled", "too many failed sign-ins")
	})
}

// open navigates to url and returns the document's status.
func open(t *testing.T, ctx context.Context, url string) int64 {
	t.Helper()
	res, err := chromedp.RunResponse(ctx, chromedp.Navigate(url))
	if err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	return res.Status
}

// click clicks the element with an id and returns the next document's
// status.
func click(t *testing.T, ctx context.Context, id string) int64 {
	t.Helper()
	res, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.ID(id)))
	if err != nil {
		t.Fatalf("click %s: %v", id, err)
	}
	return res.Status
}
