package main

import (
	"crypto/sha256"
	"os"
	"testing"
	"time"
)

func TestParseStatCPU(t *testing.T) {
	// A command name with spaces and parentheses, as a process may choose.
	stat := "4242 (my (odd) prog) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 37 0 0 20 0 8 0 100 123456 789 18446744073709551615\n"
	got, err := parseStatCPU([]byte(stat))
	if want := 287 * clockTick; err != nil || got != want {
		t.Errorf("got %v (%v), want %v", got, err, want)
	}
	for _, bad := range []string{"", "1 (x S 1 2", "1 (x) S 1 2 3", "1 (x) S 1 2 3 4 5 6 7 8 9 10 a b"} {
		if _, err := parseStatCPU([]byte(bad)); err == nil {
			t.Errorf("%q: got no error", bad)
		}
	}
}

func TestParseVmHWM(t *testing.T) {
	status := "Name:\tpaylink\nVmPeak:\t 1300000 kB\nVmHWM:\t   57123 kB\nVmRSS:\t   50000 kB\n"
	if got, err := parseVmHWM([]byte(status)); err != nil || got != 57123<<10 {
		t.Errorf("got %d (%v), want %d", got, err, 57123<<10)
	}
	for _, bad := range []string{"Name:\tx\n", "VmHWM:\tlots kB\n", "VmHWM:\t12 MB\n"} {
		if _, err := parseVmHWM([]byte(bad)); err == nil {
			t.Errorf("%q: got no error", bad)
		}
	}
}

// TestProcessCPUAgreesWithGetrusage reads this process's CPU from /proc
// and from getrusage after burning some: the two must agree to within
// a few of /proc's ticks, which checks the fields and the unit.
func TestProcessCPUAgreesWithGetrusage(t *testing.T) {
	sum := sha256.Sum256(nil)
	for start := selfCPU(); selfCPU()-start < 300*time.Millisecond; {
		for range 1000 {
			sum = sha256.Sum256(sum[:])
		}
	}
	fromProc, err := processCPU(os.Getpid())
	fromRusage := selfCPU()
	if err != nil {
		t.Fatal(err)
	}
	if diff := (fromRusage - fromProc).Abs(); diff > 5*clockTick {
		t.Errorf("got %v from /proc and %v from getrusage, want them within %v", fromProc, fromRusage, 5*clockTick)
	}
	if rss, err := peakRSS(os.Getpid()); err != nil || rss < 1<<20 {
		t.Errorf("got peak RSS %d (%v), want at least 1 MiB", rss, err)
	}
	if _, err := processCPU(-1); err == nil {
		t.Error("pid -1: got no error")
	}
}
