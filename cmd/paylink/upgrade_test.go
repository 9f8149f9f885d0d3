package main

import (
	"context"
	"database/sql"
	"io"
	"strings"
	"testing"
	"time"
)

// TestServeLeavesAStopEveryInstanceMigrationToMigrate: on a PostgreSQL
// database in use that lacks migration 0028 (which needs every instance
// of an older build stopped), serve applies nothing and exits naming the
// migration and paylink migrate, where before it applied 0028 on start
// under the older instances' feet; so does merchant create, the other
// command that migrates; migrate then applies it, and serve starts on
// the result. (A fresh database gets every migration from
// serve: the e2e tests start serve on one.)
func TestServeLeavesAStopEveryInstanceMigrationToMigrate(t *testing.T) {
	dsn := pg.Database(t)
	if _, err := runCLI(t, "migrate", "--db", dsn); err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	exec := func(q string) {
		t.Helper()
		if _, err := raw.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	applied := func() bool {
		t.Helper()
		var n int
		if err := raw.QueryRow(`SELECT COUNT(*) FROM schema_migrations WHERE version = 28`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n == 1
	}
	// The database as if 0028 had not run yet (its one statement undone).
	exec(`DELETE FROM schema_migrations WHERE version = 28`)
	exec(`ALTER TABLE idempotency_keys DROP COLUMN response_key_id`)

	key := strings.Repeat("ab", 32)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = run(ctx, []string{"serve", "--db", dsn, "--addr", "127.0.0.1:0"},
		func(k string) string { return map[string]string{"PAYLINK_MASTER_KEY": key}[k] }, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "migration 0028_idempotency_sealed.sql needs every instance of an older paylink stopped") ||
		!strings.Contains(err.Error(), "Stop every paylink instance, run this build's paylink migrate, then start this build") {
		t.Errorf("serve on a database in use without 0028: got %v, want 0028 refused, naming paylink migrate", err)
	}
	if applied() {
		t.Fatal("serve applied 0028 to a database in use")
	}
	if _, err := runCLIWith(t, map[string]string{"PAYLINK_MASTER_KEY": key}, "merchant", "create", "--db", dsn, "--name", "Acme", "--trading-name", "Acme"); err == nil ||
		!strings.Contains(err.Error(), "run this build's paylink migrate") || applied() {
		t.Errorf("merchant create on a database in use without 0028: got %v (0028 applied: %v), want 0028 refused", err, applied())
	}
	if _, err := runCLI(t, "migrate", "--db", dsn); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	if !applied() {
		t.Fatal("migrate did not apply 0028")
	}
	t.Setenv("PAYLINK_MASTER_KEY", key)
	startServe(t, dsn)
}
