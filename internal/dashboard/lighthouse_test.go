package dashboard_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
	"github.com/paylink/paylink/internal/browsertest"
)

// TestBrowserLighthouse audits every dashboard page with Lighthouse's
// mobile profile, signed in as an admin (the session cookie sent with
// every request of the page): accessibility and best practices at least
// 0.95 on each. One run per page, those two categories only: neither
// score depends on the machine's speed, so one run says it, and the suite
// stays quick. Performance is measured by hand (docs/dashboard.md).
func TestBrowserLighthouse(t *testing.T) {
	lh := browsertest.FindLighthouse(t, repoRoot)
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard(hook(t, http.StatusInternalServerError))
	owner := addUser(t, env, m, "owner@example.com", paylink.RoleAdmin)
	ref := purchase(t, env, m, "25.00", false)
	purchase(t, env, m, "12.00", true)
	debit := clearedDebit(t, env, m, "30.00")
	link, _, err := env.Service.CreateLink(context.Background(), m.Merchant, paylink.NewLink{Amount: 4200, Currency: "AUD", MerchantReference: "INV-1001"})
	if err != nil {
		t.Fatal(err)
	}
	invite, _, err := env.Service.CreateInvite(context.Background(), owner, "new@example.com", paylink.RoleStaff)
	if err != nil {
		t.Fatal(err)
	}
	pending := pendingSecondFactor(t, env, m)
	env.WaitWebhooks()
	b := signedIn(t, env, "owner@example.com")
	cookie := b.sessionCookie()
	if cookie == nil {
		t.Fatal("no session cookie after signing in")
	}
	signedIn := map[string]string{"Cookie": cookie.Name + "=" + cookie.Value}
	tests := []struct {
		name, path string
		headers    map[string]string
	}{
		{"login", "/dashboard/login", nil},
		{"home", "/dashboard/", signedIn},
		{"payments", "/dashboard/payments", signedIn},
		{"payment", "/dashboard/payments/" + ref, signedIn},
		{"links", "/dashboard/links", signedIn},
		{"link", "/dashboard/links/" + link.ID, signedIn},
		{"direct debits", "/dashboard/direct-debits", signedIn},
		{"direct debit", "/dashboard/direct-debits/" + debit, signedIn},
		{"invite", "/dashboard/invite/" + invite, nil},
		{"two-factor code", "/dashboard/login/totp", map[string]string{"Cookie": cookie.Name + "=" + pending}},
		{"developers", "/dashboard/developers", signedIn},
		{"balances", "/dashboard/balances", signedIn},
		{"team", "/dashboard/team", signedIn},
		{"audit", "/dashboard/audit", signedIn},
		{"account", "/dashboard/account", signedIn},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := browsertest.LighthouseOptions{Categories: []string{"accessibility", "best-practices"}, Headers: tt.headers}
			r, _, err := lh.Run(t, env.Server.URL+tt.path, opts)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: accessibility %.2f, best practices %.2f", tt.path, r.Score("accessibility"), r.Score("best-practices"))
			for _, category := range []string{"accessibility", "best-practices"} {
				if got := r.Score(category); got < browsertest.MinLighthouseScore {
					t.Errorf("%s score: got %.2f, want at least %.2f (audits below 1: %v)", category, got, browsertest.MinLighthouseScore, r.Failed())
				}
			}
			if got, want := r.FinalDisplayedURL, env.Server.URL+tt.path; got != want {
				// Redirected to the sign-in page: the page itself was not audited.
				t.Errorf("audited %s, want %s", got, want)
			}
		})
	}
}

// pendingSecondFactor makes a user of m with two-factor sign-in on and
// signs them in with their password only, returning the session token
// that waits for the code (the page asking for it is audited too).
func pendingSecondFactor(t *testing.T, env *apitest.Env, m *apitest.Merchant) string {
	t.Helper()
	ctx := context.Background()
	addUser(t, env, m, "second@example.com", paylink.RoleViewer)
	in, err := env.Service.SignIn(ctx, "second@example.com", password)
	if err != nil {
		t.Fatal(err)
	}
	ss, err := env.Service.StaffSession(ctx, in.Token, 0)
	if err != nil {
		t.Fatal(err)
	}
	secret, err := env.Service.BeginTOTP(ctx, ss)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.Service.ConfirmTOTP(ctx, ss, paylink.TOTPCode(secret, env.Clock.Now()), password); err != nil {
		t.Fatal(err)
	}
	pending, err := env.Service.SignIn(ctx, "second@example.com", password)
	if err != nil {
		t.Fatal(err)
	}
	return pending.Token
}
