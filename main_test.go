package paylink_test

import (
	"os"
	"testing"

	"github.com/paylink/paylink/internal/pgtest"
)

// pg is the package's throwaway PostgreSQL, for Service tests that run on
// both store engines.
var pg pgtest.Shared

func TestMain(m *testing.M) {
	pg.Start()
	code := m.Run()
	pg.Stop()
	os.Exit(code)
}
