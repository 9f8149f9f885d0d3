package dashboard

import (
	"bytes"
	"net/http"

	"github.com/paylink/paylink"
)

// The balances page: balances per currency, payouts with their day's
// settlement report as CSV, and reconciliation variances.
//
// Reconciliation runs are platform-level (one acquirer file covers every
// merchant), so the page shows only the variances of the signed-in
// merchant's payments and refunds (Service.MerchantVariances); another
// merchant's variances, and those whose reference is no merchant's
// (missing from the ledger), are the operator's and never shown here.

// Bounds of the page's lists.
const (
	payoutRows   = 50
	varianceRows = paylink.DefaultMerchantVariances
)

// balancesData is the balances page.
type balancesData struct {
	Balances  []paylink.Balance
	Payouts   []*paylink.Payout
	Variances []varianceRow
	// MoreVariances says that the merchant has older variances than the
	// newest varianceRows shown.
	MoreVariances bool
	VarianceRows  int
}

// balances shows the page.
func (h *Handler) balances(rq *request) error {
	ctx, m := rq.r.Context(), rq.ss.Merchant
	bal, err := h.svc.Balances(ctx, m)
	if err != nil {
		return err
	}
	payouts, _, err := h.svc.Payouts(ctx, m, "", payoutRows)
	if err != nil {
		return err
	}
	// The most a read may take, collapsed, then cut to the page's rows: a
	// variance reported by many runs takes one row, not one per run.
	variances, err := h.svc.MerchantVariances(ctx, m, paylink.MaxMerchantVariances)
	if err != nil {
		return err
	}
	rows := collapse(variances, len(variances) == paylink.MaxMerchantVariances)
	d := balancesData{Balances: bal, Payouts: payouts, Variances: rows[:min(len(rows), varianceRows)],
		MoreVariances: len(rows) > varianceRows || len(variances) == paylink.MaxMerchantVariances, VarianceRows: varianceRows}
	rq.render(http.StatusOK, "balances", view{Title: "Balances", Data: d})
	return nil
}

// varianceRow is a variance as the page lists it: its newest report, and
// how many of the runs read reported it (at least that many when the
// read was cut short: older runs were not read).
type varianceRow struct {
	paylink.RunVariance
	Runs    int
	AtLeast bool
}

// collapse lists each variance of vs (newest first) once, from its newest
// run, with the number of runs that reported it: the same file, or the
// same day's, reconciled again reports each variance again, and the page
// listed every copy. A variance is the same when its kind, reference,
// file line and both sides are. cut says the read stopped at its limit,
// so that each count is a lower bound.
func collapse(vs []paylink.RunVariance, cut bool) []varianceRow {
	rows := make([]varianceRow, 0, len(vs))
	seen := make(map[paylink.Variance]int, len(vs))
	for _, v := range vs {
		if i, ok := seen[v.Variance]; ok {
			rows[i].Runs++
			continue
		}
		seen[v.Variance] = len(rows)
		rows = append(rows, varianceRow{RunVariance: v, Runs: 1, AtLeast: cut})
	}
	return rows
}

// settlementCSV serves the merchant's settlement report of a day as CSV,
// the same report as GET /v5/reports/settlement.
func (h *Handler) settlementCSV(rq *request) error {
	rep, err := h.svc.SettlementReport(rq.r.Context(), rq.ss.Merchant, rq.r.PathValue("day"))
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := rep.WriteCSV(&buf); err != nil {
		return paylink.Internal("settlement report csv", err)
	}
	rq.w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	rq.w.Header().Set("Content-Disposition", `attachment; filename="settlement-`+rep.Day+`.csv"`)
	rq.w.Write(buf.Bytes())
	return nil
}
