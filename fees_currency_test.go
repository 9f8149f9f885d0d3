package paylink

import (
	"encoding/json"
	"strings"
	"testing"
)

// perCurrencyPricing is the default pricing with its own fixed amounts
// for JPY (30 yen blended, 40 yen amex, a 5 yen transaction fee the
// other currencies do not have) and KWD (0.100 KWD blended and amex).
func perCurrencyPricing() Pricing {
	p := DefaultPricing()
	p.FixedIn = map[string]FixedFees{
		"JPY": {Blended: 30_000_000, Amex: 40_000_000, ServiceTrans: 5_000_000},
		"KWD": {Blended: 100_000, Amex: 100_000},
	}
	return p
}

// feeCase is a payment in a currency priced by hand: the fee lines'
// micro-units by code, and the ledger's posting of it by account.
type feeCase struct {
	name     string
	p        Pricing
	currency string
	brand    string
	total    int64
	micros   map[string]int64
	posting  map[LedgerAccount]int64
}

// fixedAmountCases are JPY and KWD payments with and without their own
// fixed amounts, and an AUD one under a pricing that has them for other
// currencies. 1.75% of 1000 yen is 17.5 yen, 2.9% is 29 yen; 1.75% of
// 10.000 KWD is 0.175, 2.9% is 0.290. The ledger rounds each line half
// up to the minor unit (FeeMinor).
func fixedAmountCases() []feeCase {
	return []feeCase{
		// 17.5 + 0.30 (the default, in yen) = 17.80 yen, posted as 18.
		{"JPY visa, default fixed amounts", DefaultPricing(), "JPY", BrandVisa, 1000,
			map[string]int64{FeeServiceBlended: 17_800_000},
			map[LedgerAccount]int64{AccountAcquirerReceivable: 1000, AccountFeeRevenue: -18, AccountMerchantPending: -982}},
		// 17.5 + 30 = 47.5 yen, posted as 48, and the 5 yen transaction fee.
		{"JPY visa, its own fixed amounts", perCurrencyPricing(), "JPY", BrandVisa, 1000,
			map[string]int64{FeeServiceBlended: 47_500_000, FeeServiceTrans: 5_000_000},
			map[LedgerAccount]int64{AccountAcquirerReceivable: 1000, AccountFeeRevenue: -53, AccountMerchantPending: -947}},
		// 29 + 0.30 = 29.30 yen (29), GST 2.93 yen (3).
		{"JPY amex, default fixed amounts", DefaultPricing(), "JPY", BrandAmex, 1000,
			map[string]int64{FeeAmex: 29_300_000, FeeAmexTax: 2_930_000},
			map[LedgerAccount]int64{AccountAcquirerReceivable: 1000, AccountFeeRevenue: -29, AccountGSTPayable: -3, AccountMerchantPending: -968}},
		// 29 + 40 = 69 yen, GST 6.9 yen (7), the 5 yen transaction fee.
		{"JPY amex, its own fixed amounts", perCurrencyPricing(), "JPY", BrandAmex, 1000,
			map[string]int64{FeeAmex: 69_000_000, FeeAmexTax: 6_900_000, FeeServiceTrans: 5_000_000},
			map[LedgerAccount]int64{AccountAcquirerReceivable: 1000, AccountFeeRevenue: -74, AccountGSTPayable: -7, AccountMerchantPending: -919}},
		// 0.175 + 0.300 (the default, in dinars) = 0.475 KWD.
		{"KWD visa, default fixed amounts", DefaultPricing(), "KWD", BrandVisa, 10_000,
			map[string]int64{FeeServiceBlended: 475_000},
			map[LedgerAccount]int64{AccountAcquirerReceivable: 10_000, AccountFeeRevenue: -475, AccountMerchantPending: -9525}},
		// 0.175 + 0.100 = 0.275 KWD; no transaction fee in KWD.
		{"KWD visa, its own fixed amounts", perCurrencyPricing(), "KWD", BrandVisa, 10_000,
			map[string]int64{FeeServiceBlended: 275_000},
			map[LedgerAccount]int64{AccountAcquirerReceivable: 10_000, AccountFeeRevenue: -275, AccountMerchantPending: -9725}},
		// 0.290 + 0.300 = 0.590 KWD, GST 0.059.
		{"KWD amex, default fixed amounts", DefaultPricing(), "KWD", BrandAmex, 10_000,
			map[string]int64{FeeAmex: 590_000, FeeAmexTax: 59_000},
			map[LedgerAccount]int64{AccountAcquirerReceivable: 10_000, AccountFeeRevenue: -590, AccountGSTPayable: -59, AccountMerchantPending: -9351}},
		// 0.290 + 0.100 = 0.390 KWD, GST 0.039.
		{"KWD amex, its own fixed amounts", perCurrencyPricing(), "KWD", BrandAmex, 10_000,
			map[string]int64{FeeAmex: 390_000, FeeAmexTax: 39_000},
			map[LedgerAccount]int64{AccountAcquirerReceivable: 10_000, AccountFeeRevenue: -390, AccountGSTPayable: -39, AccountMerchantPending: -9571}},
		// A currency the pricing has no amounts for keeps the defaults:
		// 1.75% of 10.00 AUD + 0.30, and no transaction fee.
		{"AUD visa under a pricing with JPY and KWD amounts", perCurrencyPricing(), "AUD", BrandVisa, 1000,
			map[string]int64{FeeServiceBlended: 475_000},
			map[LedgerAccount]int64{AccountAcquirerReceivable: 1000, AccountFeeRevenue: -48, AccountMerchantPending: -952}},
		// Interchange plus takes its fixed part from the currency too:
		// 1% of 1000 yen + 10 yen = 20 yen.
		{"JPY interchange plus, its own fixed amounts", Pricing{Model: PricingICPlus, ICPlusPercent: 10000, ICPlusFixed: 100_000,
			FixedIn: map[string]FixedFees{"JPY": {ICPlus: 10_000_000}}}, "JPY", BrandMastercard, 1000,
			map[string]int64{FeeICPlus: 20_000_000},
			map[LedgerAccount]int64{AccountAcquirerReceivable: 1000, AccountFeeRevenue: -20, AccountMerchantPending: -980}},
	}
}

