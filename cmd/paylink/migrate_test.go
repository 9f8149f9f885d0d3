package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paylink/paylink/internal/sqlstore"
)

// TestMigrateRefusesAStopEveryInstanceMigrationWhileInstancesAreConnected:
// on a PostgreSQL database in use that lacks migration 0028 (which needs
// every instance of an older build stopped), paylink migrate applies
// nothing and exits with an error naming the migration's reason and how
// many other paylink sessions are connected while a session named paylink
// (an instance still serving) or one with no name (an instance of a build
// older than paylink's naming of its sessions, which the SRE sweep found
// uncounted) is; it applies 0028 once that session is
// gone, or with --force. Before, it applied 0028 under the instances'
// feet and said only "database is at schema version N".
func TestMigrateRefusesAStopEveryInstanceMigrationWhileInstancesAreConnected(t *testing.T) {
	dsn := pg.Database(t)
	if _, err := runCLI(t, "migrate", "--db", dsn); err != nil {
		t.Fatal(err)
	}
	applied, undo28 := without0028(t, dsn)
	// instance is a session named app standing in for a running
	// instance (no name: one of a build older than paylink's naming of
	// its sessions); closing the returned pool ends it.
	instance := func(app string) *sql.DB {
		t.Helper()
		db, err := sql.Open("pgx", withAppName(dsn, app))
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Ping(); err != nil {
			t.Fatal(err)
		}
		return db
	}

	for _, app := range []string{"paylink", ""} {
		undo28()
		serving := instance(app)
		_, err := runCLI(t, "migrate", "--db", dsn)
		for _, want := range []string{"migration 0028_idempotency_sealed.sql needs every instance of an older paylink stopped",
			`1 other session(s) named "paylink" or with no application name (as older builds' are) are connected`, "--force", "nothing applied"} {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("migrate with an instance named %q connected: got %v, want an error with %q", app, err, want)
			}
		}
		if applied() {
			t.Fatalf("migrate applied 0028 while an instance named %q was connected", app)
		}
		serving.Close()
		if _, err := runCLI(t, "migrate", "--db", dsn); err != nil {
			t.Fatalf("migrate once the instance is gone: %v", err)
		}
		if !applied() {
			t.Fatal("migrate did not apply 0028 once the instance was gone")
		}
	}

	undo28()
	serving := instance("paylink")
	defer serving.Close()
	if _, err := runCLI(t, "migrate", "--db", dsn, "--force"); err != nil {
		t.Fatalf("migrate --force with an instance connected: %v", err)
	}
	if !applied() {
		t.Fatal("migrate --force did not apply 0028")
	}
}

// TestTwoMigratesAtOnce: two paylink migrate runs started together on a
// database in use with a stop-every-instance migration pending, no
// instance connected, both succeed: the one waiting for the run lock is
// not an instance (verification sweep: it was counted as one, and the
// other run refused).
func TestTwoMigratesAtOnce(t *testing.T) {
	dsn := pg.Database(t)
	if _, err := runCLI(t, "migrate", "--db", dsn); err != nil {
		t.Fatal(err)
	}
	applied, undo28 := without0028(t, dsn)
	undo28()
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			_, err := runCLI(t, "migrate", "--db", dsn)
			errs <- err
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Errorf("one of two migrates at once: %v", err)
		}
	}
	if !applied() {
		t.Error("0028 not applied by two migrates at once")
	}
}

// TestMigrateCountsInstancesWithALongApplicationName: PostgreSQL keeps
// an application name's first 63 bytes, and migrate compares by the name
// as PostgreSQL keeps it, so instances with a long name are still counted
// (security sweep: with a 68-byte name migrate counted none and applied
// 0028 under a connected instance; the fourth verification sweep found
// the same for 53 to 62 bytes after the first fix).
func TestMigrateCountsInstancesWithALongApplicationName(t *testing.T) {
	dsn := pg.Database(t)
	if _, err := runCLI(t, "migrate", "--db", dsn); err != nil {
		t.Fatal(err)
	}
	applied, undo28 := without0028(t, dsn)
	// 53 to 62 bytes: the lock connection's longer name is cut to 63 and
	// no longer ends in " migrations" (fourth verification sweep).
	for _, n := range []int{52, 53, 58, 62, 63, 68} {
		named := withAppName(dsn, "paylink-"+strings.Repeat("x", n-len("paylink-")))
		if applied() {
			undo28()
		}
		serving, err := sql.Open("pgx", named)
		if err != nil {
			t.Fatal(err)
		}
		if err := serving.Ping(); err != nil {
			t.Fatal(err)
		}
		if _, err := runCLI(t, "migrate", "--db", named); err == nil || !strings.Contains(err.Error(), "1 other session(s) named") || applied() {
			t.Errorf("migrate with an instance of a %d-byte name connected: got %v (applied %v), want it refused", n, err, applied())
		}
		serving.Close()
	}
}

