package main

import (
	"context"
	"fmt"

	"github.com/paylink/paylink/internal/sqlstore"
)

func runMigrate(ctx context.Context, env environment, args []string) error {
	f := newFlags("migrate", env)
	dsn := f.str("db", defaultDB, "database DSN")
	force := f.Bool("force", false, "on PostgreSQL, apply a migration that needs every older instance stopped even while other "+
		"paylink sessions (or unnamed ones, as older builds') are connected: instances of an older build still serving may then "+
		"misbehave on the new schema")
	if err := f.parse(args); err != nil {
		return ignoreHelp(err)
	}
	// It applies every pending migration, those that need every older
	// instance stopped too (migrate is how an operator applies them), but
	// those only once no other paylink session (nor an unnamed one, as an
	// older build's are) is connected, or --force.
	st, err := sqlstore.OpenToMigrate(ctx, *dsn, *force, sqlstore.WithLogger(newLogger(env.stderr)))
	if err != nil {
		return fmt.Errorf("open database: %w", err)
	}
	defer st.Close()
	have, err := st.AppliedVersion(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "database is at schema version %d (%s)\n", have, st.Engine())
	if want := sqlstore.SchemaVersion(st.Engine()); have > want {
		fmt.Fprintf(env.stdout, "it is newer than this paylink's %d: a later release migrated it\n", want)
	}
	changed, err := st.ChangedMigrations(ctx)
	if err != nil {
		return err
	}
	for _, c := range changed {
		fmt.Fprintf(env.stdout, "migration %s: the schema may differ from a fresh database's (docs/operations.md, Upgrading)\n", c)
	}
	return nil
}
