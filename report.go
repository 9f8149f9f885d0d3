package paylink

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// SettlementReport is what a merchant's batches of one UTC day settled:
// one row per balance transaction, with its fee breakdown, and the
// payouts that paid those batches out.
type SettlementReport struct {
	MerchantID string
	Day        string
	Rows       []ReportRow
	FeeCodes   []string // the deducted fee codes, sorted, a column each; GST has its own
	// Payouts has a row per payout that paid out the day's batches: its
	// own balance transaction (ID, the payout posting's bt_ id as GET
	// /v5/balance_transactions lists it) with the payout id as Reference
	// and the amount paid out as Gross and Net.
	Payouts []ReportRow
}

// ReportRow is one balance transaction of a settlement report, in minor
// units of Currency.
type ReportRow struct {
	BatchID         string
	ID              string
	Type            PostingKind
	Reference       string
	RefundReference string
	Currency        string
	Gross           int64
	Surcharge       int64
	Fees            map[string]int64 // deducted fees by code, GST excluded
	GST             int64
	Net             int64
}

// ParseDay parses a YYYY-MM-DD date, the unit of settlement and reports.
// Its refusal names the field date, as every call that takes a day
// calls it: a missing one is required, one that is no day (2026-02-30)
// is told the form.
func ParseDay(s string) (string, error) {
	if s == "" {
		return "", FieldErrors{"date": "is required: a day as YYYY-MM-DD, such as 2026-11-23"}.Err()
	}
	d, err := time.Parse(time.DateOnly, s)
	if err != nil || d.Format(time.DateOnly) != s {
		return "", FieldErrors{"date": "must be a day as YYYY-MM-DD, such as 2026-11-23"}.Err()
	}
	return s, nil
}

// SettlementReport builds m's settlement report of a UTC day.
func (s *Service) SettlementReport(ctx context.Context, m *Merchant, day string) (*SettlementReport, error) {
	day, err := ParseDay(day)
	if err != nil {
		return nil, err
	}
	rep := &SettlementReport{MerchantID: m.ID, Day: day}
	err = s.store.Snapshot(ctx, func(tx Tx) error { // batches, lines and payouts of one moment
		batches, err := tx.SettlementBatches(m.ID, day)
		if err != nil {
			return err
		}
		var payouts []string
		for _, b := range batches {
			if err := rep.addBatch(tx, m.ID, b); err != nil {
				return err
			}
			if b.PayoutID != "" {
				payouts = append(payouts, b.PayoutID)
			}
		}
		return rep.addPayouts(tx, m.ID, payouts)
	})
	if err != nil {
		return nil, Internal("settlement report", err)
	}
	return rep, nil
}

func (rep *SettlementReport) addBatch(tx Tx, merchantID string, b *SettlementBatch) error {
	ps, err := tx.BatchPostings(b.ID)
	if err != nil {
		return err
	}
	for _, p := range ps {
		row := ReportRow{BatchID: b.ID, ID: p.ID, Type: p.Kind, Reference: p.Reference, RefundReference: p.RefundReference,
			Currency: p.Currency, Gross: p.Amount, Net: p.Net, Fees: map[string]int64{}}
		if p.Kind == PostingCharge || p.Kind == PostingDirectDebitClear {
			t, err := tx.Transaction(merchantID, p.Reference)
			if err != nil {
				return fmt.Errorf("report row %s: %w", p.ID, err)
			}
			row.Surcharge = t.PayerSurcharge()
		}
		rep.addFees(&row, p.Lines)
		rep.Rows = append(rep.Rows, row)
	}
	return nil
}

// addFees breaks a posting's deducted fees down by code: fee and GST
// lines credit revenue or GST; a billable fee's matching receivable line
// takes it back out, as it was not deducted. Only a code deducted from
// some row gets a column: a billable code's would be all zeros.
func (rep *SettlementReport) addFees(row *ReportRow, lines []LedgerLine) {
	for _, l := range lines {
		if l.FeeCode == "" {
			continue
		}
		amount := -l.Amount
		if strings.HasSuffix(l.FeeCode, "_TAX") {
			row.GST += amount
			continue
		}
		row.Fees[l.FeeCode] += amount
	}
	for code, amount := range row.Fees {
		if amount == 0 {
			delete(row.Fees, code)
			continue
		}
		if !slices.Contains(rep.FeeCodes, code) {
			rep.FeeCodes = append(rep.FeeCodes, code)
			slices.Sort(rep.FeeCodes)
		}
	}
}

// addPayouts adds the payouts of the day's batches, newest first (ids
// are time-ordered). Each is read by its id: a report of an old day
// names payouts that are far from the newest.
func (rep *SettlementReport) addPayouts(tx Tx, merchantID string, ids []string) error {
	slices.Sort(ids)
	ids = slices.Compact(ids) // a payout may pay out several of the day's batches
	slices.Reverse(ids)
	for _, id := range ids {
		p, err := tx.Payout(merchantID, id)
		if err != nil {
			return err
		}
		bt, err := payoutPosting(tx, p)
		if err != nil {
			return err
		}
		rep.Payouts = append(rep.Payouts, ReportRow{Type: PostingPayout, ID: bt, Reference: p.ID, Currency: p.Currency,
			Gross: p.Amount, Net: p.Amount, Fees: map[string]int64{}})
	}
	return nil
}

// payoutPosting finds the id of payout p's own posting, the balance
// transaction that takes it from the available balance.
func payoutPosting(tx Tx, p *Payout) (string, error) {
	ps, err := tx.PostingsOf(p.ID)
	if err != nil {
		return "", err
	}
	for _, posting := range ps {
		if posting.Kind == PostingPayout && posting.MerchantID == p.MerchantID {
			return posting.ID, nil
		}
	}
	return "", fmt.Errorf("payout %s has no payout posting", p.ID)
}

// WriteCSV writes the report for a spreadsheet: a header, a row per
// balance transaction, a total row per currency, and a row per payout
// (its own balance transaction, the payout id as its reference).
// Amounts are decimals in major units of the row's currency.
func (rep *SettlementReport) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	head := []string{"date", "batch", "balance_transaction", "type", "reference", "refund_reference", "currency", "gross", "surcharge"}
	head = append(append(head, rep.FeeCodes...), "gst", "net")
	cw.Write(head)
	totals := map[string]*ReportRow{}
	var currencies []string
	for _, r := range rep.Rows {
		cw.Write(rep.record(r))
		t, ok := totals[r.Currency]
		if !ok {
			t = &ReportRow{Type: "total", Currency: r.Currency, Fees: map[string]int64{}}
			totals[r.Currency], currencies = t, append(currencies, r.Currency)
		}
		t.Gross, t.Surcharge, t.GST, t.Net = t.Gross+r.Gross, t.Surcharge+r.Surcharge, t.GST+r.GST, t.Net+r.Net
		for code, v := range r.Fees {
			t.Fees[code] += v
		}
	}
	for _, c := range currencies {
		cw.Write(rep.record(*totals[c]))
	}
	for _, p := range rep.Payouts {
		cw.Write(rep.record(p))
	}
	cw.Flush()
	return cw.Error()
}

func (rep *SettlementReport) record(r ReportRow) []string {
	money := func(v int64) string { return FormatIn(v, r.Currency) }
	rec := []string{rep.Day, r.BatchID, r.ID, string(r.Type), r.Reference, r.RefundReference, r.Currency, money(r.Gross), money(r.Surcharge)}
	for _, code := range rep.FeeCodes {
		rec = append(rec, money(r.Fees[code]))
	}
	return append(rec, money(r.GST), money(r.Net))
}
