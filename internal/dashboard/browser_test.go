package dashboard_test

import (
	"context"
	"encoding/base32"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
	"github.com/paylink/paylink/internal/browsertest"
)

// The dashboard in a real browser, with scripts on (the one there is
// acts only on Back): sign in, home, invite, accept the invite, sign out; axe-core on
// every page. With PAYLINK_SCREENSHOTS=1 it writes the screenshots of
// docs/dashboard.md into docs/img.

// chromium is the package's browser.
var chromium *browsertest.Browser

func startBrowser() (stop func()) {
	chromium = browsertest.Start()
	return chromium.Stop
}

// repoRoot is the repository root seen from this package.
const repoRoot = "../.."

// shot writes a documentation screenshot when asked to.
func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	if os.Getenv("PAYLINK_SCREENSHOTS") != "1" {
		return
	}
	browsertest.Screenshot(t, ctx, filepath.Join(repoRoot, "docs", "img", name+".png"), 1024)
}

// auditPage runs axe-core on the page open in ctx.
func auditPage(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	browsertest.Audit(t, ctx, repoRoot, name)
}

func TestBrowserSignInInviteSignOut(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	addUser(t, env, m, "owner@example.com", paylink.RoleAdmin)
	for _, amount := range []string{"25.00", "118.40", "7.50"} {
		if r := env.Post("/v5/purchase", m, env.CardPurchase(m, "4111111111111111", amount)); r.Status != http.StatusOK {
			t.Fatalf("purchase: %d %s", r.Status, r.Raw)
		}
	}
	base := env.Server.URL
	ctx := chromium.Tab(t)

	browsertest.Navigate(t, ctx, base+"/dashboard/")
	browsertest.WantText(t, ctx, "redirected to sign in", "Sign in", "Email", "Password")
	auditPage(t, ctx, "sign-in")
	shot(t, ctx, "dashboard-login")
	browsertest.Run(t, ctx, "type credentials",
		chromedp.SendKeys(chromedp.ID("email"), "owner@example.com"),
		chromedp.SendKeys(chromedp.ID("password"), password))
	browsertest.Submit(t, ctx, "sign-in")
	browsertest.WantText(t, ctx, "home", "Balances", "Volume", "Last 7 days", "AUD 150.90", "Daily gross volume")
	auditPage(t, ctx, "home")
	shot(t, ctx, "dashboard-home")

	browsertest.Navigate(t, ctx, base+"/dashboard/team")
	browsertest.Run(t, ctx, "fill invite",
		chromedp.SendKeys(chromedp.ID("invite-email"), "clerk@example.com"),
		chromedp.SetValue(chromedp.ID("invite-role"), "staff"))
	browsertest.Submit(t, ctx, "invite")
	browsertest.WantText(t, ctx, "invite made", "Invite made for clerk@example.com")
	link, err := chromedp.Run(ctx, chromedp.Value(chromedp.ID("invite-url")))
	if err != nil || link == "" {
		t.Fatalf("invite link: %q (%v)", link, err)
	}
	auditPage(t, ctx, "team")
	shot(t, ctx, "dashboard-team")

	browsertest.Navigate(t, ctx, base+"/dashboard/audit")
	browsertest.WantText(t, ctx, "audit log", "user.sign_in", "user.invite")
	auditPage(t, ctx, "audit")
	shot(t, ctx, "dashboard-audit")

	browsertest.Navigate(t, ctx, base+"/dashboard/account")
	browsertest.WantText(t, ctx, "account", "Two-factor sign-in", "Change password")
	auditPage(t, ctx, "account")
	shot(t, ctx, "dashboard-account")

	guest := chromium.Tab(t)
	browsertest.Navigate(t, guest, link)
	browsertest.WantText(t, guest, "invite page", "clerk@example.com", "staff")
	auditPage(t, guest, "invite")
	browsertest.Run(t, guest, "choose a password",
		chromedp.SendKeys(chromedp.ID("password"), "my own long passphrase"),
		chromedp.SendKeys(chromedp.ID("confirm"), "my own long passphrase"))
	browsertest.Submit(t, guest, "accept")
	browsertest.WantText(t, guest, "account ready", "Your account is ready")
	browsertest.Run(t, guest, "sign in as the new user",
		chromedp.SendKeys(chromedp.ID("email"), "clerk@example.com"),
		chromedp.SendKeys(chromedp.ID("password"), "my own long passphrase"))
	browsertest.Submit(t, guest, "sign-in")
	browsertest.WantText(t, guest, "new user's home", "clerk@example.com (staff)", "Balances")

	browsertest.Submit(t, ctx, "sign-out")
	browsertest.WantText(t, ctx, "signed out", "You are signed out.")
	browsertest.Navigate(t, ctx, base+"/dashboard/team")
	browsertest.WantText(t, ctx, "team after sign-out", "Sign in")
}

func TestBrowserTwoFactor(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	addUser(t, env, m, "owner@example.com", paylink.RoleAdmin)
	base := env.Server.URL
	ctx := chromium.Tab(t)
	signInBrowser(t, ctx, base, "owner@example.com")

	browsertest.Navigate(t, ctx, base+"/dashboard/account")
	browsertest.Submit(t, ctx, "totp-begin")
	browsertest.WantText(t, ctx, "set-up", "Secret key", "scan the QR code")
	auditPage(t, ctx, "two-factor set-up")
	shot(t, ctx, "dashboard-two-factor")
	key, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("totp-secret")))
	if err != nil {
		t.Fatal(err)
	}
	secret, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(key)
	if err != nil {
		t.Fatalf("secret %q: %v", key, err)
	}
	browsertest.Run(t, ctx, "type the code", chromedp.SendKeys(chromedp.ID("totp-code"), paylink.TOTPCode(secret, env.Clock.Now())))
	browsertest.Run(t, ctx, "type the password", chromedp.SendKeys(chromedp.ID("setup-password"), password))
	browsertest.Submit(t, ctx, "totp-confirm")
	browsertest.WantText(t, ctx, "recovery codes", "Two-factor sign-in is on.", "Recovery codes")
	auditPage(t, ctx, "recovery codes")
	browsertest.Submit(t, ctx, "sign-out")

	signInBrowser(t, ctx, base, "owner@example.com")
	browsertest.WantText(t, ctx, "code page", "Code from your authenticator app")
	auditPage(t, ctx, "code page")
	env.Clock.Advance(30 * time.Second) // the set-up's code is spent: the next step's
	browsertest.Run(t, ctx, "type the code", chromedp.SendKeys(chromedp.ID("code"), paylink.TOTPCode(secret, env.Clock.Now())))
	browsertest.Submit(t, ctx, "verify")
	browsertest.WantText(t, ctx, "home after the code", "Balances")

	browsertest.Navigate(t, ctx, base+"/dashboard/no-such-page")
	browsertest.WantText(t, ctx, "error page", "there is no such page")
	auditPage(t, ctx, "error page")
}

// signInBrowser signs in through the form.
func signInBrowser(t *testing.T, ctx context.Context, base, email string) {
	t.Helper()
	browsertest.Navigate(t, ctx, base+"/dashboard/login")
	browsertest.Run(t, ctx, "type credentials",
		chromedp.SendKeys(chromedp.ID("email"), email),
		chromedp.SendKeys(chromedp.ID("password"), password))
	browsertest.Submit(t, ctx, "sign-in")
}
