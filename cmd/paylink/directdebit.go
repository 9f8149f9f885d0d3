package main

import (
	"flag"
	"strings"

	"github.com/paylink/paylink"
)

// audFlag is an amount in the direct debit currency, Australian dollars
// ("0.30"), kept in cents.
type audFlag struct{ minor *int64 }

func (f audFlag) String() string {
	if f.minor == nil {
		return ""
	}
	return paylink.FormatIn(*f.minor, paylink.DirectDebitCurrency)
}

func (f audFlag) Set(v string) error {
	aud, _ := paylink.LookupCurrency(paylink.DirectDebitCurrency) // a known code: its exponent from the one table
	n, err := paylink.ParseAmount(v, aud)
	if err != nil {
		return err
	}
	*f.minor = n
	return nil
}

// directDebitFeeFlags registers the merchant's direct debit fee flags on
// f and returns a function that, after parsing, gives the configuration
// to store: nil (the documented defaults) when no flag was set.
func directDebitFeeFlags(f *flags) func() (*paylink.DirectDebitFeeConfig, error) {
	cfg := paylink.DefaultDirectDebitFee()
	f.Var(percentFlag{&cfg.Percent}, "dd-fee-percent", "direct debit fee percent")
	f.Var(audFlag{&cfg.Fixed}, "dd-fee-fixed", "direct debit fixed fee in AUD")
	f.Var(audFlag{&cfg.Cap}, "dd-fee-cap", "direct debit fee cap in AUD, 0 for no cap")
	return func() (*paylink.DirectDebitFeeConfig, error) {
		set := false
		f.Visit(func(fl *flag.Flag) { set = set || strings.HasPrefix(fl.Name, "dd-fee-") })
		if !set {
			return nil, nil
		}
		if err := cfg.Validate(); err != nil {
			return nil, err
		}
		return &cfg, nil
	}
}
