package main

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paylink/paylink/internal/sqlstore"
)

// TestCommandsNeedAnExistingDatabase: only serve, demo, migrate and
// merchant create start a database. Every other command refuses a
// missing SQLite file or a PostgreSQL database without paylink's schema,
// and creates nothing, so that a mistyped --db is never a green check
// on an empty database.
func TestCommandsNeedAnExistingDatabase(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "typo.db")
	for _, args := range [][]string{
		{"ledger", "verify", "--db", missing},
		{"webhooks", "list", "--db", missing},
		{"audit", "export", "--db", missing, "--since", "1h"},
		{"review", "--db", missing},
		{"settle", "--db", missing},
		{"merchant", "list", "--db", missing},
		{"keys", "rotate", "--db", missing},
	} {
		if _, err := runCLI(t, args...); err == nil || !strings.Contains(err.Error(), "no database at") {
			t.Errorf("%s: got %v, want no database", strings.Join(args[:2], " "), err)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the commands created %v", entries)
	}

	// A server that cannot be reached is said to be unreachable, not to
	// lack a schema.
	if _, err := runCLI(t, "ledger", "verify", "--db", "postgres://paylink@127.0.0.1:1/paylink?sslmode=disable&connect_timeout=2"); err == nil ||
		!strings.Contains(err.Error(), "cannot be reached") || strings.Contains(err.Error(), "no paylink schema") {
		t.Errorf("ledger verify with PostgreSQL down: got %v, want it said to be unreachable", err)
	}
	dsn := pg.Database(t)
	if _, err := runCLI(t, "audit", "export", "--db", dsn, "--since", "1h"); err == nil || !strings.Contains(err.Error(), "no paylink schema") {
		t.Errorf("audit export on an empty PostgreSQL database: got %v, want no schema", err)
	}
	// A login refused is said so, not that the database lacks a schema
	// (key rotation sweep).
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User("no_such_role")
	if _, err := runCLI(t, "audit", "export", "--db", u.String(), "--since", "1h"); err == nil || strings.Contains(err.Error(), "no paylink schema") ||
		!strings.Contains(err.Error(), "no_such_role") {
		t.Errorf("audit export as a role that does not exist: got %v, want the login's refusal", err)
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var tables int
	if err := db.QueryRow(`SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'public'`).Scan(&tables); err != nil || tables != 0 {
		t.Errorf("after the refusal: %d tables (%v), want none", tables, err)
	}
}

// TestArgumentsAreNotIgnored: a path given without --db is refused, not
// dropped for the default ./paylink.db, and flags may follow a
// command's own argument.
func TestArgumentsAreNotIgnored(t *testing.T) {
	db := filepath.Join(t.TempDir(), "p.db")
	if _, err := runCLI(t, "merchant", "create", "--db", db, "--name", "Acme Pty Ltd", "--trading-name", "Acme"); err != nil {
		t.Fatal(err)
	}
	if _, err := runCLI(t, "ledger", "verify", db); err == nil || !strings.Contains(err.Error(), "unexpected argument") {
		t.Errorf("ledger verify PATH: got %v, want an unexpected argument", err)
	}
	if _, err := os.Stat("paylink.db"); err == nil {
		t.Error("a paylink.db was created in the working directory")
	}
	if _, err := runCLI(t, "webhooks", "resend", "msg_nope", "--db", db); err == nil || !strings.Contains(err.Error(), "no webhook delivery msg_nope") {
		t.Errorf("webhooks resend ID --db PATH: got %v, want the delivery looked up in PATH", err)
	}
}

// TestKeysThatOpenNothingAreRefused: a SQLite database whose merchants'
// secrets were sealed under a key kept elsewhere gets no new key file
// from a command run without that key; and serve refuses to start with a
// master key that does not open the merchants' secrets.
func TestKeysThatOpenNothingAreRefused(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "p.db")
	sealed := map[string]string{"PAYLINK_MASTER_KEY": strings.Repeat("1a", 32)}
	if _, err := runCLIWith(t, sealed, "merchant", "create", "--db", db, "--name", "Acme Pty Ltd", "--trading-name", "Acme"); err != nil {
		t.Fatal(err)
	}
	if _, err := runCLI(t, "webhooks", "list", "--db", db); err == nil || !strings.Contains(err.Error(), "is missing but the database holds merchants") {
		t.Errorf("without the key: got %v, want the missing key file named", err)
	}
	if _, err := os.Stat(db + ".key"); err == nil {
		t.Error("a new key file was created beside a database sealed under another key")
	}
	wrong := map[string]string{"PAYLINK_MASTER_KEY": strings.Repeat("2b", 32)}
	_, err := runCLIWith(t, wrong, "serve", "--db", db, "--addr", "127.0.0.1:0")
	if err == nil || !strings.Contains(err.Error(), "does not open with this instance's keys") {
		t.Errorf("serve with another key: got %v, want a refusal to start", err)
	}
}

