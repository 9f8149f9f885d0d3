package acs_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
	"github.com/paylink/paylink/internal/processor"
)

// browser starts a throwaway headless Chromium, script on or off.
func browser(t *testing.T, scripts bool) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("PAYLINK_REQUIRE_ALL") == "1" {
			t.Fatalf("chromium is required (PAYLINK_REQUIRE_ALL=1): %v", err)
		}
		t.Skipf("chromium not found, skipping the browser test: %v", err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.UserDataDir(t.TempDir()), chromedp.Flag("disable-gpu", true), chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("ignore-certificate-errors", true)) // the merchant's test site has a self-signed certificate
	if !scripts {
		opts = append(opts, chromedp.Flag("blink-settings", "scriptEnabled=false"))
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(allocCtx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(func() { cancelTimeout(); cancelCtx(); cancelAlloc() })
	return ctx
}

// challenge starts paylink and a merchant site, makes a purchase that
// needs a challenge and returns the challenge page address and the
// channel on which the merchant site reports each return; mutate adjusts
// the merchant.
func challenge(t *testing.T, mutate ...func(*paylink.NewMerchant)) (pageURL, ref string, returns chan url.Values) {
	t.Helper()
	returns = make(chan url.Values, 4)
	shop := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		returns <- r.URL.Query()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(`<!doctype html><title>Back at the shop</title><p>Thanks</p>`))
	}))
	t.Cleanup(shop.Close)
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard(mutate...)
	r := env.Post("/v5/purchase", m, env.CardPurchase(m, processor.CardThreeDSChallenge, "12.34", func(b map[string]any) {
		apitest.Set(b, "customer.should_service_apply_authentication", true)
		apitest.Set(b, "customer.authentication_redirect_url", shop.URL+"/return")
	}))
	if r.Str("purchase.status") != "REQUIRES_AUTHENTICATION" {
		t.Fatalf("purchase: got %s, want REQUIRES_AUTHENTICATION", r.Raw)
	}
	return r.Str("customer.authentication_redirect_url"), r.Str("purchase.purchase_reference"), returns
}

func TestChallengePageStyleIsAllowedByItsCSP(t *testing.T) {
	pageURL, _, _ := challenge(t)
	ctx := browser(t, true)
	if err := chromedp.Do(ctx, chromedp.Navigate(pageURL)); err != nil {
		t.Fatal(err)
	}
	bg, err := chromedp.Run(ctx, chromedp.Evaluate[string](
		`getComputedStyle(document.querySelector('button[value="success"]')).backgroundColor`))
	if err != nil {
		t.Fatal(err)
	}
	if want := "rgb(29, 78, 216)"; bg != want {
		t.Errorf("success button background: got %q, want %q (the stylesheet was blocked)", bg, want)
	}
}

func TestChallengePageWorksWithoutJavaScript(t *testing.T) {
	pageURL, ref, returns := challenge(t)
	ctx := browser(t, false)
	err := chromedp.Do(ctx, chromedp.Navigate(pageURL), chromedp.Click(chromedp.CSS(`button[value="success"]`)))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case q := <-returns:
		if got := q.Get("purchase_reference"); got != ref {
			t.Errorf("return: got purchase_reference %q, want %q", got, ref)
		}
	case <-ctx.Done():
		t.Fatal("the browser never reached the merchant's return address (form blocked by CSP?)")
	}
}

// TestChallengePageFitsANarrowScreen: a trading name of 128 characters
// with no space wraps on a 320 px phone rather than make the challenge
// page scroll sideways (the heading, the details and the note show it).
func TestChallengePageFitsANarrowScreen(t *testing.T) {
	trading := strings.Repeat("W", 128)
	pageURL, _, _ := challenge(t, func(n *paylink.NewMerchant) { n.TradingName = trading })
	ctx := browser(t, true)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(320, 640), chromedp.Navigate(pageURL)); err != nil {
		t.Fatal(err)
	}
	text, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
	if err != nil || !strings.Contains(text, trading) {
		t.Fatalf("the page does not show the trading name (%v): %q", err, text)
	}
	width, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth`))
	if err != nil || width > 320 {
		t.Errorf("page width at a 320 px viewport: got %d (%v), want at most 320", width, err)
	}
}
