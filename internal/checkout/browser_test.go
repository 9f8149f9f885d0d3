package checkout_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/paylink/paylink/internal/apitest"
	"github.com/paylink/paylink/internal/browsertest"
	"github.com/paylink/paylink/internal/pgtest"
)

// The browser tests drive Debian's headless Chromium through
// internal/browsertest: one browser for the whole test binary, one
// isolated browser context (cookies) per tab.

// chromium is the package's browser.
var chromium *browsertest.Browser

// pg is the package's throwaway PostgreSQL.
var pg pgtest.Shared

// repoRoot is the repository root seen from this package.
const repoRoot = "../.."

func TestMain(m *testing.M) {
	chromium = browsertest.Start()
	pg.Start()
	code := m.Run()
	chromium.Stop()
	pg.Stop()
	os.Exit(code)
}

// tab opens a fresh tab with its own cookies; js false disables scripts.
func tab(t *testing.T, js bool) context.Context {
	t.Helper()
	ctx := chromium.Tab(t)
	if !js {
		browsertest.DisableScripts(t, ctx)
	}
	return ctx
}

// audit runs axe-core in the page and fails on serious or critical
// violations.
func audit(t *testing.T, ctx context.Context, page string) {
	t.Helper()
	browsertest.Audit(t, ctx, repoRoot, page)
}

// fillCard types a card into the form.
func fillCard(t *testing.T, ctx context.Context, number string) {
	t.Helper()
	browsertest.Run(t, ctx, "fill card",
		chromedp.Clear(chromedp.ID("card_number")),
		chromedp.Clear(chromedp.ID("card_holder")),
		chromedp.Clear(chromedp.ID("card_expiry")),
		chromedp.Clear(chromedp.ID("card_cvc")),
		chromedp.SendKeys(chromedp.ID("card_holder"), "Jo Citizen"),
		chromedp.SendKeys(chromedp.ID("card_number"), number),
		chromedp.SendKeys(chromedp.ID("card_expiry"), "1239"),
		chromedp.SendKeys(chromedp.ID("card_cvc"), "123"),
	)
}

// waitTotal waits until the order summary shows the total.
func waitTotal(t *testing.T, ctx context.Context, total string) {
	t.Helper()
	expr := `document.getElementById("total").textContent === "` + total + `" && document.getElementById("pay-total").textContent === "` + total + `"`
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		got, _ := chromedp.Run(ctx, chromedp.Text(chromedp.ID("total")))
		t.Fatalf("total: got %q, want %q (%v)", got, total, err)
	}
}

// screenshot writes the page at a width into screenshots/ (git-ignored).
func screenshot(t *testing.T, ctx context.Context, name string, width int64) {
	t.Helper()
	browsertest.Screenshot(t, ctx, filepath.Join(repoRoot, "screenshots", fmt.Sprintf("%s-%d.png", name, width)), width)
}

// fitsPhone fails when the page scrolls sideways on a 320 px phone.
func fitsPhone(t *testing.T, ctx context.Context) {
	t.Helper()
	browsertest.Run(t, ctx, "320 px viewport", chromedp.EmulateViewport(320, 640))
	width, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth`))
	if err != nil || width > 320 {
		t.Errorf("page width at a 320 px viewport: got %d (%v), want at most 320", width, err)
	}
	browsertest.Run(t, ctx, "reset viewport", chromedp.EmulateViewport(1280, 900))
}

// eachJSMode opens a new AUD 10.50 link of m on its hosted page in a
// fresh tab, with JavaScript and without, and runs test there.
func eachJSMode(t *testing.T, env *apitest.Env, m *apitest.Merchant, test func(t *testing.T, ctx context.Context, r apitest.Response, js bool)) {
	t.Helper()
	chromium.Need(t)
	for _, mode := range jsModes {
		t.Run(mode.name, func(t *testing.T) {
			r := link(t, env, m, "10.50", nil)
			ctx := tab(t, mode.js)
			browsertest.Run(t, ctx, "open link", chromedp.Navigate(r.Str("url")))
			test(t, ctx, r, mode.js)
		})
	}
}
