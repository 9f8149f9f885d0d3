package jobs_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/jobs"
)

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
		jobs.NewRunner(slog.New(slog.DiscardHandler), run("preauth-expiry"), run("spent-card-wipe")).Run(ctx)
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
