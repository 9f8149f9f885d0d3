package paylink

import "testing"

func TestApprovalRate(t *testing.T) {
	for _, c := range []struct {
		approved, count int64
		want            string
	}{{0, 0, "0.0"}, {66, 71, "93.0"}, {1, 3, "33.3"}, {2, 3, "66.7"}, {1999, 2000, "99.9"}, {2000, 2000, "100.0"},
		{1, 2001, "0.1"}, {0, 5, "0.0"}} {
		if got := (PeriodVolume{Approved: c.approved, Answered: c.count}).ApprovalRate(); got != c.want {
			t.Errorf("%d of %d: got %s, want %s", c.approved, c.count, got, c.want)
		}
	}
}
