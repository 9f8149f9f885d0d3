package sqlstore

import (
	"context"
	"database/sql"
	"strconv"
	"sync"
)

// preparer is what *sql.DB and *sql.Conn have for preparing statements.
type preparer interface {
	sqlQuerier
	PrepareContext(ctx context.Context, query string) (*sql.Stmt, error)
}

// stmtCache is a querier that prepares each distinct SQL text once and
// reuses the statement. SQLite (modernc) otherwise parses and plans every
// statement on every call, which dominates the single writer's time.
// PostgreSQL does not need it: pgx caches prepared statements itself.
type stmtCache struct {
	on    preparer
	mu    sync.Mutex
	stmts map[string]*sql.Stmt
}

func newStmtCache(on preparer) *stmtCache {
	return &stmtCache{on: on, stmts: map[string]*sql.Stmt{}}
}

// stmt returns the prepared statement for query, preparing it on first
// use; nil when it cannot be prepared (the caller then runs the query
// unprepared, which reports the error).
func (c *stmtCache) stmt(ctx context.Context, query string) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.stmts[query]; ok {
		return st
	}
	st, err := c.on.PrepareContext(ctx, positional(query))
	if err != nil {
		return nil
	}
	c.stmts[query] = st
	return st
}

// ExecContext runs a cached statement.
func (c *stmtCache) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := c.stmt(ctx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return c.on.ExecContext(ctx, query, args...)
}

// QueryContext runs a cached query.
func (c *stmtCache) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := c.stmt(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return c.on.QueryContext(ctx, query, args...)
}

// QueryRowContext runs a cached single-row query.
func (c *stmtCache) QueryRowContext(ctx context.Context, query string, args ...any) row {
	if st := c.stmt(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return c.on.QueryRowContext(ctx, query, args...)
}

// close releases every prepared statement.
func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for q, st := range c.stmts {
		st.Close()
		delete(c.stmts, q)
	}
}

// positional rewrites the numbered placeholders $1, $2, ... of a query
// that uses each once and in order into SQLite's anonymous "?", which
// modernc binds by position; a numbered placeholder is bound by looking
// its name up (a C call and a string per argument on every execution).
// Any other query is returned unchanged. Quoted text is left alone.
func positional(query string) string {
	out := make([]byte, 0, len(query))
	next, quoted := 1, false
	for i := 0; i < len(query); i++ {
		ch := query[i]
		switch {
		case ch == '\'':
			quoted = !quoted
		case ch == '$' && !quoted:
			j := i + 1
			for j < len(query) && query[j] >= '0' && query[j] <= '9' {
				j++
			}
			if query[i+1:j] != strconv.Itoa(next) {
				return query
			}
			out = append(out, '?')
			next++
			i = j - 1
			continue
		}
		out = append(out, ch)
	}
	return string(out)
}
