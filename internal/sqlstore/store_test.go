package sqlstore_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/pgtest"
	"github.com/paylink/paylink/internal/sqlstore"
	"github.com/paylink/paylink/internal/storetest"
)

// pg is the package's throwaway PostgreSQL.
var pg pgtest.Shared

func TestMain(m *testing.M) {
	pg.Start()
	code := m.Run()
	pg.Stop()
	os.Exit(code)
}

func openSQLite(t *testing.T) paylink.Store {
	st, err := sqlstore.Open(context.Background(), filepath.Join(t.TempDir(), "test.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func openPostgres(t *testing.T) paylink.Store {
	dsn := pg.Database(t)
	st, err := sqlstore.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func TestSQLite(t *testing.T)   { storetest.Run(t, openSQLite) }
func TestPostgres(t *testing.T) { storetest.Run(t, openPostgres) }

func TestParseDSN(t *testing.T) {
	tests := []struct {
		in     string
		engine sqlstore.Engine
		path   string
		bad    bool
	}{
		{in: "paylink.db", engine: sqlstore.SQLite, path: "paylink.db"},
		{in: "sqlite:/var/lib/paylink.db", engine: sqlstore.SQLite, path: "/var/lib/paylink.db"},
		{in: "sqlite:///tmp/x.db", engine: sqlstore.SQLite, path: "/tmp/x.db"},
		{in: "postgres://u:p@h/db", engine: sqlstore.Postgres},
		{in: "postgresql://h/db", engine: sqlstore.Postgres},
		{in: "mysql://h/db", bad: true},
		{in: "file:s2.db?mode=rwc", bad: true},
		{in: "mysql://u:S3cretPW@h/db", bad: true},
		{in: "postgres://u:S3cretPW@127.0.0.1:bad/x", bad: true},
		{in: "", bad: true},
		// PostgreSQL's key=value form was a SQLite file of that name
		// (the CLI sweep): refused, unquoted.
		{in: "host=db.example dbname=paylink user=u password=S3cretPW", bad: true},
		{in: "dbname=paylink", bad: true},
		{in: "sqlite:/var/lib/plain=1.db", engine: sqlstore.SQLite, path: "/var/lib/plain=1.db"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			d, err := sqlstore.ParseDSN(tt.in)
			if (err != nil) != tt.bad {
				t.Fatalf("got err %v, want bad=%v", err, tt.bad)
			}
			if err != nil && strings.Contains(err.Error(), "S3cretPW") {
				t.Errorf("the error shows the password: %v", err)
			}
			if !tt.bad && (d.Engine != tt.engine || d.Path != tt.path) {
				t.Errorf("got %+v, want engine %s path %q", d, tt.engine, tt.path)
			}
		})
	}
}

// TestRedactDSN: a database address as logs and help show it keeps
// where it points and hides every password: in a URL's user part or its
// query, and in a key=value string, quoted (with blanks and quotes
// inside) or not.
func TestRedactDSN(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://u:S3cretPW@h:5432/db":                             "postgres://u:xxxxx@h:5432/db",
		"postgres://h/db?password=S3cretPW&sslmode=require":           "postgres://h/db?password=xxxxx&sslmode=require",
		"postgres://h/db?sslmode=verify-full&sslpassword=S3cretPW":    "postgres://h/db?sslmode=verify-full&sslpassword=xxxxx",
		"host=h password=S3cretPW user=u":                             "host=h password=xxxxx user=u",
		`host=h password = 'S3cret \' PW' dbname=d PASSWORD=S3cretPW`: "host=h password=xxxxx dbname=d password=xxxxx",
		"paylink.db": "paylink.db",
		"host=h dbname=İİİİ password=S3cretPW": "host=h dbname=İİİİ password=xxxxx",
	} {
		if got := sqlstore.RedactDSN(in); got != want {
			t.Errorf("RedactDSN(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestSQLitePathsAreTakenAsWritten: a database path holding "?", "#" or
// "%" is the file of that name, private, with every setting: the
// characters were read as the URI's query, fragment and escapes, and
// the database made at the path's first part, readable by anyone (the
// second verification sweep).
func TestSQLitePathsAreTakenAsWritten(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for _, name := range []string{"h#1.db", "q?d.db", "p%41.db", "slashes.db", ":memory:"} {
		path := filepath.Join(dir, name)
		switch name {
		case "slashes.db":
			path = "/" + path // //tmp/...: was read as a URI authority
		case ":memory:":
			path = name // relative: the file of that name, not a database in memory
		}
		st, err := sqlstore.Open(context.Background(), path)
		if err != nil {
			t.Fatalf("open %s: %v", name, err)
		}
		var timeout int
		if err := st.DB().QueryRow(`PRAGMA busy_timeout`).Scan(&timeout); err != nil || timeout != 10000 {
			t.Errorf("%s: busy_timeout %d (%v), want 10000", name, timeout, err)
		}
		st.Close()
		info, err := os.Stat(path)
		if err != nil || info.Size() == 0 || info.Mode().Perm() != 0o600 {
			t.Errorf("%s: got %v, %v, want the database itself, mode 0600", name, info, err)
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if n := e.Name(); !slices.Contains([]string{"h#1.db", "q?d.db", "p%41.db", "slashes.db", ":memory:"}, n) {
			t.Errorf("a file the paths did not name: %s", n)
		}
	}
}

// TestSQLiteStartsAtOnce: processes opening one new SQLite file at
// once (serve and migrate, or two commands) each migrate it or wait for
// the other: a deferred transaction that read schema_migrations and then
// wrote failed at once with SQLITE_BUSY (the CLI sweep).
func TestSQLiteStartsAtOnce(t *testing.T) {
	for round := range 5 {
		path := filepath.Join(t.TempDir(), fmt.Sprintf("race%d.db", round))
		errs := make(chan error, 4)
		for range cap(errs) {
			go func() {
				st, err := sqlstore.Open(context.Background(), path)
				if err == nil {
					err = st.Close()
				}
				errs <- err
			}()
		}
		for range cap(errs) {
			if err := <-errs; err != nil {
				t.Errorf("round %d: open: %v", round, err)
			}
		}
	}
}

func TestMigrationsAreIdempotent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	for i := range 2 {
		st, err := sqlstore.Open(context.Background(), path)
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		st.Close()
	}
	if got := sqlstore.SchemaVersion(sqlstore.SQLite); got != sqlstore.SchemaVersion(sqlstore.Postgres) {
		t.Errorf("got SQLite schema %d and PostgreSQL schema %d, want the same version", got, sqlstore.SchemaVersion(sqlstore.Postgres))
	}
}

// TestDroppedDatabaseIsUnavailable: a database dropped under a running
// store answers every call as unavailable (503 to clients), as a server
// that is down does, not as a fault of paylink's (500).
func TestDroppedDatabaseIsUnavailable(t *testing.T) {
	dsn := pg.Database(t)
	st, err := sqlstore.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.TrimPrefix(u.Path, "/")
	u.Path = "/postgres"
	admin, err := sql.Open("pgx", u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.Exec(`DROP DATABASE "` + name + `" WITH (FORCE)`); err != nil {
		t.Fatal(err)
	}
	for range 2 { // the pool's connection was cut; the next one cannot connect
		err = st.View(context.Background(), func(tx paylink.Tx) error {
			_, err := tx.Merchant("Mnobody")
			return err
		})
		if !errors.Is(err, paylink.ErrUnavailable) {
			t.Errorf("after the drop: got %v, want unavailable", err)
		}
	}
}

// TestInstancesStartingAtOnceOnAnEmptyDatabase: several instances open
// one empty PostgreSQL database at once, as a fresh deployment's do; each
// waits for the others' migrations, and every one opens.
func TestInstancesStartingAtOnceOnAnEmptyDatabase(t *testing.T) {
	dsn := pg.Database(t)
	const instances = 4
	errs := make(chan error, instances)
	for range instances {
		go func() {
			st, err := sqlstore.Open(context.Background(), dsn)
			if err == nil {
				err = st.Close()
			}
			errs <- err
		}()
	}
	for range instances {
		if err := <-errs; err != nil {
			t.Errorf("an instance starting with the others: %v", err)
		}
	}
}

// TestTheWALShrinksAfterALongSnapshot: a Snapshot (ledger verify) held
// while payments are written keeps SQLite from resetting its write-ahead
// log, which grows with every write meanwhile, and writes still commit.
// Once the snapshot ends, checkpoints reset the log and the file is
// truncated to walSizeLimit; without the limit it kept its peak size
// until the last connection closed.
func TestTheWALShrinksAfterALongSnapshot(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wal.db")
	st, err := sqlstore.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m := storetest.NewMerchant(t, st)
	n := 0
	write := func() {
		n++
		tr := storetest.NewTransaction(m, fmt.Sprintf("pr_wal%s%06d", m.ID, n), "", 100)
		if err := st.Update(context.Background(), func(tx paylink.Tx) error { return tx.CreateTransaction(tr) }); err != nil {
			t.Fatal(err)
		}
	}
	walSize := func() int64 {
		fi, err := os.Stat(path + "-wal")
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	held, release, done := make(chan struct{}), make(chan struct{}), make(chan error)
	go func() {
		done <- st.Snapshot(context.Background(), func(tx paylink.Tx) error {
			if _, err := tx.TransactionState(m.ID, "pr_none"); !errors.Is(err, paylink.ErrNotFound) {
				return fmt.Errorf("first read: %v", err)
			}
			close(held)
			<-release
			return nil
		})
	}()
	<-held
	const limit = sqlstore.WALSizeLimit
	for walSize() <= limit+(16<<20) {
		if n > 20000 {
			t.Fatalf("%d writes during the snapshot: the WAL is %d bytes, want it past the limit", n, walSize())
		}
		for i := 0; i < 100; i++ {
			write()
		}
	}
	peak := walSize()
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2000 && walSize() > limit; i++ {
		write()
	}
	if got := walSize(); got > limit {
		t.Errorf("after the snapshot and %d more writes: the WAL is %d bytes (peak %d), want at most %d", n, got, peak, limit)
	}
}

// TestPingProvesTheDatabaseCommits: the readiness check fails on a
// database that answers reads but cannot commit, SQLite's write lock held
// by another process or a PostgreSQL database turned read-only, and
// passes again once it can.
func TestPingProvesTheDatabaseCommits(t *testing.T) {
	ctx := context.Background()
	t.Run("sqlite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "test.db")
		st, err := sqlstore.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		other, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		conn, err := other.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
			t.Fatal(err)
		}
		before := st.UnavailableErrors()
		if err := pingWithin(st, time.Second); err == nil {
			t.Error("Ping with the write lock held elsewhere: nil error, want one")
		}
		if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
			t.Fatal(err)
		}
		if err := pingWithin(st, 15*time.Second); err != nil {
			t.Errorf("Ping once the lock is released: %v", err)
		}
		if n := st.UnavailableErrors() - before; n != 1 {
			t.Errorf("one failed Ping counted %d unavailable errors, want 1", n)
		}
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := pg.Database(t)
		st, err := sqlstore.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		if err := pingWithin(st, 5*time.Second); err != nil {
			t.Fatalf("Ping: %v", err)
		}
		admin, err := sql.Open("pgx", dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer admin.Close()
		readOnly := func(on bool) {
			t.Helper()
			q := "ALTER DATABASE " + pgDatabaseName(t, dsn) + " RESET default_transaction_read_only"
			if on {
				q = "ALTER DATABASE " + pgDatabaseName(t, dsn) + " SET default_transaction_read_only = on"
			}
			if _, err := admin.ExecContext(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		readOnly(true)
		defer readOnly(false)
		// A session keeps the settings it began with: a store opened now
		// has only read-only sessions, as after a failover to a standby.
		ro, err := sqlstore.OpenExisting(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer ro.Close()
		if err := pingWithin(ro, 5*time.Second); err == nil || !strings.Contains(err.Error(), "read-only") {
			t.Errorf("Ping on a read-only database: %v, want a read-only error", err)
		}
		readOnly(false)
		again, err := sqlstore.OpenExisting(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer again.Close()
		if err := pingWithin(again, 5*time.Second); err != nil {
			t.Errorf("Ping once the database takes writes again: %v", err)
		}
	})
}

// pingWithin is st.Ping bounded by d.
func pingWithin(st *sqlstore.Store, d time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return st.Ping(ctx)
}

// pgDatabaseName is the quoted name of the database of a PostgreSQL DSN.
func pgDatabaseName(t *testing.T, dsn string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return `"` + strings.TrimPrefix(u.Path, "/") + `"`
}
