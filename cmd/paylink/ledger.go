package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/paylink/paylink"
)

// runLedger runs the ledger commands.
func runLedger(ctx context.Context, env environment, args []string) error {
	return runSubcommand(ctx, env, "ledger", []subcommand{
		{"verify", "check that the journal balances and matches every payment", runLedgerVerify},
	}, args)
}

// runLedgerVerify checks the whole journal and prints each discrepancy;
// it fails when there is any, so it can gate a deployment or an alert.
func runLedgerVerify(ctx context.Context, env environment, args []string) error {
	f := newFlags("ledger verify", env)
	dsn := f.str("db", defaultDB, "database DSN")
	if err := f.parse(args); err != nil {
		return ignoreHelp(err)
	}
	return withService(ctx, env, *dsn, func(svc *paylink.Service) error {
		found, err := svc.VerifyLedger(ctx)
		if err != nil {
			return err
		}
		for _, d := range found {
			fmt.Fprintf(env.stdout, "%s\t%s\n", d.Reference, d.Problem)
		}
		if len(found) > 0 {
			return fmt.Errorf("ledger verify: %d discrepancies", len(found))
		}
		fmt.Fprintln(env.stdout, "ledger verify: every posting balances and every payment has exactly its postings")
		return nil
	})
}

// parseTimeOfDay reads HH:MM as a duration since midnight.
func parseTimeOfDay(s string) (time.Duration, error) {
	t, err := time.Parse("15:04", s)
	if err != nil {
		return 0, fmt.Errorf("want a time of day as HH:MM (UTC), got %q", s)
	}
	return time.Duration(t.Hour())*time.Hour + time.Duration(t.Minute())*time.Minute, nil
}

// runSettle settles and pays out everything before --before, as the
// daily settlement job does at its cut-off.
func runSettle(ctx context.Context, env environment, args []string) error {
	f := newFlags("settle", env)
	dsn := f.str("db", defaultDB, "database DSN")
	before := f.String("before", "", "settle balance transactions made before this RFC 3339 time or YYYY-MM-DD, at the latest 90 s ago (the default), so that a payment still committing is left for the next run")
	if err := f.parse(args); err != nil {
		return ignoreHelp(err)
	}
	cutoff, err := parseCutoff(*before, time.Now())
	if err != nil {
		return fmt.Errorf("settle --before: %w", err)
	}
	return withService(ctx, env, *dsn, func(svc *paylink.Service) error {
		res, err := svc.Settle(ctx, cutoff)
		if res == nil {
			return err
		}
		for _, b := range res.Batches {
			fmt.Fprintf(env.stdout, "batch\t%s\t%s\t%s\t%s\t%d balance transactions\tnet %s\n", b.ID, b.MerchantID, b.Day,
				b.Currency, b.Count, paylink.FormatIn(b.Net, b.Currency))
		}
		for _, p := range res.Payouts {
			fmt.Fprintf(env.stdout, "payout\t%s\t%s\t%s\t%s\t%d batches\n", p.ID, p.MerchantID, p.Currency,
				paylink.FormatIn(p.Amount, p.Currency), len(p.BatchIDs))
		}
		fmt.Fprintf(env.stdout, "settled %d batches, %d payouts, before %s\n", len(res.Batches), len(res.Payouts), cutoff.Format(time.RFC3339Nano))
		return err // the accounts that failed; the others are settled above
	})
}

// parseCutoff reads an RFC 3339 time or a day (its midnight UTC); "" is
// SettlementGrace before now, as the scheduled settlement leaves it, and
// the latest cut-off it accepts: a payment stamped before a later one
// may still be committing, and would be settled in a second batch and
// payout of its day by the next run.
func parseCutoff(s string, now time.Time) (time.Time, error) {
	latest := now.Add(-paylink.SettlementGrace)
	if s == "" {
		return latest, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		if t, err = time.Parse(time.DateOnly, s); err != nil {
			return time.Time{}, fmt.Errorf("want an RFC 3339 time or YYYY-MM-DD, got %q", s)
		}
	}
	if t.After(latest) {
		return time.Time{}, fmt.Errorf("%s is later than %s (%s ago): a payment stamped before it may still be committing, "+
			"and the next run would settle the rest of its day in a second batch and payout", s, latest.UTC().Format(time.RFC3339), paylink.SettlementGrace)
	}
	return t, nil
}

// runReport prints a report; settlement is the only one.
func runReport(ctx context.Context, env environment, args []string) error {
	return runSubcommand(ctx, env, "report", []subcommand{
		{"settlement", "a merchant's settlement report of a day, CSV", runReportSettlement},
	}, args)
}

