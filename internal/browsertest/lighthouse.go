package browsertest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// MinLighthouseScore is the lowest Lighthouse score a page may have in a
// category the tests gate on.
const MinLighthouseScore = 0.95

// lighthouseChromeFlags start Lighthouse's Chromium headless and quiet:
// without the background-networking flags it keeps calling hosts this
// sandbox refuses.
const lighthouseChromeFlags = "--headless=new --no-sandbox --disable-gpu --disable-quic --no-first-run " +
	"--disable-background-networking --disable-component-update --disable-sync"

// defaultMultiplier is the CPU slowdown of Lighthouse's mobile profile.
const defaultMultiplier = 4

// lighthouseAttempts bounds how often one run is tried. On a loaded
// machine Lighthouse now and then fails to record the trace (NO_NAVSTART,
// "Please run Lighthouse again"); that says nothing about the page.
const lighthouseAttempts = 3

// Lighthouse runs the pinned Lighthouse CLI (.ci/node_modules, installed
// by `npm ci` in .ci) with node against Debian's Chromium. The hosted page
// and the dashboard tests share it, so both are judged the same way.
type Lighthouse struct {
	node, cli, chrome string
}

// FindLighthouse locates node, the Lighthouse CLI under root (the
// repository's root) and Chromium. Without them the test skips, and fails
// with PAYLINK_REQUIRE_ALL=1.
func FindLighthouse(t *testing.T, root string) Lighthouse {
	t.Helper()
	var missing []string
	l := Lighthouse{cli: filepath.Join(root, ".ci", "node_modules", "lighthouse", "cli", "index.js")}
	if _, err := os.Stat(l.cli); err != nil {
		missing = append(missing, "the Lighthouse CLI (run npm ci in .ci): "+err.Error())
	}
	var err error
	if l.node, err = exec.LookPath("node"); err != nil {
		missing = append(missing, "node: "+err.Error())
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if l.chrome, err = exec.LookPath(name); err == nil {
			break
		}
	}
	if l.chrome == "" {
		missing = append(missing, "chromium not found on PATH (install the Debian package chromium)")
	}
	if len(missing) == 0 {
		return l
	}
	if os.Getenv("PAYLINK_REQUIRE_ALL") == "1" {
		t.Fatalf("the Lighthouse audit needs (PAYLINK_REQUIRE_ALL=1): %s", strings.Join(missing, "; "))
	}
	t.Skipf("skipping the Lighthouse audit: %s", strings.Join(missing, "; "))
	return l
}

// LighthouseOptions say what one run audits and how it loads the page.
type LighthouseOptions struct {
	// Categories are Lighthouse's category ids ("performance",
	// "accessibility", "best-practices"); fewer categories run faster.
	Categories []string
	// Headers are sent with every request of the page, such as a Cookie
	// header carrying a dashboard session.
	Headers map[string]string
}

