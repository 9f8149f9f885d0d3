package checkout_test

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

// lighthouseRuns is how many times Lighthouse audits the page: the
// performance score is the median of the runs, as Lighthouse advises for
// a score that varies from run to run.
const lighthouseRuns = 3

// minScore is the lowest acceptable Lighthouse score of each category.
const minScore = 0.95

// chromeFlags start Lighthouse's Chromium headless and quiet: without the
// background-networking flags it keeps calling hosts this sandbox refuses.
const chromeFlags = "--headless=new --no-sandbox --disable-gpu --disable-quic --no-first-run " +
	"--disable-background-networking --disable-component-update --disable-sync"

// lighthouseTools are the programs one Lighthouse run needs.
type lighthouseTools struct {
	node, cli, chrome string
}

// findLighthouse locates node, the pinned Lighthouse CLI (.ci/node_modules,
// installed by `npm ci` in .ci) and Chromium. Without them the test skips,
// and fails with PAYLINK_REQUIRE_ALL=1.
func findLighthouse(t *testing.T) lighthouseTools {
	t.Helper()
	var missing []string
	tools := lighthouseTools{cli: filepath.Join("..", "..", ".ci", "node_modules", "lighthouse", "cli", "index.js")}
	if _, err := os.Stat(tools.cli); err != nil {
		missing = append(missing, "the Lighthouse CLI (run npm ci in .ci): "+err.Error())
	}
	var err error
	if tools.node, err = exec.LookPath("node"); err != nil {
		missing = append(missing, "node: "+err.Error())
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if tools.chrome, err = exec.LookPath(name); err == nil {
			break
		}
	}
	if tools.chrome == "" {
		missing = append(missing, "chromium not found on PATH (install the Debian package chromium)")
	}
	if len(missing) == 0 {
		return tools
	}
	if os.Getenv("PAYLINK_REQUIRE_ALL") == "1" {
		t.Fatalf("the Lighthouse audit needs (PAYLINK_REQUIRE_ALL=1): %s", strings.Join(missing, "; "))
	}
	t.Skipf("skipping the Lighthouse audit: %s", strings.Join(missing, "; "))
	return tools
}

