package paylink

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Fee codes of a webhook's fee_detail lines (spec 2.3).
const (
	FeeServiceBlended = "SERVICE_BLENDED_FEE"
	FeeServiceProtect = "SERVICE_PROTECT_FEE"
	FeeAmex           = "AMEX_FEE"
	FeeAmexTax        = "AMEX_FEE_TAX"
	FeeICPlus         = "IC_PLUS"
	FeeServiceTrans   = "SERVICE_TRANS_FEE"
	FeeDirectDebit    = "DD_FEE"
)

// Settlement types and calculation modes of fee lines and summaries.
const (
	SettlementDeducted = "DEDUCTED"
	SettlementBillable = "BILLABLE"
	CalcExact          = "EXACT"
	CalcEstimated      = "ESTIMATED"
	CalcMixed          = "MIXED"
)

// Pricing models.
const (
	PricingBlended = "blended"
	PricingICPlus  = "ic_plus"
)

// DefaultPricing is the pricing of a merchant onboarded without one
// (Settings.Pricing nil): blended 1.75% + 0.30 for every brand but amex,
// amex 2.9% + 0.30 plus 10% GST on the amex fee, every line DEDUCTED.
func DefaultPricing() Pricing {
	return Pricing{
		Model:          PricingBlended,
		BlendedPercent: 17500, BlendedFixed: 300_000,
		AmexPercent: 29000, AmexFixed: 300_000, AmexTaxPercent: 100000,
		ICPlusPercent: 10000, ICPlusFixed: 100_000,
	}
}

// PricingOf returns the merchant's pricing, or the defaults.
func PricingOf(m *Merchant) Pricing {
	if m.Settings.Pricing == nil {
		return DefaultPricing()
	}
	return *m.Settings.Pricing
}

// FixedFees are a pricing's fixed amounts for payments in one currency,
// in fee micro-units of that currency (millionths of its major unit:
// 30000000 is 30 yen). ServiceTrans is the SERVICE_TRANS_FEE line, absent
// when zero.
type FixedFees struct {
	Blended      int64 `json:"blended"`
	Amex         int64 `json:"amex"`
	ICPlus       int64 `json:"ic_plus"`
	ServiceTrans int64 `json:"service_trans"`
}

// FixedFor returns the fixed amounts of a payment in cur: the currency's
// own (Pricing.FixedIn) when the pricing has them, else the default fixed
// amounts, counted in cur's unit whatever it is. It is the one rule every
// fee computation goes through: the webhook's fee detail, the ledger's
// postings and the dashboard's fee estimate (all by FeeLines).
func (p Pricing) FixedFor(cur Currency) FixedFees {
	if f, ok := p.FixedIn[cur.Code]; ok {
		return f
	}
	return FixedFees{Blended: p.BlendedFixed, Amex: p.AmexFixed, ICPlus: p.ICPlusFixed, ServiceTrans: p.ServiceTransFee}
}

// MaxFixedFee is the largest fixed amount of a pricing in fee micro-units
// (one million major units), what the fee flags of merchant create parse
// to at most. With MaxAmount it keeps every fee line inside int64.
const MaxFixedFee = MaxAmount

