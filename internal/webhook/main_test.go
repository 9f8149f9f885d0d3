package webhook_test

import (
	"os"
	"testing"

	"github.com/paylink/paylink/internal/pgtest"
)

// pg is the package's throwaway PostgreSQL, or nil with pgErr saying why.
var (
	pg    *pgtest.Server
	pgErr error
)

func TestMain(m *testing.M) {
	pg, pgErr = pgtest.Start()
	code := m.Run()
	if pg != nil {
		pg.Stop()
	}
	os.Exit(code)
}
