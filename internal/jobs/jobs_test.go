package jobs_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/jobs"
)

// TestRunsAndFailuresAreCounted runs a task that succeeds and one that
// fails once each (at start; their period is far away) and checks the
// series and the log.
func TestRunsAndFailuresAreCounted(t *testing.T) {
	reg := prometheus.NewRegistry()
	var logs bytes.Buffer
	done := make(chan string, 3)
	tasks := []jobs.Task{
		{Name: "ok-job", Every: time.Hour, Run: func(context.Context) error { done <- "ok-job"; return nil }},
		{Name: "bad-job", Every: time.Hour, Run: func(context.Context) error { done <- "bad-job"; return errors.New("bank unreachable") }},
		{Name: "outage-job", Every: time.Hour, Run: func(context.Context) error {
			done <- "outage-job"
			return fmt.Errorf("list expired holds: %w", paylink.ErrUnavailable)
		}},
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		jobs.NewRunner(slog.New(slog.NewJSONHandler(&logs, nil)), jobs.NewMetrics(reg), tasks...).Run(ctx)
	}()
	<-done
	<-done
	<-done
	// The runs have returned; wait until both are recorded (a task's run
	// is recorded right after it returns), then stop the runner.
	want := `
# HELP paylink_job_failures_total Background job runs that returned an error, by task (the job's name).
# TYPE paylink_job_failures_total counter
paylink_job_failures_total{task="bad-job"} 1
paylink_job_failures_total{task="ok-job"} 0
paylink_job_failures_total{task="outage-job"} 1
# HELP paylink_job_runs_total Background job runs by task (the job's name).
# TYPE paylink_job_runs_total counter
paylink_job_runs_total{task="bad-job"} 1
paylink_job_runs_total{task="ok-job"} 1
paylink_job_runs_total{task="outage-job"} 1
`
	var err error
	for range 500 {
		if err = testutil.GatherAndCompare(reg, strings.NewReader(want), "paylink_job_runs_total", "paylink_job_failures_total"); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-stopped
	if err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(reg, "paylink_job_duration_seconds"); n != 3 {
		t.Errorf("duration series: got %d, want one per job", n)
	}
	if !strings.Contains(logs.String(), `"level":"ERROR","msg":"background job failed","job":"bad-job"`) || strings.Contains(logs.String(), `"job":"ok-job"`) {
		t.Errorf("log: got %s, want the failing job logged at ERROR and only it", logs.String())
	}
	// An outage is no bug: WARN, as the request paths log it (the metrics
	// sweep found six ERROR lines a minute of an outage).
	if !strings.Contains(logs.String(), `"level":"WARN","msg":"background job failed: the database is unavailable","job":"outage-job"`) {
		t.Errorf("log: got %s, want the job failed by an outage logged at WARN", logs.String())
	}
}

// TestJobsRunAsTheSystemActor checks that what a job changes is audited
// as that job's work: its context carries the system actor named after it.
func TestJobsRunAsTheSystemActor(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan paylink.Actor, 2)
	run := func(name string) jobs.Task {
		return jobs.Task{Name: name, Every: time.Hour, Run: func(ctx context.Context) error {
			got <- paylink.ActorFrom(ctx)
			return nil
		}}
	}
	done := make(chan struct{})
	go func() {
		jobs.NewRunner(slog.New(slog.DiscardHandler), nil, run("preauth-expiry"), run("spent-card-wipe")).Run(ctx)
		close(done)
	}()
	seen := map[string]paylink.ActorKind{}
	for range 2 {
		a := <-got
		seen[a.ID] = a.Kind
	}
	cancel()
	<-done
	for _, name := range []string{"preauth-expiry", "spent-card-wipe"} {
		if seen[name] != paylink.ActorSystem {
			t.Errorf("job %s: got actors %v, want kind %s with the job's name", name, seen, paylink.ActorSystem)
		}
	}
}

// TestARunPastItsTimeoutIsCutOffAndRunsAgain: a run that waits for ever
// (a lock an abandoned session holds) is cancelled at its timeout, logged
// and counted as a failure, and the task runs again at its next period.
func TestARunPastItsTimeoutIsCutOffAndRunsAgain(t *testing.T) {
	reg := prometheus.NewRegistry()
	var logs bytes.Buffer
	runs := make(chan error, 2)
	stuck := jobs.Task{Name: "stuck-job", Every: 50 * time.Millisecond, Timeout: 20 * time.Millisecond,
		Run: func(ctx context.Context) error {
			<-ctx.Done() // waits until cancelled, as a statement on a held lock does
			runs <- ctx.Err()
			return fmt.Errorf("expire holds: %w", ctx.Err())
		}}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		jobs.NewRunner(slog.New(slog.NewJSONHandler(&logs, nil)), jobs.NewMetrics(reg), stuck).Run(ctx)
	}()
	for i := range 2 {
		select {
		case err := <-runs:
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("run %d ended by %v, want its deadline", i+1, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("run %d never ended or never started: the task is stuck", i+1)
		}
	}
	failures := 0.0
	for range 500 { // the first run is recorded right after it returns
		if failures = counterValue(t, reg, "paylink_job_failures_total"); failures >= 1 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-stopped
	if failures < 1 {
		t.Errorf("failures of the stuck job: got %v, want each cut-off run counted", failures)
	}
	if !strings.Contains(logs.String(), `"job":"stuck-job"`) || !strings.Contains(logs.String(), "deadline exceeded") {
		t.Errorf("log: got %s, want the cut-off run logged as failed", logs.String())
	}
}

// counterValue is the value of the one series of the counter name in reg.
func counterValue(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == name && len(f.GetMetric()) == 1 {
			return f.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatalf("no single series %s", name)
	return 0
}
