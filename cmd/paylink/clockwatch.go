package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/sqlstore"
)

// maxClockRoundTrip is the longest read of the database's clock whose
// sample counts: the offset is measured from the round trip's midpoint,
// so its error is at most half the round trip (50 ms here, well under
// paylink.ClockTolerance). A slower read (a busy pool or database) is
// skipped until the next run.
const maxClockRoundTrip = 100 * time.Millisecond

// clockWatch measures how far this instance's clock (the Service's) is
// from the PostgreSQL server's, which every instance shares: recovery,
// webhook leases, settlement, the idempotency lock and hold expiry each
// decide by their own instance's clock, and their margins hold for
// instances at most paylink.ClockSkewTolerance apart (docs/operations.md).
// It warns once when the offset goes past paylink.ClockTolerance, and
// says so when it is back within. On SQLite (one process, one clock) it
// measures nothing and its gauge stays 0.
type clockWatch struct {
	store *sqlstore.Store
	clock func() time.Time // the Service's clock
	log   *slog.Logger
	// warned is whether the last counted sample was past the tolerance.
	warned bool
	// offset is paylink_clock_offset_seconds: this instance's clock less
	// the database server's (positive: this instance is ahead).
	offset prometheus.Gauge
}

func newClockWatch(st *sqlstore.Store, clock func() time.Time, log *slog.Logger) *clockWatch {
	return &clockWatch{store: st, clock: clock, log: log, offset: prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "paylink_clock_offset_seconds",
		Help: "This instance's clock less the PostgreSQL server's (positive: ahead), measured every minute; 0 on SQLite. Keep it within ±2 s.",
	})}
}

// measures reports whether there is a database clock to compare with.
func (w *clockWatch) measures() bool { return w != nil && w.store.Engine() == sqlstore.Postgres }

// check reads the database's clock between two readings of ours, and
// counts the sample when the round trip was short.
func (w *clockWatch) check(ctx context.Context) error {
	if !w.measures() {
		return nil
	}
	before := w.clock()
	db, err := w.store.DatabaseClock(ctx)
	if err != nil {
		return err
	}
	rtt := w.clock().Sub(before)
	if rtt < 0 || rtt > maxClockRoundTrip {
		w.log.Debug("clock offset not measured: the database's clock took too long to read", "round_trip", rtt.String())
		return nil
	}
	offset := before.Add(rtt / 2).Sub(db)
	w.offset.Set(offset.Seconds())
	switch past := offset > paylink.ClockTolerance || offset < -paylink.ClockTolerance; {
	case past && !w.warned:
		w.warned = true
		w.log.Warn("this instance's clock is off the database server's by more than the tolerance: instances' timing margins (webhook leases, recovery, settlement) assume their clocks within "+
			paylink.ClockSkewTolerance.String()+" of each other; sync its clock (NTP)",
			"offset", offset.Round(time.Millisecond).String(), "tolerance", paylink.ClockTolerance.String())
	case !past && w.warned:
		w.warned = false
		w.log.Info("this instance's clock is back within the tolerance of the database server's",
			"offset", offset.Round(time.Millisecond).String(), "tolerance", paylink.ClockTolerance.String())
	}
	return nil
}