// TestCountsAndTimesOutOfRangeAreRefused: the administrative commands'
// counts, a secret rotation's overlap outside 0 to 168h, an API key's
// overlap that is not whole seconds and a country code ISO 3166-1 does
// not assign are refused before anything is done.
func TestCountsAndTimesOutOfRangeAreRefused(t *testing.T) {
	db := filepath.Join(t.TempDir(), "p.db")
	created, err := runCLI(t, "merchant", "create", "--db", db, "--name", "Acme Pty Ltd", "--trading-name", "Acme", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var creds struct{ MID string }
	if err := json.Unmarshal([]byte(created), &creds); err != nil || creds.MID == "" {
		t.Fatalf("merchant create printed %q", created)
	}
	mid := creds.MID
	if _, err := runCLI(t, "merchant", "rotate-webhook-secret", "--db", db, "--merchant", mid, "--overlap", "168h"); err != nil {
		t.Fatalf("an overlap of a week: %v", err)
	}
	for _, args := range [][]string{
		{"keys", "rotate", "--db", db, "--batch", "0"},
		{"webhooks", "list", "--db", db, "--limit", "-1"},
		{"review", "--db", db, "--limit", "-5"},
		{"merchant", "rotate-webhook-secret", "--db", db, "--merchant", mid, "--overlap", "-1h"},
		{"merchant", "rotate-webhook-secret", "--db", db, "--merchant", mid, "--overlap", "100000h"},
		{"merchant", "roll-api-key", "--db", db, "--merchant", mid, "--overlap", "1ns"},
		{"merchant", "create", "--db", db, "--name", "Acme", "--trading-name", "Acme", "--country", "ZZ"},
		{"merchant", "create", "--db", db, "--name", "Acme", "--trading-name", "Acme", "--country", "UK"},
	} {
		if _, err := runCLI(t, args...); err == nil {
			t.Errorf("%v: got nil error, want it refused", args)
		}
	}
}

// TestNewerSchemaIsReported: after a later release migrated the database
// (a schema_migrations row newer than this binary's), migrate says so
// and serve starts with a warning naming both versions.
func TestNewerSchemaIsReported(t *testing.T) {
	db := filepath.Join(t.TempDir(), "p.db")
	if _, err := runCLI(t, "migrate", "--db", db); err != nil {
		t.Fatal(err)
	}
	later := sqlstore.SchemaVersion(sqlstore.SQLite) + 1
	raw, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	_, err = raw.Exec(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, 'later_release', 0)`, later)
	raw.Close()
	if err != nil {
		t.Fatal(err)
	}
	out, err := runCLI(t, "migrate", "--db", db)
	if err != nil || !strings.Contains(out, fmt.Sprintf("schema version %d", later)) || !strings.Contains(out, "newer than this paylink's") {
		t.Errorf("migrate on a newer schema: %v\n%s", err, out)
	}
	s := startServe(t, db)
	s.waitLog(t, "schema is newer than this paylink's")
	if log := s.logText(); !strings.Contains(log, fmt.Sprintf(`"database_version":%d`, later)) {
		t.Errorf("the warning does not name the database's version %d:\n%s", later, log)
	}
}

// migratedDatabase is a fresh SQLite database migrated by the CLI, which
// reports no changed migration, and a connection to it.
func migratedDatabase(t *testing.T) (string, *sql.DB) {
	t.Helper()
	db := filepath.Join(t.TempDir(), "p.db")
	if out, err := runCLI(t, "migrate", "--db", db); err != nil || strings.Contains(out, "may differ") {
		t.Fatalf("a fresh database: %v\n%s", err, out)
	}
	raw, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	return db, raw
}

// TestChangedMigrationIsReported: a database whose schema_migrations
// names another file for a version than this binary's (a migration a
// development build applied and that was renumbered or replaced since)
// is reported by migrate and by serve's warning, naming both files.
func TestChangedMigrationIsReported(t *testing.T) {
	db, raw := migratedDatabase(t)
	_, err := raw.Exec(`UPDATE schema_migrations SET name = '0018_stateless_transaction_tokens.sql' WHERE version = 18`)
	raw.Close()
	if err != nil {
		t.Fatal(err)
	}
	out, err := runCLI(t, "migrate", "--db", db)
	if err != nil || !strings.Contains(out, "0018 applied as 0018_stateless_transaction_tokens.sql, this paylink's is 0018_") {
		t.Errorf("migrate on a database with a changed migration: %v\n%s", err, out)
	}
	s := startServe(t, db)
	s.waitLog(t, "migrations were applied from other files")
}

// TestEditedMigrationIsReported: a migration recorded under this binary's
// name but with another file's checksum (one edited after a development
// build ran it) is reported by migrate, naming it; a fresh database and
// one whose migrations ran before checksums were recorded report none.
func TestEditedMigrationIsReported(t *testing.T) {
	db, raw := migratedDatabase(t)
	defer raw.Close()
	var missing int
	if err := raw.QueryRow(`SELECT COUNT(*) FROM schema_migrations WHERE checksum IS NULL OR length(checksum) != 64`).Scan(&missing); err != nil || missing != 0 {
		t.Fatalf("migrations without a checksum after migrate: %d (%v)", missing, err)
	}
	exec := func(q string) {
		t.Helper()
		if _, err := raw.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	exec(`UPDATE schema_migrations SET checksum = NULL`) // as migrated before 0031
	if out, err := runCLI(t, "migrate", "--db", db); err != nil || strings.Contains(out, "may differ") {
		t.Fatalf("a database migrated before checksums: %v\n%s", err, out)
	}
	exec(`UPDATE schema_migrations SET checksum = 'ab' || substr(checksum, 3) WHERE version = 30`)
	out, err := runCLI(t, "migrate", "--db", db)
	if err != nil || !strings.Contains(out, "migration 0030 applied from another 0030_token_spent_by.sql") {
		t.Errorf("migrate on a database with an edited migration: %v\n%q", err, out)
	}
}
