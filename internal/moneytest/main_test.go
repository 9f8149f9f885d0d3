// Package moneytest tests paylink's money rules at the Service level, on
// SQLite and on PostgreSQL: every movement posted once to a balanced
// journal, balances that follow the payments, and a ledger that verifies.
package moneytest

import (
	"os"
	"testing"

	"github.com/paylink/paylink/internal/pgtest"
)

var pg pgtest.Shared

func TestMain(m *testing.M) {
	pg.Start()
	code := m.Run()
	pg.Stop()
	os.Exit(code)
}

// engines runs fn on a fresh SQLite store and a fresh PostgreSQL database.
func engines(t *testing.T, fn func(t *testing.T, dsn string)) {
	t.Run("sqlite", func(t *testing.T) { fn(t, "") })
	t.Run("postgres", func(t *testing.T) { fn(t, pg.Database(t)) })
}
