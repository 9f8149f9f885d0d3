package paylink

import (
	"context"
	"errors"
	"testing"
)

// TestDrain: a job's passes go on while a pass reads a full batch and
// moves something, and stop at a short batch, a batch that moved nothing
// (rows another instance holds: no spinning), an error or a cancelled
// context.
func TestDrain(t *testing.T) {
	boom := errors.New("boom")
	type pass struct{ read, moved int }
	tests := []struct {
		name      string
		passes    []pass
		failAt    int // 1-based pass that fails, 0 for none
		cancel    bool
		wantTotal int
		wantRuns  int
	}{
		{"a short first batch", []pass{{3, 3}}, 0, false, 3, 1},
		{"full batches, then a short one", []pass{{10, 10}, {10, 9}, {4, 4}}, 0, false, 23, 3},
		{"a full batch that moved nothing", []pass{{10, 0}, {10, 10}}, 0, false, 0, 1},
		{"an error", []pass{{10, 10}, {10, 2}, {10, 10}}, 2, false, 12, 2},
		{"a cancelled context", []pass{{10, 10}, {10, 10}}, 0, true, 10, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			runs := 0
			total, err := drain(ctx, 10, func(context.Context) (int, int, error) {
				p := tt.passes[runs]
				runs++
				if tt.cancel {
					cancel()
				}
				if runs == tt.failAt {
					return p.read, p.moved, boom
				}
				return p.read, p.moved, nil
			})
			if total != tt.wantTotal || runs != tt.wantRuns || (tt.failAt > 0) != errors.Is(err, boom) {
				t.Errorf("got %d moved in %d passes (%v), want %d in %d", total, runs, err, tt.wantTotal, tt.wantRuns)
			}
		})
	}
}
