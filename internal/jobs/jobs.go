// Package jobs runs paylink's periodic background tasks, which cmd/paylink
// serve defines (expiries, clearing, recovery, settlement, clean-ups and
// checks; docs/design.md lists them): one goroutine per task, a first run
// at start-up, each run bounded in time, and paylink_job_* metrics. Each
// task is idempotent and claims its rows with compare-and-set updates, so
// several instances on one PostgreSQL can run the same tasks and every row
// is still processed exactly once.
package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/paylink/paylink"
)

// Task is one periodic job.
type Task struct {
	Name  string
	Every time.Duration
	Run   func(ctx context.Context) error
	// Timeout bounds one run (DefaultTimeout if zero): a run waiting on a
	// lock an abandoned session holds, or on a connection that died
	// unnoticed, is cancelled and counted as a failure, and the next
	// period runs the task again, instead of the task never running
	// again. Every task commits its work in batches and claims its rows,
	// so a cancelled run loses nothing but its unfinished batch.
	Timeout time.Duration
}

// DefaultTimeout bounds a task's run when its Timeout is zero: longer than
// any period, and than any batch a task commits takes.
const DefaultTimeout = 10 * time.Minute

// Runner owns the goroutines of a set of tasks.
type Runner struct {
	tasks   []Task
	log     *slog.Logger
	metrics *Metrics
}

// NewRunner returns a runner for tasks; metrics may be nil.
func NewRunner(log *slog.Logger, metrics *Metrics, tasks ...Task) *Runner {
	return &Runner{tasks: tasks, log: log, metrics: metrics}
}

// Run runs every task once at start and then every period, until ctx is
// cancelled; it returns when all tasks have stopped.
func (r *Runner) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for _, t := range r.tasks {
		r.metrics.declare(t.Name)
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.loop(ctx, t)
		}()
	}
	wg.Wait()
}

// loop runs t periodically as the system actor named after it, so that
// what the job changes is audited as its work.
func (r *Runner) loop(ctx context.Context, t Task) {
	ctx = paylink.WithActor(ctx, paylink.Actor{Kind: paylink.ActorSystem, ID: t.Name})
	ticker := time.NewTicker(t.Every)
	defer ticker.Stop()
	for {
		r.runOnce(ctx, t)
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// runOnce runs t once within its timeout, logging and counting a failure
// (a run past its timeout is one); a run cut short by shutdown is neither.
func (r *Runner) runOnce(ctx context.Context, t Task) {
	timeout := t.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	err := t.Run(runCtx)
	if ctx.Err() != nil {
		return
	}
	if err == nil && runCtx.Err() != nil {
		err = fmt.Errorf("run cut off after %v: %w", timeout, runCtx.Err())
	}
	switch {
	case errors.Is(err, paylink.ErrUnavailable): // an outage, not a bug: ERROR lines are for bugs (operations.md)
		r.log.Warn("background job failed: the database is unavailable", "job", t.Name, "err", err)
	case err != nil:
		r.log.Error("background job failed", "job", t.Name, "err", err)
	}
	r.metrics.observe(t.Name, err, time.Since(start))
}

// Metrics are the job series: runs, failures and duration per job, so
// that a job failing every minute (an unreachable bank, a bug) pages
// someone instead of filling a log.
type Metrics struct {
	runs     *prometheus.CounterVec
	failures *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// NewMetrics registers the job series in reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "paylink_job_runs_total", Help: "Background job runs by task (the job's name).",
		}, []string{"task"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "paylink_job_failures_total", Help: "Background job runs that returned an error, by task (the job's name).",
		}, []string{"task"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "paylink_job_duration_seconds", Help: "Background job run time by task (the job's name).",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"task"}),
	}
	reg.MustRegister(m.runs, m.failures, m.duration)
	return m
}

// declare makes a job's series exist before its first run, so that a
// rate over them is 0 rather than absent.
func (m *Metrics) declare(job string) {
	if m == nil {
		return
	}
	m.runs.WithLabelValues(job)
	m.failures.WithLabelValues(job)
}

// observe records one finished run; a nil receiver records nothing.
func (m *Metrics) observe(job string, err error, d time.Duration) {
	if m == nil {
		return
	}
	m.runs.WithLabelValues(job).Inc()
	if err != nil {
		m.failures.WithLabelValues(job).Inc()
	}
	m.duration.WithLabelValues(job).Observe(d.Seconds())
}
