package paylink

import (
	"context"
	"fmt"
	"time"
)

// DailyVolume is one UTC day of a merchant's transactions in one
// currency: the dashboard's home figures and chart.
type DailyVolume struct {
	Day      time.Time // midnight UTC
	Currency string
	Count    int64 // transactions created
	Approved int64 // of which authorised: approved, or a hold (held, captured or released)
	Answered int64 // of which answered: authorised, declined or failed (not pending, in progress or unknown)
	Gross    int64 // total of the APPROVED ones, minor units
	Refunded int64 // refunded of those created that day (Transaction.Refunded: refunds awaiting their answer included)
}

// PeriodVolume sums DailyVolume over the last Days days, per currency.
type PeriodVolume struct {
	Days     int
	Currency string
	Count    int64
	Approved int64
	Answered int64
	Gross    int64
	Refunded int64
}

// ApprovalRate is the share of answered transactions that were
// authorised (approved, or held), in percent with one decimal, rounded
// half-up ("92.96" is "93.0"), but never "100.0" unless every one was
// nor "0.0" unless none was; "0.0" without answered transactions. A hold
// is an answer, authorised, whether still held, captured or released; a
// direct debit not yet cleared or a payment in progress has no answer
// yet and counts for neither side: they made the rate look like
// declines before.
func (p PeriodVolume) ApprovalRate() string {
	if p.Answered == 0 {
		return "0.0"
	}
	tenths := (p.Approved*1000 + p.Answered/2) / p.Answered
	switch {
	case tenths == 1000 && p.Approved < p.Answered:
		tenths = 999
	case tenths == 0 && p.Approved > 0:
		tenths = 1
	}
	return fmt.Sprintf("%d.%d", tenths/10, tenths%10)
}

// DailyVolume returns m's last days days (today included) by day and
// currency, oldest first.
func (s *Service) DailyVolume(ctx context.Context, m *Merchant, days int) ([]DailyVolume, error) {
	since := s.now().Truncate(24*time.Hour).AddDate(0, 0, 1-days)
	var out []DailyVolume
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		out, err = tx.DailyVolume(m.ID, since)
		return err
	})
	if err != nil {
		return nil, Internal("daily volume", err)
	}
	return out, nil
}

// SumVolume adds up the days of daily at or after today minus days-1,
// per currency in order of first appearance.
func SumVolume(daily []DailyVolume, today time.Time, days int) []PeriodVolume {
	since := today.Truncate(24*time.Hour).AddDate(0, 0, 1-days)
	var out []PeriodVolume
	idx := map[string]int{}
	for _, d := range daily {
		if d.Day.Before(since) {
			continue
		}
		i, ok := idx[d.Currency]
		if !ok {
			i = len(out)
			idx[d.Currency] = i
			out = append(out, PeriodVolume{Days: days, Currency: d.Currency})
		}
		p := &out[i]
		p.Count, p.Approved, p.Answered = p.Count+d.Count, p.Approved+d.Approved, p.Answered+d.Answered
		p.Gross, p.Refunded = p.Gross+d.Gross, p.Refunded+d.Refunded
	}
	return out
}
