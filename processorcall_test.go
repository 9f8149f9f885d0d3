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