// runReportSettlement prints a merchant's settlement report of a day.
func runReportSettlement(ctx context.Context, env environment, args []string) error {
	f := newFlags("report settlement", env)
	dsn := f.str("db", defaultDB, "database DSN")
	mid := f.String("merchant", "", "mid of the merchant (required)")
	day := f.String("date", "", "UTC day of the settlement batches, YYYY-MM-DD (required)")
	if err := f.parse(args); err != nil {
		return ignoreHelp(err)
	}
	if *mid == "" || *day == "" {
		return errors.New("report settlement: --merchant and --date are required")
	}
	return withService(ctx, env, *dsn, func(svc *paylink.Service) error {
		m, err := svc.Merchant(ctx, *mid)
		if err != nil {
			return err
		}
		rep, err := svc.SettlementReport(ctx, m, *day)
		if err != nil {
			return err
		}
		return rep.WriteCSV(env.stdout)
	})
}

// runAcquirer runs the sandbox acquirer's commands.
func runAcquirer(ctx context.Context, env environment, args []string) error {
	return runSubcommand(ctx, env, "acquirer", []subcommand{
		{"settlement-file", "what the sandbox acquirer settled on a day, CSV", runAcquirerSettlementFile},
	}, args)
}

// runAcquirerSettlementFile prints what the sandbox acquirer settled on
// a day.
func runAcquirerSettlementFile(ctx context.Context, env environment, args []string) error {
	f := newFlags("acquirer settlement-file", env)
	dsn := f.str("db", defaultDB, "database DSN")
	day := f.String("date", "", "UTC day, YYYY-MM-DD (required)")
	if err := f.parse(args); err != nil {
		return ignoreHelp(err)
	}
	return withService(ctx, env, *dsn, func(svc *paylink.Service) error {
		records, err := svc.AcquirerSettlement(ctx, *day)
		if err != nil {
			return err
		}
		return paylink.WriteSettlementFile(env.stdout, records)
	})
}

// varianceLine is a variance as reconcile prints it, tab-separated:
// kind, reference, then what each side has, each amount in its own
// currency. A side without the operation is left out: missing_in_file
// has no file line and no file amount, missing_in_ledger and
// duplicate_in_file no ledger amount.
func varianceLine(v paylink.Variance) string {
	fields := []string{"variance", v.Kind, v.Reference}
	if v.FileCurrency != "" {
		fields = append(fields, fmt.Sprintf("line %d", v.Line), "file "+money(v.FileAmount, v.FileCurrency))
	}
	if v.LedgerCurrency != "" {
		fields = append(fields, "ledger "+money(v.LedgerAmount, v.LedgerCurrency))
	}
	return strings.Join(fields, "\t")
}

// money formats minor units of currency as "10.00 AUD".
func money(minor int64, currency string) string {
	return paylink.FormatIn(minor, currency) + " " + currency
}

// runReconcile matches a settlement file against the ledger and prints
// every variance; it fails when there is any.
func runReconcile(ctx context.Context, env environment, args []string) error {
	f := newFlags("reconcile", env)
	dsn := f.str("db", defaultDB, "database DSN")
	file := f.String("file", "", "the acquirer's settlement file, CSV")
	runs := f.Int("runs", 0, "instead of reconciling a file, list the latest N runs and their variances, 1 to 200")
	if err := f.parse(args); err != nil {
		return ignoreHelp(err)
	}
	switch {
	case *runs != 0 && *file != "":
		return errors.New("reconcile: --file reconciles a file and --runs lists past runs: give one")
	case *runs != 0:
		return withService(ctx, env, *dsn, func(svc *paylink.Service) error { return listRuns(ctx, env, svc, *runs) })
	case *file == "":
		return errors.New("reconcile: --file is required (or --runs N to list past runs)")
	}
	fh, err := os.Open(*file)
	if err != nil {
		return fmt.Errorf("reconcile: %w", err)
	}
	defer fh.Close()
	records, err := paylink.ParseSettlementFile(fh)
	if err != nil {
		return fmt.Errorf("reconcile %s: %w", *file, err)
	}
	return withService(ctx, env, *dsn, func(svc *paylink.Service) error {
		rec, err := svc.Reconcile(ctx, filepath.Base(*file), records)
		if err != nil {
			return err
		}
		printRun(env, rec)
		if len(rec.Variances) > 0 {
			return fmt.Errorf("reconcile: %d variances", len(rec.Variances))
		}
		return nil
	})
}

// printRun prints a run's variances, then its summary line.
func printRun(env environment, rec *paylink.Reconciliation) {
	for _, v := range rec.Variances {
		fmt.Fprintln(env.stdout, varianceLine(v))
	}
	fmt.Fprintf(env.stdout, "reconciliation %s: %d matched, %d variances (%s)\n", rec.ID, rec.Matched, len(rec.Variances),
		strings.Join(rec.Days, ", "))
}

// listRuns prints the latest n reconciliation runs, newest first, as
// reconcile printed each (Service.Reconciliations, the operator's view).
func listRuns(ctx context.Context, env environment, svc *paylink.Service, n int) error {
	recs, err := svc.Reconciliations(ctx, n)
	if err != nil {
		return fmt.Errorf("reconcile --runs: %w", err)
	}
	for _, rec := range recs {
		fmt.Fprintf(env.stdout, "%s, %s\n", rec.FileName, rec.CreatedAt.Format(time.RFC3339))
		printRun(env, rec)
	}
	return nil
}