// Validate checks the per-currency fixed amounts: each under a known ISO
// 4217 code written in capitals, and none negative or above MaxFixedFee.
// (The rest of a pricing is checked by the flags that set it.)
func (p Pricing) Validate() error {
	var problems []string
	for _, code := range slices.Sorted(maps.Keys(p.FixedIn)) {
		if cur, ok := LookupCurrency(code); !ok || cur.Code != code {
			problems = append(problems, fmt.Sprintf("fixed amounts in %q: not an ISO 4217 currency code paylink accepts, in capitals", code))
			continue
		}
		if err := p.FixedIn[code].validate(); err != nil {
			problems = append(problems, fmt.Sprintf("fixed amounts in %s: %v", code, err))
		}
	}
	if problems != nil {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// validate refuses a negative fixed amount or one above MaxFixedFee.
func (f FixedFees) validate() error {
	for _, part := range []struct {
		name   string
		micros int64
	}{{"blended", f.Blended}, {"amex", f.Amex}, {"ic_plus", f.ICPlus}, {"service_trans", f.ServiceTrans}} {
		if part.micros < 0 || part.micros > MaxFixedFee {
			return fmt.Errorf("%s must be between 0 and %s", part.name, FormatMicros(MaxFixedFee))
		}
	}
	return nil
}

// FeeLine is one fee of a transaction in micro-units (millionths of a
// major unit) of its currency.
type FeeLine struct {
	Code        string
	Micros      int64
	Currency    string
	Settlement  string
	Calculation string
}

// FeeLines computes a transaction's fees under p. Declined, failed and
// unfinished transactions carry no fee. Holds (PRE_AUTHORISED) are priced
// on the held amount and marked ESTIMATED, as the fee is final only at
// capture; interchange-plus lines are always ESTIMATED. The fixed parts
// are those of the transaction's currency (FixedFor).
func (p Pricing) FeeLines(t *Transaction) []FeeLine {
	switch t.Status {
	case StatusApproved, StatusPreAuthorised, StatusPending:
	default:
		return nil
	}
	cur, ok := LookupCurrency(t.Currency)
	if !ok {
		return nil
	}
	if t.PaymentType == PaymentTypeBankAccount {
		return []FeeLine{p.line(FeeDirectDebit, minorToMicros(t.Details.DirectDebitFee, cur), t.Currency, CalcExact)}
	}
	mode := CalcExact
	if t.Status == StatusPreAuthorised {
		mode = CalcEstimated
	}
	base := t.Amount + t.Surcharge
	fixed := p.FixedFor(cur)
	var lines []FeeLine
	switch {
	case t.Details.Card != nil && t.Details.Card.Brand == BrandAmex:
		fee := percentMicros(base, p.AmexPercent, cur) + fixed.Amex
		lines = append(lines, p.line(FeeAmex, fee, t.Currency, mode))
		if p.AmexTaxPercent > 0 {
			tax := mulDivRoundHalfUp(fee, int64(p.AmexTaxPercent), 100*int64(PercentUnit))
			lines = append(lines, p.line(FeeAmexTax, tax, t.Currency, mode))
		}
	case p.Model == PricingICPlus:
		fee := percentMicros(base, p.ICPlusPercent, cur) + fixed.ICPlus
		lines = append(lines, p.line(FeeICPlus, fee, t.Currency, CalcEstimated))
	default:
		fee := percentMicros(base, p.BlendedPercent, cur) + fixed.Blended
		lines = append(lines, p.line(FeeServiceBlended, fee, t.Currency, mode))
	}
	if p.ServiceProtectPercent > 0 {
		lines = append(lines, p.line(FeeServiceProtect, percentMicros(base, p.ServiceProtectPercent, cur), t.Currency, mode))
	}
	if fixed.ServiceTrans > 0 {
		lines = append(lines, p.line(FeeServiceTrans, fixed.ServiceTrans, t.Currency, mode))
	}
	return lines
}

// line builds a fee line, settled as the pricing says for its code.
func (p Pricing) line(code string, micros int64, currency, mode string) FeeLine {
	settlement := SettlementDeducted
	if slices.Contains(p.Billable, code) {
		settlement = SettlementBillable
	}
	return FeeLine{Code: code, Micros: micros, Currency: currency, Settlement: settlement, Calculation: mode}
}

// minorToMicros converts minor units of cur to fee micro-units.
func minorToMicros(minor int64, cur Currency) int64 {
	return minor * microsPerMinor(cur)
}

// microsPerMinor is how many fee micro-units (millionths of a major unit)
// one minor unit of cur is: 10^(6-exponent).
func microsPerMinor(cur Currency) int64 {
	n := int64(1)
	for range 6 - cur.Exponent {
		n *= 10
	}
	return n
}

// percentMicros is rate of an amount in minor units of cur, in fee
// micro-units, rounded half-up to one micro-unit.
func percentMicros(minor int64, rate Percent, cur Currency) int64 {
	// minor * 10^(6-exp) micros * rate / (100 * PercentUnit)
	// = minor * rate / 10^exp, as 100 * PercentUnit is 10^6.
	div := int64(1)
	for range cur.Exponent {
		div *= 10
	}
	return mulDivRoundHalfUp(minor, int64(rate), div)
}

// FormatMicros prints fee micro-units with 2 to 6 decimals: 183750 is
// "0.18375", 300000 is "0.30".
func FormatMicros(micros int64) string { return formatScaled(micros, 6, 2) }

// FeeSummary totals a set of fee lines.
type FeeSummary struct {
	TotalMicros int64
	Currency    string
	Calculation string
	LineCount   int
}

// SummarizeFees totals the lines that keep returns true for. The
// calculation mode is EXACT for no lines, the lines' common mode, or
// MIXED when they differ.
func SummarizeFees(lines []FeeLine, currency string, keep func(FeeLine) bool) FeeSummary {
	s := FeeSummary{Currency: currency, Calculation: CalcExact}
	for _, l := range lines {
		if !keep(l) {
			continue
		}
		switch {
		case s.LineCount == 0:
			s.Calculation = l.Calculation
		case s.Calculation != l.Calculation:
			s.Calculation = CalcMixed
		}
		s.TotalMicros += l.Micros
		s.LineCount++
	}
	return s
}
