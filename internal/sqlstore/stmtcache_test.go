package sqlstore

import "testing"

func TestPositional(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`SELECT a FROM t WHERE b = $1 AND c = $2`, `SELECT a FROM t WHERE b = ? AND c = ?`},
		{`INSERT INTO t VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`, `INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`},
		{`SELECT a FROM t WHERE b = $1 OR c = $1`, `SELECT a FROM t WHERE b = $1 OR c = $1`},   // used twice
		{`SELECT a FROM t WHERE b = $2 AND c = $1`, `SELECT a FROM t WHERE b = $2 AND c = $1`}, // out of order
		{`SELECT '$1 x' FROM t WHERE b = $1`, `SELECT '$1 x' FROM t WHERE b = ?`},              // quoted text
		{`SELECT a FROM t WHERE b = ?`, `SELECT a FROM t WHERE b = ?`},                         // already anonymous
		{`SAVEPOINT job`, `SAVEPOINT job`},
	} {
		if got := positional(c.in); got != c.want {
			t.Errorf("positional(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
