package main

import (
	"context"
	"fmt"

	"github.com/paylink/paylink/internal/sqlstore"
)

func runMigrate(ctx context.Context, env environment, args []string) error {
	f := newFlags("migrate", env)
	dsn := f.str("db", defaultDB, "database DSN")
	if err := f.parse(args); err != nil {
		return ignoreHelp(err)
	}
	st, err := openStore(ctx, *dsn) // Open applies pending migrations
	if err != nil {
		return err
	}
	defer st.Close()
	fmt.Fprintf(env.stdout, "database is at schema version %d (%s)\n", sqlstore.SchemaVersion(st.Engine()), st.Engine())
	return nil
}