// approvedIn is an approved card payment of total minor units in currency.
func approvedIn(currency, brand string, total int64) *Transaction {
	t := txn("pr_fx", PaymentTypeCard, StatusApproved, total, card(brand))
	t.Currency = currency
	return t
}

func TestFeeLinesUseTheCurrencysFixedAmounts(t *testing.T) {
	for _, tc := range fixedAmountCases() {
		t.Run(tc.name, func(t *testing.T) {
			got := map[string]int64{}
			for _, l := range tc.p.FeeLines(approvedIn(tc.currency, tc.brand, tc.total)) {
				got[l.Code] = l.Micros
				if l.Currency != tc.currency {
					t.Errorf("%s line in %s, want %s", l.Code, l.Currency, tc.currency)
				}
			}
			if !equalMicros(got, tc.micros) {
				t.Errorf("fee lines: got %v, want %v", got, tc.micros)
			}
		})
	}
}

func TestPostingsUseTheCurrencysFixedAmounts(t *testing.T) {
	for _, tc := range fixedAmountCases() {
		t.Run(tc.name, func(t *testing.T) {
			p, err := TransactionPosting(approvedIn(tc.currency, tc.brand, tc.total), StatusProcessing, tc.p)
			if err != nil {
				t.Fatal(err)
			}
			if got := lines(p); !p.Balanced() || !equalLines(got, tc.posting) {
				t.Errorf("posting: got %v (balanced %v), want %v", got, p.Balanced(), tc.posting)
			}
			if want := tc.total + tc.posting[AccountMerchantPending]; p.Fee != want || p.Net != tc.total-want {
				t.Errorf("fee/net: got %d/%d, want %d/%d", p.Fee, p.Net, want, tc.total-want)
			}
		})
	}
}

func equalMicros(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// olderPricingJSON is DefaultPricing as a build before per-currency fixed
// amounts stored it in a merchant's settings.
const olderPricingJSON = `{"model":"blended","blended_percent":17500,"blended_fixed":300000,"amex_percent":29000,` +
	`"amex_fixed":300000,"amex_tax_percent":100000,"ic_plus_percent":10000,"ic_plus_fixed":100000}`

// TestPricingOfAnOlderBuild: a pricing stored without fixed_in prices
// every currency as before (the default fixed amounts in the payment's
// unit), and a pricing without per-currency amounts is stored as before.
func TestPricingOfAnOlderBuild(t *testing.T) {
	var s MerchantSettings
	if err := json.Unmarshal([]byte(`{"surcharge":{"debit":5000},"pricing":`+olderPricingJSON+`}`), &s); err != nil {
		t.Fatal(err)
	}
	m := &Merchant{Settings: s}
	for _, tc := range fixedAmountCases() {
		if !strings.HasSuffix(tc.name, "default fixed amounts") {
			continue
		}
		got := map[string]int64{}
		for _, l := range PricingOf(m).FeeLines(approvedIn(tc.currency, tc.brand, tc.total)) {
			got[l.Code] = l.Micros
		}
		if !equalMicros(got, tc.micros) {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.micros)
		}
	}
	if b, _ := json.Marshal(DefaultPricing()); string(b) != olderPricingJSON {
		t.Errorf("stored pricing: got %s, want %s", b, olderPricingJSON)
	}
}

func TestPricingValidateRefusesBadFixedAmounts(t *testing.T) {
	tests := map[string]FixedFees{
		"jpy": {Blended: 1},
		"XYZ": {Blended: 1},
		"JPY": {Amex: -1},
		"KWD": {ServiceTrans: MaxFixedFee + 1},
	}
	for code, fixed := range tests {
		p := Pricing{FixedIn: map[string]FixedFees{code: fixed}}
		if err := p.Validate(); err == nil || !strings.Contains(err.Error(), code) {
			t.Errorf("%s %+v: got %v, want an error naming it", code, fixed, err)
		}
	}
	if err := perCurrencyPricing().Validate(); err != nil {
		t.Errorf("valid pricing: got %v", err)
	}
	n := NewMerchant{Name: "Acme Pty Ltd", TradingName: "Acme", Country: "AU",
		Settings: MerchantSettings{Pricing: &Pricing{FixedIn: map[string]FixedFees{"JPY": {Blended: -30}}}}}
	if err := n.Validate(); err == nil || !strings.Contains(err.Error(), "pricing: fixed amounts in JPY: blended") {
		t.Errorf("onboarding with a negative JPY fixed amount: got %v, want a pricing error", err)
	}
}
