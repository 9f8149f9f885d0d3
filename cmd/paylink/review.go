package main

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/paylink/paylink"
)

// runReview lists the transactions and refunds in UNKNOWN: operations
// whose outcome the processor has not confirmed (docs/lifecycle.md,
// Recovery). The serving instances keep asking the processor; an operator
// settles what stays here with the acquirer or bank.
func runReview(ctx context.Context, env environment, args []string) error {
	f := newFlags("review", env)
	dsn := f.str("db", defaultDB, "database DSN")
	limit := f.Int("limit", 100, "at most this many transactions and this many refunds, oldest first, 1 to 10000")
	if err := f.parse(args); err != nil {
		return ignoreHelp(err)
	}
	if err := inRange("limit", *limit, 1, 10000); err != nil {
		return err
	}
	return withService(ctx, env, *dsn, func(svc *paylink.Service) error {
		ts, rs, err := svc.ReviewItems(ctx, *limit)
		if err != nil {
			return err
		}
		w := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "KIND\tREFERENCE\tMERCHANT\tPURCHASE\tAMOUNT\tCURRENCY\tSINCE (UTC)")
		for _, t := range ts {
			fmt.Fprintf(w, "transaction\t%s\t%s\t\t%s\t%s\t%s\n", t.Reference, t.MerchantID, amount(t.Total, t.Currency), t.Currency, paylink.FormatSpecTime(t.UpdatedAt))
		}
		for _, r := range rs {
			fmt.Fprintf(w, "refund\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Reference, r.MerchantID, r.TransactionReference, amount(r.Amount, r.Currency), r.Currency, paylink.FormatSpecTime(r.CreatedAt))
		}
		if err := w.Flush(); err != nil {
			return fmt.Errorf("review: %w", err)
		}
		fmt.Fprintf(env.stdout, "%d transactions and %d refunds need review\n", len(ts), len(rs))
		return nil
	})
}

// amount formats minor units in their currency.
func amount(minor int64, currency string) string {
	cur, _ := paylink.LookupCurrency(currency)
	return paylink.FormatAmount(minor, cur)
}
