package main

import "runtime/debug"

// The garbage collector's settings while serving (docs/performance.md,
// "The garbage collector's pace"). A purchase allocates about 30 KB and
// keeps almost none of it, so with Go's default (a collection whenever
// the heap doubles, from a floor of 4 MB) the collector ran every 30 ms
// under load, and with the stacks it shrinks and connection goroutines
// grow again it took about an eighth of a flow's CPU. Letting the heap
// grow to five times what is live costs about 11 MiB of RSS under load.
// The soft limit keeps a large live heap (the sandbox acquirer's memory
// full, say) from growing five times over: near it the collector runs
// as often as it must.
const (
	servingGCPercent   = 400
	servingMemoryLimit = 100 << 20
)

// tuneGC sets the collector for serving, except what the operator set
// with GOGC or GOMEMLIMIT, which the runtime has read already.
func tuneGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(servingGCPercent)
	}
	if getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(servingMemoryLimit)
	}
}
