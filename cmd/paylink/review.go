package main

import (
	"context"
	"fmt"
	"slices"
	"text/tabwriter"

	"github.com/paylink/paylink"
)

// runReview lists the transactions and refunds in UNKNOWN: operations
// whose outcome the processor has not confirmed (docs/lifecycle.md,
// Recovery). The serving instances keep asking the processor; an operator
// settles what stays here with the acquirer or bank, then records the
// answer with review resolve.
func runReview(ctx context.Context, env environment, args []string) error {
	if len(args) > 0 && args[0] == "resolve" {
		return runReviewResolve(ctx, env, args[1:])
	}
	if slices.Contains(args, "resolve") {
		return fmt.Errorf("review: write resolve right after review (paylink review resolve --db DSN --merchant MID --reference REF)")
	}
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
			fmt.Fprintf(w, "transaction\t%s\t%s\t\t%s\t%s\t%s\n", t.Reference, t.MerchantID, paylink.FormatIn(t.Total, t.Currency), t.Currency, paylink.FormatSpecTime(t.UpdatedAt))
		}
		for _, r := range rs {
			fmt.Fprintf(w, "refund\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Reference, r.MerchantID, r.TransactionReference, paylink.FormatIn(r.Amount, r.Currency), r.Currency, paylink.FormatSpecTime(r.CreatedAt))
		}
		if err := w.Flush(); err != nil {
			return fmt.Errorf("review: %w", err)
		}
		fmt.Fprintf(env.stdout, "%d transactions and %d refunds need review\n", len(ts), len(rs))
		if len(ts)+len(rs) > 0 {
			fmt.Fprintln(env.stdout, `once the acquirer or bank has told you what happened: paylink review resolve --merchant MID --reference REF [--refund] --answer ANSWER --note "..."`)
		}
		return nil
	})
}

// runReviewResolve records an operator's answer about one item in
// UNKNOWN, found out from the acquirer or bank, as recovery records a
// processor's answer to an inquiry.
func runReviewResolve(ctx context.Context, env environment, args []string) error {
	f := newFlags("review resolve", env)
	dsn := f.str("db", defaultDB, "database DSN")
	var r paylink.Resolution
	f.StringVar(&r.MerchantID, "merchant", "", "mid of the item's merchant (required)")
	f.StringVar(&r.Reference, "reference", "", "the transaction's reference, or the refund's with --refund (required)")
	f.BoolVar(&r.Refund, "refund", false, "the item is a refund")
	answer := f.String("answer", "", "what the acquirer or bank says happened: approved, declined, failed or not_received (required)")
	f.StringVar(&r.AcquirerID, "acquirer-id", "", "the acquirer's id of the operation (a debit's: the bank's trace id), when it happened")
	f.StringVar(&r.AuthCode, "auth-code", "", "an approved authorisation's code")
	f.StringVar(&r.DeclineCode, "decline-code", "", "the processor's response code of a decline or refused refund")
	f.StringVar(&r.DeclineMessage, "decline-message", "", "the processor's message of a decline or refused refund")
	f.StringVar(&r.Note, "note", "", "who confirmed the answer with the acquirer or bank, and where (a ticket); kept in the item's history (required)")
	if err := f.parse(args); err != nil {
		return ignoreHelp(err)
	}
	r.Answer = paylink.ReviewAnswer(*answer)
	return withService(ctx, env, *dsn, func(svc *paylink.Service) error {
		status, err := svc.ResolveReview(ctx, r)
		if err != nil {
			return fmt.Errorf("review resolve: %w", err)
		}
		kind := "transaction"
		if r.Refund {
			kind = "refund"
		}
		fmt.Fprintf(env.stdout, "%s %s of %s resolved as %s: now %s\n", kind, r.Reference, r.MerchantID, r.Answer, status)
		return nil
	})
}
