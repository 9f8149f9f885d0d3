// Package jobs runs paylink's periodic background work: pre-authorisation
// expiry, transaction-token clean-up, direct-debit clearing and webhook
// delivery sweeps. Each task is idempotent and claims its rows with
// compare-and-set updates, so several instances on one PostgreSQL can run
// the same tasks and every row is still processed exactly once.
package jobs

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/paylink/paylink"
)

// Task is one periodic job.
type Task struct {
	Name  string
	Every time.Duration
	Run   func(ctx context.Context) error
}

// Runner owns the goroutines of a set of tasks.
type Runner struct {
	tasks []Task
	log   *slog.Logger
}

// NewRunner returns a runner for tasks.
func NewRunner(log *slog.Logger, tasks ...Task) *Runner {
	return &Runner{tasks: tasks, log: log}
}

// Run runs every task once at start and then every period, until ctx is
// cancelled; it returns when all tasks have stopped.
func (r *Runner) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for _, t := range r.tasks {
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
		if err := t.Run(ctx); err != nil && ctx.Err() == nil {
			r.log.Error("background job failed", "job", t.Name, "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}
