package sqlstore

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/paylink/paylink"
)

// classify marks an error that says the database cannot be reached right
// now with paylink.ErrUnavailable, and counts it, so that callers answer
// 503 with Retry-After instead of 500 and operators see the outage in
// metrics. Other errors pass through unchanged.
func (s *Store) classify(err error) error {
	if err == nil || !unavailable(err) {
		return err
	}
	s.unavailable.Add(1)
	return fmt.Errorf("%w: %w", paylink.ErrUnavailable, err)
}

// UnavailableErrors counts the errors classified as an unreachable
// database since the store opened (the paylink_database_unavailable_total
// metric).
func (s *Store) UnavailableErrors() int64 { return s.unavailable.Load() }

// PostgreSQL error classes and codes that mean "not now": a connection
// exception (class 08), the server shutting down or restarting (57P01
// admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now), out
// of connection slots (53300), or the database gone (57P04
// database_dropped, 3D000 invalid_catalog_name when connecting to it).
var unavailableStates = map[string]bool{"57P01": true, "57P02": true, "57P03": true, "57P04": true, "53300": true, "3D000": true}

// unavailable reports whether err says the database cannot be reached or
// is restarting, rather than that a statement was wrong.
func unavailable(err error) bool {
	if errors.Is(err, paylink.ErrUnavailable) {
		return false // already classified
	}
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		return unavailableStates[pg.Code] || strings.HasPrefix(pg.Code, "08")
	}
	var lite *sqlite.Error
	if errors.As(err, &lite) {
		code := lite.Code() & 0xff // primary result code of an extended one
		return code == sqlite3.SQLITE_BUSY || code == sqlite3.SQLITE_LOCKED
	}
	var connect *pgconn.ConnectError
	var netErr net.Error
	return errors.As(err, &connect) || errors.As(err, &netErr) || errors.Is(err, driver.ErrBadConn) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		pgconn.SafeToRetry(err)
}
