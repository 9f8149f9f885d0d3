package sqlstore_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

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
		{in: "", bad: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			d, err := sqlstore.ParseDSN(tt.in)
			if (err != nil) != tt.bad {
				t.Fatalf("got err %v, want bad=%v", err, tt.bad)
			}
			if !tt.bad && (d.Engine != tt.engine || d.Path != tt.path) {
				t.Errorf("got %+v, want engine %s path %q", d, tt.engine, tt.path)
			}
		})
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
