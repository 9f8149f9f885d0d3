package paylink

import (
	"context"
	"time"
)

// Job is one of the Service's maintenance jobs. Every serving instance
// runs each one every Every; each claims its rows with a compare-and-set
// and commits in batches, so several instances on one database handle
// every row once, and a run cut short loses only its unfinished batch.
type Job struct {
	Name  string
	Every time.Duration
	Run   func(context.Context) error
}

// Jobs are the Service's maintenance jobs, in one place: what each does
// is documented on the method it runs and in docs/design.md ("Background
// work"). `paylink serve` runs them beside its own checks of the schema
// version and the clock.
func (s *Service) Jobs() []Job {
	return []Job{
		job("transaction-token-cleanup", 10*time.Minute, s.CleanupTransactionTokens),
		job("spent-card-wipe", 10*time.Minute, s.WipeSpentCards),
		job("dashboard-session-cleanup", 10*time.Minute, s.CleanupSessions),
		job("idempotency-key-cleanup", 10*time.Minute, s.CleanupIdempotencyKeys),
		job("interrupted-transaction-recovery", time.Minute, s.RecoverInterrupted),
		job("direct-debit-clearing", time.Minute, s.ClearDirectDebits),
		job("3ds-challenge-expiry", time.Minute, s.ExpireChallenges),
		job("preauth-expiry", time.Minute, s.ExpirePreAuths),
		job("settlement", 10*time.Minute, s.SettleDue),
	}
}

// job is a Job running run, whose count or result only its tests read.
func job[T any](name string, every time.Duration, run func(context.Context) (T, error)) Job {
	return Job{Name: name, Every: every, Run: func(ctx context.Context) error {
		_, err := run(ctx)
		return err
	}}
}
