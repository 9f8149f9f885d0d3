package main

import (
	"runtime/debug"
	"testing"
)

// gcSettings reads the collector's percent and memory limit without
// changing them.
func gcSettings() (int, int64) {
	percent := debug.SetGCPercent(100)
	debug.SetGCPercent(percent)
	return percent, debug.SetMemoryLimit(-1)
}

// TestTuneGC: serving sets the collector's pace and soft memory limit,
// but leaves each alone when the operator set it in the environment.
func TestTuneGC(t *testing.T) {
	percent, limit := gcSettings()
	t.Cleanup(func() {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
	})
	const otherPercent, otherLimit = 77, 1 << 40
	for _, c := range []struct {
		name      string
		env       map[string]string
		wantPct   int
		wantLimit int64
	}{
		{"nothing set", nil, servingGCPercent, servingMemoryLimit},
		{"GOGC set", map[string]string{"GOGC": "77"}, otherPercent, servingMemoryLimit},
		{"GOMEMLIMIT set", map[string]string{"GOMEMLIMIT": "1TiB"}, servingGCPercent, otherLimit},
		{"both set", map[string]string{"GOGC": "77", "GOMEMLIMIT": "1TiB"}, otherPercent, otherLimit},
	} {
		t.Run(c.name, func(t *testing.T) {
			// What the runtime would have read from the variables set.
			debug.SetGCPercent(otherPercent)
			debug.SetMemoryLimit(otherLimit)
			tuneGC(func(k string) string { return c.env[k] })
			if p, l := gcSettings(); p != c.wantPct || l != c.wantLimit {
				t.Errorf("got GC percent %d and memory limit %d, want %d and %d", p, l, c.wantPct, c.wantLimit)
			}
		})
	}
}
