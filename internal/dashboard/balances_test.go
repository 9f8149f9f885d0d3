package dashboard

import (
	"testing"

	"github.com/paylink/paylink"
)

// TestCollapseCountsAtLeastWhenCut: a variance's count of runs is exact
// when every stored report was read, and a lower bound when the read
// stopped at its limit (the reports sweep: a variance six runs reported
// said "reported by 3 runs").
func TestCollapseCountsAtLeastWhenCut(t *testing.T) {
	v := paylink.RunVariance{Variance: paylink.Variance{Kind: "missing_in_file", Reference: "pr_1"}}
	other := paylink.RunVariance{Variance: paylink.Variance{Kind: "missing_in_file", Reference: "pr_2"}}
	for _, cut := range []bool{false, true} {
		rows := collapse([]paylink.RunVariance{v, other, v, v}, cut)
		if len(rows) != 2 || rows[0].Runs != 3 || rows[1].Runs != 1 || rows[0].AtLeast != cut || rows[1].AtLeast != cut {
			t.Errorf("cut %v: got %+v, want pr_1 by 3 runs and pr_2 by 1, at least when cut", cut, rows)
		}
	}
}