// LighthouseReport is the part of Lighthouse's JSON report the tests read.
type LighthouseReport struct {
	// FinalDisplayedURL is the address audited, after any redirect.
	FinalDisplayedURL string `json:"finalDisplayedUrl"`
	Categories        map[string]struct {
		Score *float64 `json:"score"`
	} `json:"categories"`
	Audits map[string]struct {
		NumericValue float64  `json:"numericValue"`
		Score        *float64 `json:"score"`
		Title        string   `json:"title"`
	} `json:"audits"`
	Environment struct {
		BenchmarkIndex float64 `json:"benchmarkIndex"`
	} `json:"environment"`
	RuntimeError *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"runtimeError"`
}

// Score is a category's score, -1 when Lighthouse could not compute it.
func (r *LighthouseReport) Score(category string) float64 {
	if c, ok := r.Categories[category]; ok && c.Score != nil {
		return *c.Score
	}
	return -1
}

// Failed lists the audits scored below 1 (their ids and titles), sorted,
// so a test failing on a score says what lowered it.
func (r *LighthouseReport) Failed() []string {
	var out []string
	for id, a := range r.Audits {
		if a.Score != nil && *a.Score < 1 {
			out = append(out, fmt.Sprintf("%s (%s)", id, a.Title))
		}
	}
	slices.Sort(out)
	return out
}

// String sums up a run for the test log: the scores, the metrics behind
// the performance score, and the host's speed as Lighthouse measured it
// (a loaded machine has a low benchmark index and a longer blocking time).
func (r *LighthouseReport) String() string {
	ms := func(id string) int { return int(r.Audits[id].NumericValue) }
	return fmt.Sprintf("performance %.2f accessibility %.2f best-practices %.2f; FCP %d ms, LCP %d ms, TBT %d ms, CLS %.3f, SI %d ms; benchmark index %.0f",
		r.Score("performance"), r.Score("accessibility"), r.Score("best-practices"),
		ms("first-contentful-paint"), ms("largest-contentful-paint"), ms("total-blocking-time"),
		r.Audits["cumulative-layout-shift"].NumericValue, ms("speed-index"), r.Environment.BenchmarkIndex)
}

// Run audits url once (trying again when Lighthouse itself fails to
// record the page) with the mobile profile: byDefault is the default
// profile's report, forPerformance the one that decides performance (the
// same report on a host as fast as Lighthouse's reference, else one
// scored at the slowdown the host calls for, see CPUMultiplier).
func (l Lighthouse) Run(t *testing.T, url string, opts LighthouseOptions) (byDefault, forPerformance *LighthouseReport, err error) {
	t.Helper()
	for attempt := 1; attempt <= lighthouseAttempts; attempt++ {
		if byDefault, forPerformance, err = l.run(t, url, opts); err == nil {
			return byDefault, forPerformance, nil
		}
		t.Logf("lighthouse attempt %d on %s: %v", attempt, url, err)
	}
	return nil, nil, err
}

// run gathers once and scores what was gathered.
func (l Lighthouse) run(t *testing.T, url string, opts LighthouseOptions) (byDefault, forPerformance *LighthouseReport, err error) {
	t.Helper()
	dir := t.TempDir()
	if err := l.gather(url, dir, opts); err != nil {
		return nil, nil, err
	}
	if byDefault, err = l.audit(t, dir, opts, defaultMultiplier); err != nil {
		return nil, nil, err
	}
	forPerformance = byDefault
	if m := CPUMultiplier(byDefault.Environment.BenchmarkIndex); m < defaultMultiplier && slices.Contains(opts.Categories, "performance") {
		forPerformance, err = l.audit(t, dir, opts, m)
	}
	return byDefault, forPerformance, err
}

// cmd runs the Lighthouse CLI with the flags every step of a run shares
// (Lighthouse refuses to audit with settings other than it gathered with).
func (l Lighthouse) cmd(step string, opts LighthouseOptions, args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	shared := []string{l.node, l.cli, "--only-categories=" + strings.Join(opts.Categories, ","),
		"--no-enable-error-reporting", "--quiet"}
	if len(opts.Headers) > 0 {
		raw, err := json.Marshal(opts.Headers)
		if err != nil {
			return fmt.Errorf("encode the extra headers: %w", err)
		}
		shared = append(shared, "--extra-headers="+string(raw))
	}
	args = append(shared, args...)
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Env = append(os.Environ(), "CHROME_PATH="+l.chrome)
	if msg, err := cmd.CombinedOutput(); err != nil {
		// The arguments are not quoted back: the headers may hold a session.
		return fmt.Errorf("lighthouse %s: %w\n%s", step, err, msg)
	}
	return nil
}

// gather loads url once in a fresh Chromium profile and saves what
// Lighthouse recorded (trace, network log, page artifacts and the host's
// benchmark index) in dir; audit then scores it.
func (l Lighthouse) gather(url, dir string, opts LighthouseOptions) error {
	return l.cmd("gather "+url, opts, url, "--gather-mode="+filepath.Join(dir, "artifacts"),
		"--chrome-flags="+lighthouseChromeFlags+" --user-data-dir="+filepath.Join(dir, "profile"))
}

// audit scores the run gathered in dir with the mobile profile at a CPU
// slowdown. Lighthouse audits only with the settings it gathered with;
// with simulated throttling the gathering is unthrottled and the slowdown
// only enters the simulation, so the saved setting is set to match first.
func (l Lighthouse) audit(t *testing.T, dir string, opts LighthouseOptions, multiplier float64) (*LighthouseReport, error) {
	t.Helper()
	setMultiplier(t, filepath.Join(dir, "artifacts", "artifacts.json"), multiplier)
	out := filepath.Join(dir, fmt.Sprintf("report-%.2f.json", multiplier))
	if err := l.cmd("audit", opts, "--audit-mode="+filepath.Join(dir, "artifacts"),
		fmt.Sprintf("--throttling.cpuSlowdownMultiplier=%.2f", multiplier), "--output=json", "--output-path="+out); err != nil {
		return nil, err
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("read the Lighthouse report: %v", err)
	}
	var r LighthouseReport
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("decode the Lighthouse report: %v", err)
	}
	if r.RuntimeError != nil && r.RuntimeError.Code != "" {
		return nil, fmt.Errorf("lighthouse runtime error %s: %s", r.RuntimeError.Code, r.RuntimeError.Message)
	}
	return &r, nil
}

// CPUMultiplier is the CPU slowdown with which a host of a benchmark index
// stands for Lighthouse's mobile device, from Lighthouse's calibration
// (docs/throttling.md of Lighthouse, "CPU throttling": 1533 is 4x, 1300 is
// 3x, 800 is 2x, 150 is 1x). The default 4x assumes a host of 1533; a host
// slowed by other work scores lower and needs less. It is never above the
// default, so a fast host is judged by the default mobile profile, and
// never below 1x.
func CPUMultiplier(benchmark float64) float64 {
	var m float64
	switch {
	case benchmark >= 1300:
		m = 3 + (benchmark-1300)/233
	case benchmark >= 800:
		m = 2 + (benchmark-800)/500
	default:
		m = 1 + (benchmark-150)/650
	}
	return math.Round(min(max(m, 1), defaultMultiplier)*100) / 100
}

// setMultiplier rewrites the CPU slowdown saved in Lighthouse's artifacts,
// keeping every other value as it was (numbers included, digit for digit).
func setMultiplier(t *testing.T, path string, multiplier float64) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read the Lighthouse artifacts: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var a map[string]any
	if err := dec.Decode(&a); err != nil {
		t.Fatalf("decode the Lighthouse artifacts: %v", err)
	}
	settings, _ := a["settings"].(map[string]any)
	throttling, _ := settings["throttling"].(map[string]any)
	if throttling == nil || settings["throttlingMethod"] != "simulate" {
		t.Fatalf("Lighthouse artifacts: got settings %v, want simulated throttling", settings)
	}
	throttling["cpuSlowdownMultiplier"] = json.Number(fmt.Sprintf("%.2f", multiplier))
	if raw, err = json.Marshal(a); err != nil {
		t.Fatalf("encode the Lighthouse artifacts: %v", err)
	}
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatalf("write the Lighthouse artifacts: %v", err)
	}
}
