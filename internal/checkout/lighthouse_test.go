package checkout_test

import (
	"slices"
	"testing"

	"github.com/paylink/paylink/internal/browsertest"
)

// lighthouseRuns is how many times Lighthouse audits the page: the
// performance score is the median of the runs, as Lighthouse advises for
// a score that varies from run to run. Five, as Lighthouse's guidance on
// variability suggests: with three, one run slowed by the rest of the
// suite's parallel load after its benchmark index was taken (a 4x run at
// index 1724 with 338 ms of blocking time) and one more loaded run failed
// CI once.
const lighthouseRuns = 5

// TestBrowserLighthouse audits the hosted payment page with Lighthouse's
// mobile profile (simulated throttling): accessibility and best practices
// at least 0.95 in every run, performance at least 0.95 as the median of
// lighthouseRuns runs. Each run is scored at the CPU slowdown its own benchmark
// index calls for (the default 4x on a host as fast as Lighthouse's
// reference, less on a loaded one, see browsertest.CPUMultiplier); the
// log shows the default profile's score of every run beside it.
func TestBrowserLighthouse(t *testing.T) {
	lh := browsertest.FindLighthouse(t, repoRoot)
	env := start(t)
	url := link(t, env, env.Onboard(), "10.50", nil).Str("url")
	opts := browsertest.LighthouseOptions{Categories: []string{"performance", "accessibility", "best-practices"}}
	var perf []float64
	for run := 1; run <= lighthouseRuns; run++ {
		byDefault, forPerformance, err := lh.Run(t, url, opts)
		if err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		t.Logf("run %d, default mobile profile (4x): %s", run, byDefault)
		for _, category := range []string{"accessibility", "best-practices"} {
			if got := byDefault.Score(category); got < browsertest.MinLighthouseScore {
				t.Errorf("run %d: %s score: got %.2f, want at least %.2f (below 1: %v)", run, category, got, browsertest.MinLighthouseScore, byDefault.Failed())
			}
		}
		if forPerformance != byDefault {
			t.Logf("run %d, calibrated to the host (%.2fx): %s", run, browsertest.CPUMultiplier(byDefault.Environment.BenchmarkIndex), forPerformance)
		}
		perf = append(perf, forPerformance.Score("performance"))
	}
	slices.Sort(perf)
	if got := perf[len(perf)/2]; got < browsertest.MinLighthouseScore {
		t.Errorf("performance score, median of %v: got %.2f, want at least %.2f", perf, got, browsertest.MinLighthouseScore)
	}
}
