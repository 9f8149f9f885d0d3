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
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("server CPU: %w", err)
	}
	return parseStatCPU(b)
}

// parseStatCPU reads utime and stime (fields 14 and 15) of a
// /proc/<pid>/stat line. Fields are counted after the command name's
// closing parenthesis, since the name itself may hold spaces and
// parentheses.
func parseStatCPU(stat []byte) (time.Duration, error) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc stat %q: no command name", stat)
	}
	// After ") " come field 3 (state) onwards: utime is the 12th of them.
	f := bytes.Fields(stat[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc stat: %d fields after the name, want at least 13", len(f))
	}
	utime, err1 := strconv.ParseInt(string(f[11]), 10, 64)
	stime, err2 := strconv.ParseInt(string(f[12]), 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("/proc stat times: %w", err)
	}
	return time.Duration(utime+stime) * clockTick, nil
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
