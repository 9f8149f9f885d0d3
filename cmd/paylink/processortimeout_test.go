package main

import (
	"context"
	"strings"
	"testing"
)

// A processor deadline at or above half the recovery threshold is refused
// before anything starts: recovery could otherwise ask about an operation
// whose call is still running.
func TestServeRefusesAProcessorTimeoutNearTheRecoveryThreshold(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		args []string
	}{
		{"flag", nil, []string{"--processor-timeout", "90s"}},
		{"environment", map[string]string{"PAYLINK_PROCESSOR_TIMEOUT": "2m"}, nil},
		{"negative", nil, []string{"--processor-timeout", "-1s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"--db", t.TempDir() + "/p.db", "--addr", "127.0.0.1:0"}, tt.args...)
			stopped, stop := context.WithCancel(context.Background())
			stop() // without the check, serve starts and stops at once, with no error
			err := runServe(stopped, envWith(tt.env), args)
			if err == nil || !strings.Contains(err.Error(), "--processor-timeout") {
				t.Errorf("got %v, want an error naming --processor-timeout", err)
			}
		})
	}
}
