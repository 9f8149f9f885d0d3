package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
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

// Each refused duration is reported under its own flag, with what is
// wrong with it: a processor deadline of 0 or less is not positive (0 is
// not "the default" on the command line), and an authentication timeout
// past its bound is not blamed on --processor-timeout.
func TestServeNamesTheFlagOfARefusedDuration(t *testing.T) {
	tests := []struct {
		args []string
		env  map[string]string
		want []string // in the error, after "--flag: "
	}{
		{[]string{"--authentication-timeout", "59m"}, nil, []string{"--authentication-timeout: ", "at most 58m0s"}},
		{[]string{"--authentication-timeout", "0"}, nil, []string{"--authentication-timeout: ", "positive"}},
		{[]string{"--processor-timeout", "-5s"}, nil, []string{"--processor-timeout: ", "positive"}},
		{[]string{"--processor-timeout", "0"}, nil, []string{"--processor-timeout: ", "positive"}},
		{nil, map[string]string{"PAYLINK_PROCESSOR_TIMEOUT": "0s"}, []string{"--processor-timeout: ", "positive"}},
		{[]string{"--processor-timeout", "61s"}, nil, []string{"--processor-timeout: ", "at most 1m0s"}},
		{[]string{"--dashboard-idle", "0s"}, nil, []string{"--dashboard-idle: ", "positive"}},
		// The token lifetime's bound was reported by Config.Validate in its
		// own words: "transaction token lifetime 20m0s: must be at most
		// 15m0s (0: the default)", naming no flag, and 0 is refused here.
		{[]string{"--transaction-token-ttl", "20m"}, nil, []string{"--transaction-token-ttl: ", "at most 15m0s", "key rotation"}},
		{nil, map[string]string{"PAYLINK_TRANSACTION_TOKEN_TTL": "16m"}, []string{"--transaction-token-ttl: ", "at most 15m0s"}},
		{[]string{"--transaction-token-ttl", "0"}, nil, []string{"--transaction-token-ttl: ", "positive"}},
		{[]string{"--preauth-expiry", "-1h"}, nil, []string{"--preauth-expiry: ", "positive"}},
		{[]string{"--direct-debit-clearing", "0s"}, nil, []string{"--direct-debit-clearing: ", "positive"}},
		{[]string{"--webhook-timeout", "-5s"}, nil, []string{"--webhook-timeout: ", "positive"}},
		{[]string{"--shutdown-delay", "1h"}, nil, []string{"--shutdown-delay: ", "0 to 5m0s"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " ")+fmt.Sprint(tt.env), func(t *testing.T) {
			_, err := parseServe(envWith(tt.env), tt.args)
			if err == nil {
				t.Fatal("got no error, want the duration refused")
			}
			msg := err.Error()
			flag := tt.want[0]
			if !strings.HasPrefix(msg, flag) || strings.Count(msg, "--") != 1 {
				t.Errorf("got %q, want it to name %s and no other flag", msg, strings.TrimSuffix(flag, ": "))
			}
			for _, w := range tt.want[1:] {
				if !strings.Contains(msg, w) {
					t.Errorf("got %q, want it to say %q", msg, w)
				}
			}
			if strings.Contains(msg, "positive") && strings.Contains(msg, "at most") {
				t.Errorf("got %q: a duration that is not positive is refused for that alone", msg)
			}
			if strings.Contains(msg, "default") {
				t.Errorf("got %q: 0 is no default on the command line", msg)
			}
		})
	}
	for _, tt := range []struct {
		args []string
		want []string // each named once, in this order
	}{
		// Two over Config.Validate's bounds: only the first was named.
		{[]string{"--transaction-token-ttl", "20m", "--processor-timeout", "61s"}, []string{"--transaction-token-ttl: ", "--processor-timeout: "}},
		// One not positive, two over their bound: the first alone was named.
		{[]string{"--authentication-timeout", "59m", "--preauth-expiry", "-1h", "--dashboard-idle", "0s", "--transaction-token-ttl", "16m"},
			[]string{"--preauth-expiry: ", "--dashboard-idle: ", "--transaction-token-ttl: ", "--authentication-timeout: "}},
		// The shutdown flags were checked one at a time, before the
		// others (the CLI sweep).
		{[]string{"--shutdown-timeout", "1s", "--shutdown-delay", "1h", "--processor-timeout", "0"},
			[]string{"--shutdown-timeout: ", "--shutdown-delay: ", "--processor-timeout: "}},
	} {
		_, err := parseServe(envWith(nil), tt.args)
		msg := fmt.Sprint(err)
		at := 0
		for _, w := range tt.want {
			i := strings.Index(msg[at:], w)
			if i < 0 || strings.Count(msg, w) != 1 {
				t.Errorf("%v: got %q, want each of %q named once, in that order", tt.args, msg, tt.want)
				break
			}
			at += i
		}
		if strings.Count(msg, "--") != len(tt.want) {
			t.Errorf("%v: got %q, want no flag but %q named", tt.args, msg, tt.want)
		}
	}
	if cfg, err := parseServe(envWith(nil), []string{"--processor-timeout", "1m", "--authentication-timeout", "58m", "--transaction-token-ttl", "15m"}); err != nil ||
		cfg.service.ProcessorTimeout != time.Minute || cfg.service.AuthenticationTimeout != 58*time.Minute || cfg.service.TransactionTokenTTL != 15*time.Minute {
		t.Errorf("the bounds themselves: got %+v, %v, want accepted", cfg.service, err)
	}
}
