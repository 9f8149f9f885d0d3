package sqlstore

import (
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/paylink/paylink"
)

// TestClassifyUnavailable feeds the classifier the errors the drivers
// return; the outage drill (internal/api) and the SQLite busy test
// produce the real ones end to end.
func TestClassifyUnavailable(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"admin shutdown 57P01", &pgconn.PgError{Code: "57P01"}, true},
		{"crash shutdown 57P02", &pgconn.PgError{Code: "57P02"}, true},
		{"cannot connect now 57P03", &pgconn.PgError{Code: "57P03"}, true},
		{"too many connections 53300", &pgconn.PgError{Code: "53300"}, true},
		{"database dropped 57P04", &pgconn.PgError{Code: "57P04"}, true},
		{"no such database 3D000", &pgconn.PgError{Code: "3D000"}, true},
		{"connection failure 08006", fmt.Errorf("commit: %w", &pgconn.PgError{Code: "08006"}), true},
		{"connection refused", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, true},
		{"bad connection", driver.ErrBadConn, true},
		{"cut off mid-reply", fmt.Errorf("query: %w", io.ErrUnexpectedEOF), true},
		{"disk full 53100", &pgconn.PgError{Code: "53100"}, true},
		{"I/O error 58030", &pgconn.PgError{Code: "58030"}, true},
		{"statement_timeout 57014", &pgconn.PgError{Code: "57014"}, true},
		{"lock_timeout 55P03", &pgconn.PgError{Code: "55P03"}, true},
		{"idle in transaction timeout 25P03", &pgconn.PgError{Code: "25P03"}, true},
		{"read-only standby 25006", &pgconn.PgError{Code: "25006"}, true},
		{"unique violation", &pgconn.PgError{Code: "23505"}, false},
		{"check violation", &pgconn.PgError{Code: "23514"}, false},
		{"not UTF-8 22021", &pgconn.PgError{Code: "22021"}, false},
		{"serialization failure", &pgconn.PgError{Code: "40001"}, false},
		{"syntax error", &pgconn.PgError{Code: "42601"}, false},
		{"no rows", sql.ErrNoRows, false},
		{"conflict", paylink.ErrConflict, false},
		{"domain error", paylink.Errorf(paylink.KindInvalid, paylink.CodeInvalidRequest, "bad"), false},
		{"anything else", errors.New("boom"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &Store{}
			err := s.classify(tt.err)
			if got := errors.Is(err, paylink.ErrUnavailable); got != tt.want {
				t.Errorf("got unavailable %v, want %v (%v)", got, tt.want, err)
			}
			if !errors.Is(err, tt.err) {
				t.Errorf("got %v, want the original error still wrapped", err)
			}
			if got, want := s.UnavailableErrors(), map[bool]int64{true: 1, false: 0}[tt.want]; got != want {
				t.Errorf("counted %d, want %d", got, want)
			}
			if tt.want && s.classify(err) != err {
				t.Error("classifying twice: got a second wrapper, want the error unchanged")
			}
		})
	}
}

// TestReadOnlySQLiteIsUnavailable: a database file that cannot be
// written (a read-only mount, a full disk, an I/O error) is an outage to
// answer 503, not a bug; SQLite's real read-only error is classified so.
func TestReadOnlySQLiteIsUnavailable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ro.db")
	rw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rw.Exec(`CREATE TABLE t (x INTEGER)`); err != nil {
		t.Fatal(err)
	}
	rw.Close()
	ro, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	_, err = ro.Exec(`INSERT INTO t VALUES (1)`)
	if err == nil {
		t.Fatal("a write to a read-only database succeeded")
	}
	if got := (&Store{}).classify(err); !errors.Is(got, paylink.ErrUnavailable) {
		t.Errorf("got %v, want it classified unavailable", got)
	}
}
