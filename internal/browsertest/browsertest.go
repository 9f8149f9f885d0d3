// Package browsertest drives Debian's headless Chromium for the page
// tests of the hosted page and the dashboard: one browser per test
// binary, one isolated browser context (cookies) per tab, and the
// axe-core accessibility audit injected over CDP, so pages keep their
// strict CSP.
package browsertest

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
)

// Browser is a running Chromium, or the reason there is none.
type Browser struct {
	ctx  context.Context
	err  error
	stop func()
}

// Start starts Chromium if it is on PATH; without it, tests that need it
// skip (or fail with PAYLINK_REQUIRE_ALL=1).
func Start() *Browser {
	b := &Browser{stop: func() {}}
	path := ""
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		b.err = errors.New("chromium not found on PATH (install the Debian package chromium)")
		return b
	}
	dir, err := os.MkdirTemp("", "paylink-chromium-")
	if err != nil {
		b.err = err
		return b
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.UserDataDir(dir), chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true), chromedp.WindowSize(1280, 900))
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelBrowser := chromedp.NewContext(allocCtx)
	if err := chromedp.Do(ctx); err != nil {
		b.err = fmt.Errorf("start chromium: %w", err)
	}
	b.ctx = ctx
	b.stop = func() {
		cancelBrowser()
		cancelAlloc()
		os.RemoveAll(dir)
	}
	return b
}

// Stop ends the browser.
func (b *Browser) Stop() { b.stop() }

// Need skips the test without Chromium (fails with PAYLINK_REQUIRE_ALL=1),
// so a test can skip before it sets up what the browser would need.
func (b *Browser) Need(t *testing.T) {
	t.Helper()
	if b.err == nil {
		return
	}
	if os.Getenv("PAYLINK_REQUIRE_ALL") == "1" {
		t.Fatalf("browser tests need Chromium (PAYLINK_REQUIRE_ALL=1): %v", b.err)
	}
	t.Skipf("skipping browser test: %v", b.err)
}

// Tab opens a fresh tab with its own cookies, closed at the test's end.
func (b *Browser) Tab(t *testing.T) context.Context {
	t.Helper()
	b.Need(t)
	ctx, cancel := chromedp.NewContext(b.ctx, chromedp.WithNewBrowserContext())
	ctx, cancelTimeout := context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(func() {
		cancelTimeout()
		cancel()
	})
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("open tab: %v", err)
	}
	return ctx
}

// DisableScripts turns JavaScript off in a tab, for the flows that must
// work without it.
func DisableScripts(t *testing.T, ctx context.Context) {
	t.Helper()
	if _, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		t.Fatalf("disable JavaScript: %v", err)
	}
}

// Run runs actions and fails the test on error.
func Run(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// Submit clicks the element with an id and waits for the next page.
func Submit(t *testing.T, ctx context.Context, id string) {
	t.Helper()
	if _, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.ID(id))); err != nil {
		t.Fatalf("click %s: %v", id, err)
	}
}

// SubmitCSS clicks the first element matching a CSS selector and waits
// for the next page.
func SubmitCSS(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	if _, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(sel))); err != nil {
		t.Fatalf("click %s: %v", sel, err)
	}
}

// Navigate opens a URL and waits for it.
func Navigate(t *testing.T, ctx context.Context, url string) {
	t.Helper()
	if _, err := chromedp.RunResponse(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
}

// Text is the visible text of the page. A read that races a document
// being replaced (a redirect landing after the previous step) finds its
// body node gone; it is read again, a few times, from the new document.
func Text(t *testing.T, ctx context.Context) string {
	t.Helper()
	var err error
	for range 5 {
		var s string
		if s, err = chromedp.Run(ctx, chromedp.Text(chromedp.CSS("body"))); err == nil {
			return s
		}
		if !strings.Contains(err.Error(), "No node with given id") {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("read page: %v", err)
	return ""
}

// WantText fails unless the page shows every string.
func WantText(t *testing.T, ctx context.Context, step string, want ...string) {
	t.Helper()
	got := Text(t, ctx)
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Fatalf("%s: page text %q lacks %q", step, got, w)
		}
	}
}

// axeViolation is one axe-core finding.
type axeViolation struct {
	ID     string `json:"id"`
	Impact string `json:"impact"`
	Help   string `json:"help"`
	Nodes  int    `json:"nodes"`
}

// Audit runs axe-core (from .ci/node_modules, found from root, the
// repository's root) in the page and fails on serious or critical
// violations.
func Audit(t *testing.T, ctx context.Context, root, page string) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(root, ".ci", "node_modules", "axe-core", "axe.min.js"))
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
	for _, v := range found {
		if v.Impact == "serious" || v.Impact == "critical" {
			t.Errorf("axe-core on %s: got %s violation %s (%s) on %d nodes, want none", page, v.Impact, v.ID, v.Help, v.Nodes)
		} else {
			t.Logf("axe-core on %s: %s violation %s (%s)", page, v.Impact, v.ID, v.Help)
		}
	}
}

// Screenshot writes the page, at a width, as a PNG file.
func Screenshot(t *testing.T, ctx context.Context, path string, width int64) {
	t.Helper()
	Run(t, ctx, "set viewport", chromedp.EmulateViewport(width, 900),
		chromedp.Evaluate[chromedp.Void](`new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))`, chromedp.EvalAwaitPromise))
	buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // quality 100 makes a PNG
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		t.Fatal(err)
	}
}
