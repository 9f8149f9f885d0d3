package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"
)

// clockTick is the unit of utime and stime in /proc/<pid>/stat (USER_HZ),
// 100 per second on every Linux architecture Go supports. /proc's
// resolution is therefore 10 ms: over a 10 s window at one core that is
// 0.1%.
const clockTick = 10 * time.Millisecond

// processCPU is the CPU time (user + system) process pid has used so far,
// from /proc/<pid>/stat.
func processCPU(pid int) (time.Duration, error) {
	st, err := readStat(pid)
	return st.cpu, err
}

// familyCPU is the CPU time of process pid and of its children: a
// PostgreSQL server's postmaster and its backends, one per connection.
// Living children are found by their parent pid in /proc/*/stat; those
// that ended count through the parent's reaped-children times.
func familyCPU(pid int) (time.Duration, error) {
	st, err := readStat(pid)
	if err != nil {
		return 0, err
	}
	total := st.cpu + st.reaped
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, fmt.Errorf("database CPU: %w", err)
	}
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil || child == pid {
			continue
		}
		if c, err := readStat(child); err == nil && c.ppid == pid {
			total += c.cpu // a child that ended meanwhile is skipped
		}
	}
	return total, nil
}

// stat is what the load tool reads of /proc/<pid>/stat.
type stat struct {
	ppid   int
	cpu    time.Duration // utime + stime
	reaped time.Duration // cutime + cstime: children waited for
}

func readStat(pid int) (stat, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return stat{}, fmt.Errorf("process CPU: %w", err)
	}
	return parseStat(b)
}

// parseStat reads fields 4 (ppid) and 14 to 17 (utime, stime, cutime,
// cstime) of a /proc/<pid>/stat line. Fields are counted after the
// command name's closing parenthesis, since the name itself may hold
// spaces and parentheses.
func parseStat(line []byte) (stat, error) {
	i := bytes.LastIndexByte(line, ')')
	if i < 0 {
		return stat{}, fmt.Errorf("/proc stat %q: no command name", line)
	}
	// After ") " come field 3 (state) onwards: utime is the 12th of them.
	f := bytes.Fields(line[i+1:])
	if len(f) < 15 {
		return stat{}, fmt.Errorf("/proc stat: %d fields after the name, want at least 15", len(f))
	}
	var n [5]int64
	var errs []error
	for j, field := range [5]int{1, 11, 12, 13, 14} {
		var err error
		n[j], err = strconv.ParseInt(string(f[field]), 10, 64)
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return stat{}, fmt.Errorf("/proc stat: %w", err)
	}
	return stat{ppid: int(n[0]), cpu: time.Duration(n[1]+n[2]) * clockTick, reaped: time.Duration(n[3]+n[4]) * clockTick}, nil
}

// peakRSS is the peak resident set size of process pid in bytes (VmHWM
// in /proc/<pid>/status).
func peakRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("server RSS: %w", err)
	}
	return parseVmHWM(b)
}

// parseVmHWM reads the "VmHWM:  1234 kB" line of /proc/<pid>/status.
func parseVmHWM(status []byte) (int64, error) {
	for _, line := range bytes.Split(status, []byte("\n")) {
		v, ok := bytes.CutPrefix(line, []byte("VmHWM:"))
		if !ok {
			continue
		}
		kb, ok := bytes.CutSuffix(bytes.TrimSpace(v), []byte(" kB"))
		n, err := strconv.ParseInt(string(bytes.TrimSpace(kb)), 10, 64)
		if !ok || err != nil {
			return 0, fmt.Errorf("/proc status: VmHWM %q", v)
		}
		return n << 10, nil
	}
	return 0, errors.New("/proc status: no VmHWM line")
}

// selfCPU is the CPU time the load generator itself has used, from
// getrusage (exact, and without the servers it started).
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
