package main

import (
	"bytes"
	"context"
	"log/slog"
	"math"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/sqlstore"
)

// clockJob is the clock-offset-check among serve's background tasks for
// a watch on st whose clock is clock, or nil when there is none.
func clockJob(st *sqlstore.Store, clock func() time.Time, logs *bytes.Buffer) (*clockWatch, func(context.Context) error) {
	log := newLoggerAt(logs, slog.LevelInfo)
	w := newClockWatch(st, clock, log)
	for _, task := range backgroundTasks(nil, newSchemaWatch(st, log), w) {
		if task.Name == "clock-offset-check" {
			return w, task.Run
		}
	}
	return w, nil
}

// TestRunningInstanceWarnsWhenItsClockIsOff: on PostgreSQL, serve's
// clock-offset-check job measures the Service's clock against the
// database server's: 10 s ahead or behind sets paylink_clock_offset_seconds
// near +10 or -10 and logs one warning when it crosses the tolerance (not
// one a minute); back within, it says so at INFO, and a second crossing
// warns again; within the tolerance it never warns; a sample whose round
// trip is too long to trust (the clock moving 200 ms during the read)
// changes nothing.
func TestRunningInstanceWarnsWhenItsClockIsOff(t *testing.T) {
	st, err := sqlstore.Open(context.Background(), pg.Database(t))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// The instance's clock stands still during a step's check (real time
	// at the step's start, shifted): the round trip it measures is then
	// 0, or 200 ms per reading when slow, whatever the machine's load.
	// With real time, a read of the database slower than
	// maxClockRoundTrip under load skipped a sample the step counts on.
	var (
		logs  bytes.Buffer
		start time.Time     // real time at the step's start
		shift time.Duration // the instance's clock less real time
		slow  bool          // each reading of the clock 200 ms after the last
		reads time.Duration
	)
	w, check := clockJob(st, func() time.Time {
		if slow {
			reads += 200 * time.Millisecond
		}
		return start.Add(shift + reads)
	}, &logs)
	if check == nil {
		t.Fatal("no clock-offset-check among serve's background tasks on PostgreSQL")
	}
	count := func(s string) int { return strings.Count(logs.String(), s) }
	for i, step := range []struct {
		shift      time.Duration
		slow       bool
		wantOffset float64 // seconds
		wantWarn   int     // warnings so far
		wantBack   int     // back-within messages so far
	}{
		{0, false, 0, 0, 0},
		{paylink.ClockTolerance / 2, false, paylink.ClockTolerance.Seconds() / 2, 0, 0}, // within: no warning
		{10 * time.Second, false, 10, 1, 0},
		{10 * time.Second, false, 10, 1, 0}, // still off: no second warning
		{0, true, 10, 1, 0},                 // a slow sample is skipped: still 10, still warned
		{-10 * time.Second, false, -10, 1, 0},
		{time.Second, false, 1, 1, 1},
		{-10 * time.Second, false, -10, 2, 1},
	} {
		shift, slow, reads, start = step.shift, step.slow, 0, time.Now()
		if err := check(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := testutil.ToFloat64(w.offset); math.Abs(got-step.wantOffset) > 0.5 {
			t.Errorf("step %d: got paylink_clock_offset_seconds %.3f, want about %v", i, got, step.wantOffset)
		}
		if got, got2 := count("clock is off the database server's"), count("back within the tolerance"); got != step.wantWarn || got2 != step.wantBack {
			t.Errorf("step %d: got %d warnings and %d back-within messages, want %d and %d:\n%s", i, got, got2, step.wantWarn, step.wantBack, logs.String())
		}
	}
	if want := `"level":"WARN","msg":"this instance's clock is off`; !strings.Contains(logs.String(), want) {
		t.Errorf("the warning is not logged at WARN with its message (%s):\n%s", want, logs.String())
	}
	// About -10 s: within the half second the gauge is checked to, on
	// either side (the database reads its clock a little after ours).
	if !regexp.MustCompile(`"offset":"-(10(\.[0-4]\d*)?|9\.[5-9]\d*)s","tolerance":"2s"`).MatchString(logs.String()) {
		t.Errorf("the second warning does not name the offset (about -10s) and the tolerance:\n%s", logs.String())
	}
}

// TestNoClockCheckOnSQLite: SQLite is one process with one clock, so
// serve runs no clock-offset-check there and its gauge stays 0.
func TestNoClockCheckOnSQLite(t *testing.T) {
	st, err := sqlstore.Open(context.Background(), filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var logs bytes.Buffer
	w, check := clockJob(st, func() time.Time { return time.Now().Add(time.Hour) }, &logs)
	if check != nil {
		t.Error("got a clock-offset-check on SQLite, want none")
	}
	if err := w.check(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := testutil.ToFloat64(w.offset); got != 0 || logs.Len() > 0 {
		t.Errorf("got paylink_clock_offset_seconds %v and logs %q, want 0 and none", got, logs.String())
	}
}

// TestMarginsExceedTheClockSkewTolerance: every timing margin between
// instances is larger than the skew the clock check tolerates between two
// of them (each within paylink.ClockTolerance of the database), with
// room for a commit.
func TestMarginsExceedTheClockSkewTolerance(t *testing.T) {
	room := paylink.ClockSkewTolerance + 5*time.Second
	for _, m := range []struct {
		name   string
		margin time.Duration
	}{
		{"recovery: ProcessingTimeout less the window a call must end in", paylink.ProcessingTimeout - paylink.CallWindow},
		{"settlement: SettlementGrace", paylink.SettlementGrace},
		{"idempotency: IdempotencyLock less MaxRequestTime", paylink.IdempotencyLock - paylink.MaxRequestTime},
	} {
		if m.margin < room {
			t.Errorf("%s: got %v, want at least %v (skew tolerance %v and 5 s for a commit)", m.name, m.margin, room, paylink.ClockSkewTolerance)
		}
	}
}
