package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/paylink/paylink"
)

func runLedger(ctx context.Context, env environment, args []string) error {
	if len(args) == 0 {
		return errors.New("ledger: want a subcommand: verify")
	}
	switch args[0] {
	case "verify":
		return runLedgerVerify(ctx, env, args[1:])
	}
	return fmt.Errorf("ledger: unknown subcommand %q", args[0])
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
