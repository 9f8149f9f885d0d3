package browsertest

import (
	"fmt"
	"testing"
)

// TestCPUMultiplier follows Lighthouse's calibration table, capped at the
// default profile's 4x and floored at 1x.
func TestCPUMultiplier(t *testing.T) {
	tests := []struct {
		benchmark, want float64
	}{
		{2500, 4}, {1533, 4}, {1300, 3}, {1050, 2.5}, {800, 2}, {475, 1.5}, {150, 1}, {50, 1},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.benchmark), func(t *testing.T) {
			if got := CPUMultiplier(tt.benchmark); got != tt.want {
				t.Errorf("CPUMultiplier(%v): got %v, want %v", tt.benchmark, got, tt.want)
			}
		})
	}
}