// TestMigrateSaysWhatItApplied: paylink migrate logs the migrations it
// applies, in one line (how many, the first and the last), and nothing
// when the database is current (SRE sweep: from schema 24 it applied 15
// migrations and printed only the version it ended at).
func TestMigrateSaysWhatItApplied(t *testing.T) {
	db := filepath.Join(t.TempDir(), "paylink.db")
	type applied struct {
		Msg, First, Last string
		Count            int
	}
	migrate := func() []applied {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if err := run(context.Background(), []string{"migrate", "--db", db}, func(string) string { return "" }, &stdout, &stderr); err != nil {
			t.Fatal(err)
		}
		var lines []applied
		for _, l := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
			var line applied
			if json.Unmarshal([]byte(l), &line) == nil && strings.HasPrefix(line.Msg, "applied migration") {
				lines = append(lines, line)
			}
		}
		return lines
	}
	first := migrate()
	last := fmt.Sprintf("%04d_", sqlstore.SchemaVersion(sqlstore.SQLite))
	if len(first) != 1 || first[0].Count < 2 || first[0].First != "0001_init.sql" || !strings.HasPrefix(first[0].Last, last) {
		t.Errorf("first migrate logged %+v, want one line from 0001_init.sql to %s...", first, last)
	}
	if again := migrate(); len(again) != 0 {
		t.Errorf("migrate on a current database logged %+v, want nothing applied", again)
	}
}

// TestMigrateSeesInstancesOfAnotherRole: migrate run as the database's
// owner counts the sessions of instances logged in as another role,
// whose backend type PostgreSQL hides from it (verification sweep: the
// count of client backends saw none of them, named or not, and 0028 was
// applied under them).
func TestMigrateSeesInstancesOfAnotherRole(t *testing.T) {
	dsn := pg.Database(t)
	suffix := strings.ToLower(strings.TrimPrefix(t.Name(), "Test"))[:8] + fmt.Sprint(time.Now().UnixNano()%1e6)
	owner, app := "owner_"+suffix, "app_"+suffix
	admin, err := sql.Open("pgx", withAppName(dsn, "paylink test")) // not an instance migrate would count
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	u, _ := url.Parse(dsn)
	for _, q := range []string{"CREATE ROLE " + owner + " LOGIN", "CREATE ROLE " + app + " LOGIN",
		"ALTER DATABASE " + strings.TrimPrefix(u.Path, "/") + " OWNER TO " + owner} {
		if _, err := admin.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	as := func(role string) string { v := *u; v.User = url.User(role); return v.String() }
	if _, err := runCLI(t, "migrate", "--db", as(owner)); err != nil {
		t.Fatal(err)
	}
	applied, undo28 := without0028(t, as(owner))
	for _, name := range []string{"paylink", ""} {
		undo28()
		serving, err := sql.Open("pgx", withAppName(as(app), name))
		if err != nil {
			t.Fatal(err)
		}
		if err := serving.Ping(); err != nil {
			t.Fatal(err)
		}
		if _, err := runCLI(t, "migrate", "--db", as(owner)); err == nil || !strings.Contains(err.Error(), "1 other session(s)") || applied() {
			t.Errorf("migrate as %s with an instance of %s named %q connected: got %v (applied %v), want it refused", owner, app, name, err, applied())
		}
		serving.Close()
		if _, err := runCLI(t, "migrate", "--db", as(owner)); err != nil || !applied() {
			t.Fatalf("migrate once the instance is gone: %v (applied %v)", err, applied())
		}
	}
}
