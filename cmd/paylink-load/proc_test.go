package main

import (
	"bufio"
	"crypto/sha256"
	"os"
	"os/exec"
	"testing"
	"time"
)

func TestParseStat(t *testing.T) {
	// A command name with spaces and parentheses, as a process may choose.
	line := "4242 (my (odd) prog) S 77 4242 4242 0 -1 4194560 1000 0 0 0 250 37 5 3 20 0 8 0 100 123456 789 18446744073709551615\n"
	got, err := parseStat([]byte(line))
	if want := (stat{ppid: 77, cpu: 287 * clockTick, reaped: 8 * clockTick}); err != nil || got != want {
		t.Errorf("got %+v (%v), want %+v", got, err, want)
	}
	for _, bad := range []string{"", "1 (x S 1 2", "1 (x) S 1 2 3", "1 (x) S 1 2 3 4 5 6 7 8 9 10 a b 0 0"} {
		if _, err := parseStat([]byte(bad)); err == nil {
			t.Errorf("%q: got no error", bad)
		}
	}
}

// TestFamilyCPUCountsChildren starts a child that burns some CPU, then
// sleeps: the family's CPU holds the parent's and the child's.
func TestFamilyCPUCountsChildren(t *testing.T) {
	cmd := exec.Command("sh", "-c", "i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done; echo burnt; exec sleep 60")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "burnt\n" {
		t.Fatalf("child said %q (%v)", line, err)
	}
	child, err := processCPU(cmd.Process.Pid)
	if err != nil || child <= 0 {
		t.Fatalf("got child CPU %v (%v), want some", child, err)
	}
	own, err := readStat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	family, err := familyCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if least := own.cpu + own.reaped + child; family < least {
		t.Errorf("got family CPU %v, want at least own %v + reaped %v + child %v", family, own.cpu, own.reaped, child)
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
