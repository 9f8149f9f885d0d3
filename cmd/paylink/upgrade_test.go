package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/paylink/paylink/internal/sqlstore"
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
	applied, undo := without0028(t, dsn)
	undo()

	key := strings.Repeat("ab", 32)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := run(ctx, []string{"serve", "--db", dsn, "--addr", "127.0.0.1:0"},
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

// without0028 returns, for the PostgreSQL database of dsn, whether
// migration 0028 (which needs every instance of an older build stopped)
// is applied, and a function that makes the database as if it had not
// run yet (its one statement undone).
// withAppName is dsn with the application name app ("" for none).
func withAppName(dsn, app string) string {
	if app == "" {
		return dsn
	}
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	return dsn + sep + "application_name=" + url.QueryEscape(app)
}

func without0028(t *testing.T, dsn string) (applied func() bool, undo func()) {
	t.Helper()
	raw, err := sql.Open("pgx", withAppName(dsn, "paylink test")) // not an instance migrate would count
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	applied = func() bool {
		t.Helper()
		var n int
		if err := raw.QueryRow(`SELECT COUNT(*) FROM schema_migrations WHERE version = 28`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n == 1
	}
	undo = func() {
		t.Helper()
		for _, q := range []string{`DELETE FROM schema_migrations WHERE version = 28`,
			`ALTER TABLE idempotency_keys DROP COLUMN response_key_id`} {
			if _, err := raw.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
	}
	return applied, undo
}

// TestRunningInstanceWarnsWhenTheSchemaMovesPastIt: serve's
// schema-version-check job logs a warning, naming both versions, when a
// later build migrates the database while this instance serves; once per
// new version, not once a minute; and paylink_schema_behind is 1 from
// then on.
func TestRunningInstanceWarnsWhenTheSchemaMovesPastIt(t *testing.T) {
	db := filepath.Join(t.TempDir(), "p.db")
	st, err := sqlstore.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var logs bytes.Buffer
	watch := newSchemaWatch(st, newLoggerAt(&logs, slog.LevelInfo))
	var check func(context.Context) error
	for _, task := range backgroundTasks(nil, watch, nil) {
		if task.Name == "schema-version-check" {
			check = task.Run
		}
	}
	if check == nil {
		t.Fatal("no schema-version-check among serve's background tasks")
	}
	raw, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	ours := sqlstore.SchemaVersion(sqlstore.SQLite)
	warnings := func() int { return strings.Count(logs.String(), "schema is newer than this paylink's") }
	for i, step := range []struct {
		migrate      int // a later build's migration, or 0
		wantWarnings int
	}{
		{0, 0},
		{ours + 1, 1},
		{0, 1}, // the same version: no second warning
		{ours + 2, 2},
	} {
		if step.migrate > 0 {
			if _, err := raw.Exec(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, 'later_release', 0)`, step.migrate); err != nil {
				t.Fatal(err)
			}
		}
		if err := check(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := warnings(); got != step.wantWarnings {
			t.Errorf("check %d: got %d warnings, want %d:\n%s", i, got, step.wantWarnings, logs.String())
		}
		if got, want := testutil.ToFloat64(watch.behind), float64(min(step.wantWarnings, 1)); got != want {
			t.Errorf("check %d: got paylink_schema_behind %v, want %v", i, got, want)
		}
	}
	for _, want := range []string{fmt.Sprintf(`"database_version":%d,"paylink_version":%d`, ours+2, ours), "use that release's paylink"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the warnings do not say %s:\n%s", want, logs.String())
		}
	}
}

// TestOlderCommandsOnANewerSchema: the commands that open an existing
// database warn, in one line on standard error, when a later release has
// migrated it past this binary's schema, and go on; keys rotate refuses,
// changing nothing: it cannot know every column a later release seals.
// Before, they all ran silently, and keys rotate reported "still under an
// old key: 0" whatever a later release had sealed.
func TestOlderCommandsOnANewerSchema(t *testing.T) {
	db := filepath.Join(t.TempDir(), "p.db")
	if _, err := runCLI(t, "merchant", "create", "--db", db, "--name", "Acme Pty Ltd", "--trading-name", "Acme"); err != nil {
		t.Fatal(err)
	}
	cli := func(args ...string) (string, error) {
		t.Helper()
		var stderr bytes.Buffer
		err := run(context.Background(), append(args, "--db", db), func(string) string { return "" }, io.Discard, &stderr)
		return stderr.String(), err
	}
	commands := [][]string{{"settle"}, {"audit", "export", "--since", "1h"}, {"ledger", "verify"},
		{"merchant", "create", "--name", "Beta Pty Ltd", "--trading-name", "Beta"}}
	for _, c := range commands {
		if stderr, err := cli(c...); err != nil || strings.Contains(stderr, "newer") {
			t.Errorf("%v at this binary's schema: %v, stderr %q; want no warning", c, err, stderr)
		}
	}
	raw, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	ours := sqlstore.SchemaVersion(sqlstore.SQLite)
	if _, err := raw.Exec(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, 'later_release', 0)`, ours+1); err != nil {
		t.Fatal(err)
	}
	for _, c := range commands {
		stderr, err := cli(c...)
		if err != nil || strings.Count(stderr, sqlstore.NewerSchemaWarning) != 1 || strings.Count(stderr, "\n") != 1 ||
			!strings.Contains(stderr, fmt.Sprintf(`"database_version":%d,"paylink_version":%d`, ours+1, ours)) {
			t.Errorf("%v on a newer schema: %v, stderr %q; want it to go on after one line of warning naming both versions", c, err, stderr)
		}
	}
	key, err := os.ReadFile(db + ".key")
	if err != nil {
		t.Fatal(err)
	}
	_, err = cli("keys", "rotate")
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("schema version %d, newer than this paylink's %d", ours+1, ours)) {
		t.Errorf("keys rotate on a newer schema: got %v, want it refused naming both versions", err)
	}
	if after, err := os.ReadFile(db + ".key"); err != nil || !bytes.Equal(after, key) {
		t.Errorf("keys rotate on a newer schema changed the key file (%v)", err)
	}
}
