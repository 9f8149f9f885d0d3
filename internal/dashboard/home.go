package dashboard

import (
	"cmp"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/paylink/paylink"
)

// chartDays is how many days the home page's chart and figures cover.
const chartDays = 30

// homeData is the home page: balances, figures per period and a chart
// per currency.
type homeData struct {
	Balances []paylink.Balance
	Periods  []periodRow
	Charts   []*chart
}

// periodRow is one period's figures in one currency.
type periodRow struct {
	Label string
	paylink.PeriodVolume
}

// home shows the merchant's balances and recent volume.
func (h *Handler) home(rq *request) error {
	ctx, m := rq.r.Context(), rq.ss.Merchant
	balances, err := h.svc.Balances(ctx, m)
	if err != nil {
		return err
	}
	daily, err := h.svc.DailyVolume(ctx, m, chartDays)
	if err != nil {
		return err
	}
	today := h.svc.Now()
	d := homeData{Balances: balances}
	for _, p := range []struct {
		label string
		days  int
	}{{"Today", 1}, {"Last 7 days", 7}, {"Last 30 days", 30}} {
		for _, v := range paylink.SumVolume(daily, today, p.days) {
			d.Periods = append(d.Periods, periodRow{Label: p.label, PeriodVolume: v})
		}
	}
	for _, cur := range chartCurrencies(daily) {
		d.Charts = append(d.Charts, newChart(daily, cur, today))
	}
	rq.render(http.StatusOK, "home", view{Title: "Home", Data: d})
	return nil
}

// chart is a server-drawn bar chart of one currency's daily gross
// volume: SVG with a title and description, and the same figures as a
// table for screen readers and text browsers.
type chart struct {
	Currency string
	Width    int
	Height   int
	Bars     []bar
	Max      int64
}

// bar is one day of the chart.
type bar struct {
	Day     string
	Gross   int64
	Count   int64
	X, Y, W int
	H       int
}

// chartCurrencies are the currencies of daily, the one with the most
// payments first (then by code): a chart each.
func chartCurrencies(daily []paylink.DailyVolume) []string {
	counts := map[string]int64{}
	for _, d := range daily {
		counts[d.Currency] += d.Count
	}
	out := slices.Collect(maps.Keys(counts))
	slices.SortFunc(out, func(a, b string) int {
		return cmp.Or(cmp.Compare(counts[b], counts[a]), strings.Compare(a, b))
	})
	return out
}

// newChart lays out the last chartDays days of currency, empty days
// included, with bars scaled to the largest day.
func newChart(daily []paylink.DailyVolume, currency string, today time.Time) *chart {
	c := &chart{Currency: currency, Width: 600, Height: 160}
	byDay := map[string]paylink.DailyVolume{}
	for _, d := range daily {
		if d.Currency == currency {
			byDay[d.Day.Format(time.DateOnly)] = d
			c.Max = max(c.Max, d.Gross)
		}
	}
	start := today.Truncate(24*time.Hour).AddDate(0, 0, 1-chartDays)
	slot := c.Width / chartDays
	for i := range chartDays {
		day := start.AddDate(0, 0, i).Format(time.DateOnly)
		v := byDay[day]
		hgt := 0
		if c.Max > 0 {
			hgt = int(v.Gross * int64(c.Height-10) / c.Max)
		}
		c.Bars = append(c.Bars, bar{Day: day, Gross: v.Gross, Count: v.Count, X: i*slot + 2, W: slot - 4,
			Y: c.Height - hgt, H: hgt})
	}
	return c
}

// Summary is the chart's text alternative in one sentence.
func (c *chart) Summary() string {
	var total int64
	best := bar{}
	for _, b := range c.Bars {
		total += b.Gross
		if b.Gross > best.Gross {
			best = b
		}
	}
	if total == 0 {
		return fmt.Sprintf("No approved %s volume in the last %d days.", c.Currency, chartDays)
	}
	return fmt.Sprintf("Approved %s volume per day over the last %d days; the busiest day was %s.", c.Currency, chartDays, best.Day)
}
