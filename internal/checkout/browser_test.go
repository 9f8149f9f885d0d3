package checkout_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/paylink/paylink/internal/pgtest"
)

// The browser tests drive Debian's headless Chromium, one browser for the
// whole test binary, one isolated browser context (cookies) per tab.
var (
	browserCtx context.Context
	browserErr error
)

// pg is the package's throwaway PostgreSQL.
var pg pgtest.Shared

func TestMain(m *testing.M) {
	stop := startBrowser()
	pg.Start()
	code := m.Run()
	stop()
	pg.Stop()
	os.Exit(code)
}

// startBrowser starts Chromium if it is on PATH; browserErr says why not.
func startBrowser() (stop func()) {
	path := ""
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		browserErr = errors.New("chromium not found on PATH (install the Debian package chromium)")
		return func() {}
	}
	dir, err := os.MkdirTemp("", "paylink-chromium-")
	if err != nil {
		browserErr = err
		return func() {}
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.UserDataDir(dir), chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true), chromedp.WindowSize(1280, 900))
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelBrowser := chromedp.NewContext(allocCtx)
	if err := chromedp.Do(ctx); err != nil {
		browserErr = fmt.Errorf("start chromium: %w", err)
	}
	browserCtx = ctx
	return func() {
		cancelBrowser()
		cancelAlloc()
		os.RemoveAll(dir)
	}
}

// needBrowser skips without Chromium, and fails with PAYLINK_REQUIRE_ALL=1.
func needBrowser(t *testing.T) {
	t.Helper()
	if browserErr == nil {
		return
	}
	if os.Getenv("PAYLINK_REQUIRE_ALL") == "1" {
		t.Fatalf("browser tests need Chromium (PAYLINK_REQUIRE_ALL=1): %v", browserErr)
	}
	t.Skipf("skipping browser test: %v", browserErr)
}

// tab opens a fresh tab with its own cookies; js false disables scripts.
func tab(t *testing.T, js bool) context.Context {
	t.Helper()
	needBrowser(t)
	ctx, cancel := chromedp.NewContext(browserCtx, chromedp.WithNewBrowserContext())
	ctx, cancelTimeout := context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(func() {
		cancelTimeout()
		cancel()
	})
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("open tab: %v", err)
	}
	if !js {
		if _, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
			t.Fatalf("disable JavaScript: %v", err)
		}
	}
	return ctx
}

// run runs actions and fails the test on error.
func run(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// submit clicks a button and waits for the next page.
func submit(t *testing.T, ctx context.Context, id string) {
	t.Helper()
	if _, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.ID(id))); err != nil {
		t.Fatalf("click %s: %v", id, err)
	}
}

// submitCSS clicks the first element matching a CSS selector and waits.
func submitCSS(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	if _, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(sel))); err != nil {
		t.Fatalf("click %s: %v", sel, err)
	}
}

// text is the visible text of the page.
func text(t *testing.T, ctx context.Context) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("body")))
	if err != nil {
		t.Fatalf("read page: %v", err)
	}
	return s
}

// wantText fails unless the page shows every string.
func wantText(t *testing.T, ctx context.Context, step string, want ...string) {
	t.Helper()
	got := text(t, ctx)
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Fatalf("%s: page text %q lacks %q", step, got, w)
		}
	}
}

// fillCard types a card into the form.
func fillCard(t *testing.T, ctx context.Context, number string) {
	t.Helper()
	run(t, ctx, "fill card",
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

// axeViolation is one axe-core finding.
type axeViolation struct {
	ID     string `json:"id"`
	Impact string `json:"impact"`
	Help   string `json:"help"`
	Nodes  int    `json:"nodes"`
}

// audit runs axe-core in the page (injected over CDP, so the page's CSP
// stays strict) and fails on serious or critical violations.
func audit(t *testing.T, ctx context.Context, page string) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "..", ".ci", "node_modules", "axe-core", "axe.min.js"))
	if err != nil {
		if os.Getenv("PAYLINK_REQUIRE_ALL") == "1" {
			t.Fatalf("axe-core is missing (run npm ci in .ci): %v", err)
		}
		t.Logf("skipping the axe-core audit of %s: %v (run npm ci in .ci)", page, err)
		return
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](string(src))); err != nil {
		t.Fatalf("inject axe-core: %v", err)
	}
	found, err := chromedp.Run(ctx, chromedp.Evaluate[[]axeViolation](
		`axe.run(document).then(r => r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.length})))`,
		chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("run axe-core: %v", err)
	}
	t.Logf("axe-core on %s: %d violations", page, len(found))
	for _, v := range found {
		if v.Impact == "serious" || v.Impact == "critical" {
			t.Errorf("axe-core on %s: got %s violation %s (%s) on %d nodes, want none", page, v.Impact, v.ID, v.Help, v.Nodes)
		} else {
			t.Logf("axe-core on %s: %s violation %s (%s)", page, v.Impact, v.ID, v.Help)
		}
	}
}

// screenshot writes the page at a width into screenshots/ (git-ignored).
func screenshot(t *testing.T, ctx context.Context, name string, width int64) {
	t.Helper()
	run(t, ctx, "set viewport", chromedp.EmulateViewport(width, 900),
		chromedp.Evaluate[chromedp.Void](`new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))`, chromedp.EvalAwaitPromise))
	buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	dir := filepath.Join("..", "..", "screenshots")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%d.png", name, width)), buf, 0o644); err != nil {
		t.Fatal(err)
	}
}

// fitsPhone fails when the page scrolls sideways on a 320 px phone.
func fitsPhone(t *testing.T, ctx context.Context) {
	t.Helper()
	run(t, ctx, "320 px viewport", chromedp.EmulateViewport(320, 640))
	width, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth`))
	if err != nil || width > 320 {
		t.Errorf("page width at a 320 px viewport: got %d (%v), want at most 320", width, err)
	}
	run(t, ctx, "reset viewport", chromedp.EmulateViewport(1280, 900))
}
