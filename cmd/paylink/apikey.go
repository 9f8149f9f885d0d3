package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/paylink/paylink"
)

// runRollAPIKey gives a merchant a new API key, printed once, and keeps
// the previous one working for the overlap so that the merchant can
// deploy the new key first (0 revokes it at once, for a leaked key). It
// rolls the key it read as current, and is refused when another roll
// replaced that key before this one was made.
func runRollAPIKey(ctx context.Context, env environment, args []string) error {
	f := newFlags("merchant roll-api-key", env)
	dsn := f.str("db", defaultDB, "database DSN")
	mid := f.String("merchant", "", "mid of the merchant (required)")
	overlap := f.Duration("overlap", 24*time.Hour, "how long the previous key keeps working, in whole seconds (0 revokes it, within 10s on every instance; at most 168h)")
	if err := f.parse(args); err != nil {
		return ignoreHelp(err)
	}
	if *mid == "" {
		return errors.New("merchant roll-api-key: --merchant is required")
	}
	return withService(ctx, env, *dsn, func(svc *paylink.Service) error {
		m, err := svc.Merchant(ctx, *mid)
		if err != nil {
			return err
		}
		// Rolled from the key read here, as the dashboard rolls from the
		// key its page showed: a roll made meanwhile (another command, an
		// admin) refuses this one, changing nothing, rather than having
		// its new key cut off after this roll's overlap.
		fmt.Fprintf(env.stderr, "Rolling API key %s of %s.\n", m.APIKeyID(), *mid)
		key, err := svc.RollAPIKey(ctx, *mid, m.APIKeyID(), *overlap)
		if err != nil {
			return err
		}
		fmt.Fprintf(env.stdout, "New API key for %s (shown once; store it now):\n\napi_key: %s\nkey_id:  %s\n\n", *mid, key,
			paylink.APIKeyID(paylink.HashSecret(key)))
		if *overlap == 0 {
			fmt.Fprintf(env.stdout, "Every previous key is revoked: refused at once, or within %s by an instance that authenticated it just before (its cache).\n", paylink.AuthCacheTTL)
			return nil
		}
		fmt.Fprintf(env.stdout, "Previous keys keep working until %s (for %s), then stop.\n",
			svc.Now().Add(*overlap).Format(time.RFC3339), *overlap)
		return nil
	})
}
