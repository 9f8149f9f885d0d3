package sqlstore

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
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

// PostgreSQL error classes and codes that mean "not now", a state of the
// database rather than a wrong statement: a connection exception (class
// 08), insufficient resources (class 53: out of connection slots, disk
// full, out of memory), a system or I/O error (class 58), the server
// shutting down or restarting (57P01 admin_shutdown, 57P02
// crash_shutdown, 57P03 cannot_connect_now), the database gone (57P04
// database_dropped, 3D000 invalid_catalog_name when connecting to it), a
// statement cancelled by the server's statement_timeout or lock_timeout
// (57014 query_canceled, 55P03 lock_not_available), a session ended by
// idle_in_transaction_session_timeout (25P03), or a server that takes no
// writes (25006 read_only_sql_transaction: a standby after a fail-over).
var unavailableStates = map[string]bool{"57P01": true, "57P02": true, "57P03": true, "57P04": true, "3D000": true,
	"57014": true, "55P03": true, "25P03": true, "25006": true}

// unavailableClasses are the SQLSTATE classes that mean "not now".
var unavailableClasses = []string{"08", "53", "58"}

// unavailableSQLite are SQLite's primary result codes that mean "not
// now": the database locked by another connection, the disk full, an I/O
// error, the file read-only or unopenable.
var unavailableSQLite = []int{sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR,
	sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN}

// unavailable reports whether err says the database cannot be reached or
// is restarting, rather than that a statement was wrong.
func unavailable(err error) bool {
	if errors.Is(err, paylink.ErrUnavailable) {
		return false // already classified
	}
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		return unavailableStates[pg.Code] || len(pg.Code) == 5 && slices.Contains(unavailableClasses, pg.Code[:2])
	}
	var lite *sqlite.Error
	if errors.As(err, &lite) {
		return slices.Contains(unavailableSQLite, lite.Code()&0xff) // primary result code of an extended one
	}
	var connect *pgconn.ConnectError
	var netErr net.Error
	return errors.As(err, &connect) || errors.As(err, &netErr) || errors.Is(err, driver.ErrBadConn) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		pgconn.SafeToRetry(err)
}
