package dashboard

import (
	"bytes"
	"net/http"
	"time"

	"github.com/paylink/paylink"
)

// The balances page: balances per currency, payouts with their day's
// settlement report as CSV, and reconciliation variances.
//
// Reconciliation runs are platform-level (one acquirer file covers every
// merchant), so the page shows only the variances whose reference is a
// transaction of the signed-in merchant; another merchant's variances,
// and those whose reference is no merchant's (missing from the ledger),
// are the operator's and never shown here.

// Bounds of the page's lists.
const (
	payoutRows          = 50
	reconciliationsRead = 20
)

// balancesData is the balances page.
type balancesData struct {
	Balances  []paylink.Balance
	Payouts   []*paylink.Payout
	Variances []varianceRow
}

// varianceRow is one of the merchant's variances with its run.
type varianceRow struct {
	paylink.Variance
	Run, File string
	At        time.Time
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
	d := balancesData{Balances: bal, Payouts: payouts}
	if d.Variances, err = h.merchantVariances(rq); err != nil {
		return err
	}
	rq.render(http.StatusOK, "balances", view{Title: "Balances", Data: d})
	return nil
}

// merchantVariances are the variances of the latest runs whose reference
// is one of the merchant's transactions.
func (h *Handler) merchantVariances(rq *request) ([]varianceRow, error) {
	runs, err := h.svc.Reconciliations(rq.r.Context(), reconciliationsRead)
	if err != nil {
		return nil, err
	}
	mine := map[string]bool{}
	var out []varianceRow
	for _, run := range runs {
		for _, v := range run.Variances {
			ok, seen := mine[v.Reference]
			if !seen {
				if ok, err = h.isPurchaseOf(rq, v.Reference); err != nil {
					return nil, err
				}
				mine[v.Reference] = ok
			}
			if ok {
				out = append(out, varianceRow{Variance: v, Run: run.ID, File: run.FileName, At: run.CreatedAt})
			}
		}
	}
	return out, nil
}

// isPurchaseOf reports whether ref is the purchase reference of one of
// the signed-in merchant's transactions. TransactionStatus also finds a
// transaction by invoice number, which a merchant chooses freely: a
// merchant giving its own payment an invoice number equal to another
// merchant's reference would otherwise see that merchant's variance, so
// the transaction found must have ref as its reference (as act checks).
func (h *Handler) isPurchaseOf(rq *request, ref string) (bool, error) {
	t, err := h.svc.TransactionStatus(rq.r.Context(), rq.ss.Merchant, ref)
	if err != nil && paylink.AsError(err).Kind != paylink.KindNotFound {
		return false, err
	}
	return err == nil && t.Reference == ref, nil
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
