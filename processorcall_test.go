package paylink

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

func TestAnswerLost(t *testing.T) {
	expired, cancel := context.WithTimeout(context.Background(), -time.Second)
	defer cancel()
	tests := []struct {
		name string
		ctx  context.Context
		err  error
		want bool
	}{
		{"answered", context.Background(), nil, false},
		{"refused: nothing happened", context.Background(), errors.New("connection refused"), false},
		{"deadline passed", expired, errors.New("read: i/o timeout"), true},
		{"deadline error", context.Background(), fmt.Errorf("acquirer: %w", context.DeadlineExceeded), true},
		{"processor cannot tell", context.Background(), fmt.Errorf("acquirer: connection reset after send: %w", ErrOutcomeUnknown), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := answerLost(tt.ctx, tt.err); got != tt.want {
				t.Errorf("answerLost(%v): got %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

func TestConfigValidateProcessorTimeout(t *testing.T) {
	tests := []struct {
		timeout time.Duration
		ok      bool
	}{
		{0, true}, // the default
		{30 * time.Second, true},
		{MaxProcessorTimeout, true},
		{MaxProcessorTimeout + time.Second, false},
		{ProcessingTimeout, false},
		{-time.Second, false},
	}
	for _, tt := range tests {
		t.Run(tt.timeout.String(), func(t *testing.T) {
			if err := (Config{ProcessorTimeout: tt.timeout}).Validate(); (err == nil) != tt.ok {
				t.Errorf("got %v, want ok=%v", err, tt.ok)
			}
		})
	}
}

// TestConfigValidateTransactionTokenTTL: a token's lifetime is bounded,
// so that a key rotation, which keeps a retired key MaxTransactionTokenTTL
// and more, never drops the key of a token still alive (key rotation
// sweep: with 2 minutes of grace, a 5-minute token was refused 2m38s
// into its life after two rotations).
func TestConfigValidateTransactionTokenTTL(t *testing.T) {
	for _, tt := range []struct {
		ttl time.Duration
		ok  bool
	}{
		{0, true},
		{DefaultTransactionTokenTTL, true},
		{MaxTransactionTokenTTL, true},
		{MaxTransactionTokenTTL + time.Second, false},
		{-time.Second, false},
	} {
		if err := (Config{TransactionTokenTTL: tt.ttl}).Validate(); (err == nil) != tt.ok {
			t.Errorf("%s: got %v, want ok=%v", tt.ttl, err, tt.ok)
		}
	}
}
