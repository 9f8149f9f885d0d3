package sqlstore_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paylink/paylink/internal/sqlstore"
)

// TestWaitingQueryUsesPartialIndex: the jobs' look-up of waiting
// transactions reads the partial index transactions_waiting on both
// engines. A planner only uses a partial index for a query that repeats
// its WHERE clause, so a drift between migration 0020 and the query would
// turn every job run into a scan of all transactions.
func TestWaitingQueryUsesPartialIndex(t *testing.T) {
	ctx := context.Background()
	args := []any{"PROCESSING", int64(1), 100}
	t.Run("SQLite", func(t *testing.T) {
		st, err := sqlstore.Open(ctx, filepath.Join(t.TempDir(), "plan.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		plan := explain(t, st.DB(), "EXPLAIN QUERY PLAN "+sqlstore.WaitingQuery, args)
		if !strings.Contains(plan, "USING INDEX transactions_waiting") {
			t.Errorf("plan:\n%s\nwant it to use transactions_waiting", plan)
		}
	})
	t.Run("PostgreSQL", func(t *testing.T) {
		st, err := sqlstore.Open(ctx, pg.Database(t))
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		conn, err := st.DB().Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		// An empty table is cheapest to scan: ask for the plan an index
		// would give, as on a table of millions.
		if _, err := conn.ExecContext(ctx, "SET enable_seqscan = off"); err != nil {
			t.Fatal(err)
		}
		plan := explain(t, conn, "EXPLAIN "+sqlstore.WaitingQuery, args)
		if !strings.Contains(plan, "transactions_waiting") {
			t.Errorf("plan:\n%s\nwant it to use transactions_waiting", plan)
		}
	})
}

// explain runs an EXPLAIN and returns its rows as text, one per line.
func explain(t *testing.T, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, query string, args []any) string {
	t.Helper()
	rows, err := q.QueryContext(context.Background(), query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		for _, v := range vals {
			if bs, ok := v.([]byte); ok {
				v = string(bs)
			}
			fmt.Fprint(&b, v, " ")
		}
		b.WriteString("\n")
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