// lighthouseReport is the part of Lighthouse's JSON report the test reads.
type lighthouseReport struct {
	Categories map[string]struct {
		Score *float64 `json:"score"`
	} `json:"categories"`
	Audits map[string]struct {
		NumericValue float64 `json:"numericValue"`
	} `json:"audits"`
	Environment struct {
		BenchmarkIndex float64 `json:"benchmarkIndex"`
	} `json:"environment"`
	RuntimeError *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"runtimeError"`
}

// score is a category's score, -1 when Lighthouse could not compute it.
func (r *lighthouseReport) score(category string) float64 {
	if c, ok := r.Categories[category]; ok && c.Score != nil {
		return *c.Score
	}
	return -1
}

// String sums up a run for the test log: the scores, the metrics behind
// the performance score, and the host's speed as Lighthouse measured it
// (a loaded machine has a low benchmark index and a longer blocking time).
func (r *lighthouseReport) String() string {
	ms := func(id string) int { return int(r.Audits[id].NumericValue) }
	return fmt.Sprintf("performance %.2f accessibility %.2f best-practices %.2f; FCP %d ms, LCP %d ms, TBT %d ms, CLS %.3f, SI %d ms; benchmark index %.0f",
		r.score("performance"), r.score("accessibility"), r.score("best-practices"),
		ms("first-contentful-paint"), ms("largest-contentful-paint"), ms("total-blocking-time"),
		r.Audits["cumulative-layout-shift"].NumericValue, ms("speed-index"), r.Environment.BenchmarkIndex)
}

// lighthouseCmd runs the Lighthouse CLI with the flags every run shares.
func lighthouseCmd(tools lighthouseTools, args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	args = append([]string{tools.node, tools.cli, "--only-categories=performance,accessibility,best-practices",
		"--no-enable-error-reporting", "--quiet"}, args...)
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Env = append(os.Environ(), "CHROME_PATH="+tools.chrome)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %w\n%s", strings.Join(args, " "), err, msg)
	}
	return nil
}

// lighthouseGather loads url once in a fresh Chromium profile and saves what
// Lighthouse recorded (trace, network log, page artifacts and the host's
// benchmark index) in dir; lighthouseAudit then scores it.
func lighthouseGather(tools lighthouseTools, url, dir string) error {
	return lighthouseCmd(tools, url, "--gather-mode="+filepath.Join(dir, "artifacts"),
		"--chrome-flags="+chromeFlags+" --user-data-dir="+filepath.Join(dir, "profile"))
}

// cpuMultiplier is the CPU slowdown with which this host stands for
// Lighthouse's mobile device, from Lighthouse's calibration of its
// benchmark index (docs/throttling.md of Lighthouse, "CPU throttling":
// 1533 is 4x, 1300 is 3x, 800 is 2x, 150 is 1x). The default 4x assumes a
// host of 1533; a host slowed by other work scores lower and needs less.
// It is never above the default, so a fast host is judged by the default
// mobile profile, and never below 1x.
func cpuMultiplier(benchmark float64) float64 {
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

// defaultMultiplier is the CPU slowdown of Lighthouse's mobile profile.
const defaultMultiplier = 4

// lighthouseAudit scores the run gathered in dir with the mobile profile at a CPU
// slowdown. Lighthouse audits only with the settings it gathered with;
// with simulated throttling the gathering is unthrottled and the slowdown
// only enters the simulation, so the saved setting is set to match first.
func lighthouseAudit(t *testing.T, tools lighthouseTools, dir string, multiplier float64) (*lighthouseReport, error) {
	t.Helper()
	setMultiplier(t, filepath.Join(dir, "artifacts", "artifacts.json"), multiplier)
	out := filepath.Join(dir, fmt.Sprintf("report-%.2f.json", multiplier))
	if err := lighthouseCmd(tools, "--audit-mode="+filepath.Join(dir, "artifacts"),
		fmt.Sprintf("--throttling.cpuSlowdownMultiplier=%.2f", multiplier), "--output=json", "--output-path="+out); err != nil {
		return nil, err
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("read the Lighthouse report: %v", err)
	}
	var r lighthouseReport
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("decode the Lighthouse report: %v", err)
	}
	if r.RuntimeError != nil && r.RuntimeError.Code != "" {
		return nil, fmt.Errorf("lighthouse runtime error %s: %s", r.RuntimeError.Code, r.RuntimeError.Message)
	}
	return &r, nil
}

// lighthouseRun gathers and scores one run: the default mobile profile's
// report, and the report that decides performance (the same one on a
// host as fast as Lighthouse's reference, else the calibrated one).
func lighthouseRun(t *testing.T, tools lighthouseTools, url string) (byDefault, forPerformance *lighthouseReport, err error) {
	t.Helper()
	dir := t.TempDir()
	if err := lighthouseGather(tools, url, dir); err != nil {
		return nil, nil, err
	}
	if byDefault, err = lighthouseAudit(t, tools, dir, defaultMultiplier); err != nil {
		return nil, nil, err
	}
	forPerformance = byDefault
	if m := cpuMultiplier(byDefault.Environment.BenchmarkIndex); m < defaultMultiplier {
		forPerformance, err = lighthouseAudit(t, tools, dir, m)
	}
	return byDefault, forPerformance, err
}

// lighthouseAttempts bounds how often one run is tried. On a loaded
// machine Lighthouse now and then fails to record the trace (NO_NAVSTART,
// "Please run Lighthouse again"); that says nothing about the page.
const lighthouseAttempts = 3

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

// TestCPUMultiplier follows Lighthouse's calibration table, capped at the
// default profile's 4x and floored at 1x.
func TestCPUMultiplier(t *testing.T) {
	tests := []struct {
		benchmark, want float64
	}{
		{2500, 4}, {1533, 4}, {1300, 3}, {1050, 2.5}, {800, 2}, {475, 1.5}, {150, 1}, {50, 1},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.benchmark), func(t *testing.T) {
			if got := cpuMultiplier(tt.benchmark); got != tt.want {
				t.Errorf("cpuMultiplier(%v): got %v, want %v", tt.benchmark, got, tt.want)
			}
		})
	}
}

// TestBrowserLighthouse audits the hosted payment page with Lighthouse's
// mobile profile (simulated throttling): accessibility and best practices
// at least 0.95 in every run, performance at least 0.95 as the median of
// three runs. Each run is scored at the CPU slowdown its own benchmark
// index calls for (the default 4x on a host as fast as Lighthouse's
// reference, less on a loaded one, see cpuMultiplier); the log shows the
// default profile's score of every run beside it.
func TestBrowserLighthouse(t *testing.T) {
	tools := findLighthouse(t)
	env := start(t)
	url := link(t, env, env.Onboard(), "10.50", nil).Str("url")
	var perf []float64
	for run := 1; run <= lighthouseRuns; run++ {
		byDefault, forPerformance, err := lighthouseRun(t, tools, url)
		for attempt := 2; err != nil && attempt <= lighthouseAttempts; attempt++ {
			t.Logf("run %d: %v; trying again", run, err)
			byDefault, forPerformance, err = lighthouseRun(t, tools, url)
		}
		if err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		t.Logf("run %d, default mobile profile (4x): %s", run, byDefault)
		for _, category := range []string{"accessibility", "best-practices"} {
			if got := byDefault.score(category); got < minScore {
				t.Errorf("run %d: %s score: got %.2f, want at least %.2f", run, category, got, minScore)
			}
		}
		if forPerformance != byDefault {
			t.Logf("run %d, calibrated to the host (%.2fx): %s", run, cpuMultiplier(byDefault.Environment.BenchmarkIndex), forPerformance)
		}
		perf = append(perf, forPerformance.score("performance"))
	}
	slices.Sort(perf)
	if got := perf[len(perf)/2]; got < minScore {
		t.Errorf("performance score, median of %v: got %.2f, want at least %.2f", perf, got, minScore)
	}
}
