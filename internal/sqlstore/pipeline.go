package sqlstore

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/paylink/paylink"
)

// pipeline is a PostgreSQL write transaction that spends few network
// round trips: a round trip costs the client two system calls and a
// context switch, most of paylink's CPU per purchase on PostgreSQL
// (docs/performance.md). BEGIN and the writes whose result nobody reads
// (queued with tx.execLater, and tx.insertOnce's inserts, whose only
// answer is whether the key was taken) are held back and sent in one
// pipelined batch together with the next statement that needs an answer,
// or with COMMIT: a purchase with a new card through the in-process
// sandbox is one round trip. Statements still run in the order they were made, so reads
// see every earlier write; a held-back write that fails fails the next
// statement and the commit, and the transaction rolls back.
type pipeline struct {
	conn    *sql.Conn
	pending []queued
	begun   bool  // BEGIN has been sent
	err     error // the first failure; the transaction is lost
	// statements counts the statements run or queued so far.
	statements int64
	// pid is the server process serving the transaction, once known, and
	// started its start time (zero when not known): the two name the
	// process for good, where a pid alone may be given to a new one.
	pid     uint32
	started time.Time
}

// queued is a held-back statement and what to call it in an error.
type queued struct {
	op, query string
	args      []any
	// taken, for an insertOnce, is what a unique violation means.
	taken error
}

// uniqueViolation is PostgreSQL's SQLSTATE for a duplicate key.
const uniqueViolation = "23505"

// failure is the error to report for q's failure err.
func (q queued) failure(err error) error {
	var pg *pgconn.PgError
	if q.taken != nil && errors.As(err, &pg) && pg.Code == uniqueViolation {
		err = q.taken
	}
	return fmt.Errorf("%s: %w", q.op, err)
}

// updatePipelined runs fn in a pipelined write transaction.
func (s *Store) updatePipelined(ctx context.Context, fn func(paylink.Tx) error) error {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer conn.Close() // a connection left inside a transaction is discarded by the pool
	p := &pipeline{conn: conn, pending: []queued{{op: "begin", query: "BEGIN"}}}
	if err := fn(&tx{ctx: ctx, q: p, postgres: true}); err != nil {
		p.rollback(ctx)
		if p.err != nil {
			return p.err // a held-back write failed first; err follows from it
		}
		return err
	}
	err = p.commit(ctx)
	if err == nil || !unavailable(err) || refusedByServer(err) {
		return err
	}
	if p.pid != 0 {
		s.awaitServerProcess(ctx, p.pid, p.started)
	}
	return fmt.Errorf("%w: %w", paylink.ErrCommitUnanswered, err)
}

// refusedByServer reports whether err is the server's own answer that a
// statement failed (severity ERROR: a read-only standby, a full disk, a
// cancelled statement), after which its transaction has rolled back and
// nothing is in doubt. A session ended by the server (FATAL, PANIC) is
// not: one terminated while it waited for a synchronous standby has
// committed locally first.
func refusedByServer(err error) bool {
	var pg *pgconn.PgError
	if !errors.As(err, &pg) {
		return false
	}
	if pg.SeverityUnlocalized != "" {
		return pg.SeverityUnlocalized == "ERROR"
	}
	return pg.Severity == "ERROR"
}

// commitDoubtWait bounds how long a commit whose answer was lost waits
// for the server to finish with its transaction before ending it.
const commitDoubtWait = 5 * time.Second

// awaitServerProcess waits for PostgreSQL's process pid, started at
// started, to end. A connection lost while its COMMIT was on the way
// leaves the transaction's fate to that process: it commits if the COMMIT
// reached it, and rolls back otherwise, then ends. Once it has ended,
// what the caller reads next tells which (the Service reads who spent the
// transaction token). A process still there after commitDoubtWait (its
// COMMIT held up on the way, or unread) is terminated, so that it cannot
// commit later, after the caller has read that nothing happened and told
// its client so: a transaction whose COMMIT it has not begun rolls back,
// and one it is carrying out completes first. Only a process known by
// its start time as well (read when its connection opened,
// noteBackendStart) is terminated, never a new process given the pid. It
// gives up at once if the database cannot be asked. (Behind a connection
// pooler the pid is the pooler's: nothing matches, and the caller reads
// at once.)
func (s *Store) awaitServerProcess(ctx context.Context, pid uint32, started time.Time) {
	if s.serverProcessEnds(ctx, pid, started) || started.IsZero() {
		return
	}
	_, err := s.db.ExecContext(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid = $1 AND backend_start = $2`,
		int64(pid), started)
	if err == nil {
		s.serverProcessEnds(ctx, pid, started)
	}
}

// serverProcessEnds waits up to commitDoubtWait for the server process
// pid (that started at started, when known) to end, and reports whether
// it did (or the database cannot be asked).
func (s *Store) serverProcessEnds(ctx context.Context, pid uint32, started time.Time) bool {
	query, args := `SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1)`, []any{int64(pid)}
	if !started.IsZero() {
		query, args = `SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND backend_start = $2)`, append(args, started)
	}
	for deadline := time.Now().Add(commitDoubtWait); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		var alive bool
		if err := s.db.QueryRowContext(ctx, query, args...).Scan(&alive); err != nil || !alive {
			return true
		}
	}
	return false
}

// backendStartKey is where a connection keeps its server process's start
// time (pgconn's CustomData).
const backendStartKey = "paylink.backend_start"

// noteBackendStart records, when a connection opens, the start time of
// its server process, which with its pid names that process for good
// (awaitServerProcess). Without it (pg_stat_activity not readable), a
// held-up commit is waited for but never terminated.
func noteBackendStart(ctx context.Context, conn *pgx.Conn) error {
	var started time.Time
	if err := conn.QueryRow(ctx, `SELECT backend_start FROM pg_stat_activity WHERE pid = pg_backend_pid()`).Scan(&started); err == nil {
		conn.PgConn().CustomData()[backendStartKey] = started
	}
	return nil
}

// queue holds a write back until the next round trip; q.taken is what a
// unique violation means, if anything.
func (p *pipeline) queue(q queued) {
	p.statements++
	p.pending = append(p.pending, q)
}

// send runs the held-back statements, then last if it is not nil, in one
// round trip, and returns last's command tag.
func (p *pipeline) send(ctx context.Context, last *queued) (pgconn.CommandTag, error) {
	if last != nil {
		p.statements++
	}
	if p.err != nil {
		return pgconn.CommandTag{}, p.err
	}
	batch := p.pending
	if last != nil {
		batch = append(batch, *last)
	}
	p.pending = nil
	if len(batch) == 0 {
		return pgconn.CommandTag{}, nil
	}
	var tag pgconn.CommandTag
	err := p.onPgConn(func(c *pgx.Conn) error {
		var err error
		tag, err = runBatch(ctx, c, batch)
		return err
	})
	if err != nil && !errors.Is(err, errLastFailed) {
		p.err = err // a held-back write failed: nothing more can commit
	}
	p.begun = true
	return tag, err
}

// errLastFailed marks a failure of the batch's last statement, the one
// the caller is waiting for, which the caller reports itself.
var errLastFailed = errors.New("statement failed")

// onPgConn runs fn on the pgx connection under the pipeline's
// database/sql connection.
func (p *pipeline) onPgConn(fn func(*pgx.Conn) error) error {
	return p.conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("pipeline: unexpected driver connection %T", dc)
		}
		if p.pid == 0 {
			p.pid = c.Conn().PgConn().PID()
			p.started, _ = c.Conn().PgConn().CustomData()[backendStartKey].(time.Time)
		}
		return fn(c.Conn())
	})
}

// runBatch sends batch as one pipeline and reads every result.
func runBatch(ctx context.Context, c *pgx.Conn, batch []queued) (pgconn.CommandTag, error) {
	b := &pgx.Batch{}
	for _, q := range batch {
		b.Queue(q.query, q.args...)
	}
	br := c.SendBatch(ctx, b)
	var tag pgconn.CommandTag
	for i, q := range batch {
		var err error
		if tag, err = br.Exec(); err != nil {
			br.Close()
			if i == len(batch)-1 {
				return tag, fmt.Errorf("%w: %w", errLastFailed, err)
			}
			return tag, q.failure(err)
		}
	}
	return tag, br.Close()
}

// ExecContext runs query after the held-back statements, in the same
// round trip.
func (p *pipeline) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	tag, err := p.send(ctx, &queued{query: query, args: args})
	if err != nil {
		return nil, unwrapLast(err)
	}
	return result(tag.RowsAffected()), nil
}

// QueryContext sends the held-back statements, then runs query.
func (p *pipeline) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	p.statements++
	if _, err := p.send(ctx, nil); err != nil {
		return nil, err
	}
	return p.conn.QueryContext(ctx, query, args...)
}

// QueryRowContext runs query in the same round trip as the held-back
// statements (BEGIN at least, when it is the transaction's first). A
// failure of those is reported by the row's Scan.
func (p *pipeline) QueryRowContext(ctx context.Context, query string, args ...any) row {
	p.statements++
	if p.err != nil {
		return failedRow{p.err}
	}
	if len(p.pending) == 0 {
		return p.conn.QueryRowContext(ctx, query, args...)
	}
	batch := append(p.pending, queued{query: query, args: args})
	p.pending, p.begun = nil, true
	var r *bufferedRow
	err := p.onPgConn(func(c *pgx.Conn) error {
		var err error
		r, err = queryBatch(ctx, c, batch)
		return err
	})
	if err != nil {
		p.err = err
		return failedRow{err}
	}
	return r
}

// queryBatch sends batch as one pipeline, its last statement a query, and
// returns the query's first row. A failure of the query itself is the
// row's, not the batch's.
func queryBatch(ctx context.Context, c *pgx.Conn, batch []queued) (*bufferedRow, error) {
	b := &pgx.Batch{}
	for _, q := range batch {
		b.Queue(q.query, q.args...)
	}
	br := c.SendBatch(ctx, b)
	defer br.Close()
	for _, q := range batch[:len(batch)-1] {
		if _, err := br.Exec(); err != nil {
			return nil, q.failure(err)
		}
	}
	rows, err := br.Query()
	if err != nil {
		return &bufferedRow{err: err}, nil
	}
	defer rows.Close()
	r := &bufferedRow{types: c.TypeMap(), err: pgx.ErrNoRows}
	if rows.Next() {
		r.fields, r.err = rows.FieldDescriptions(), nil
		for _, v := range rows.RawValues() {
			r.values = append(r.values, bytes.Clone(v)) // the connection reuses its buffer
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		r.err = err
	}
	return r, nil
}

// bufferedRow is a row read in a pipeline, scanned later with the
// connection's type map, as pgx scans (sql.ErrNoRows when there is none).
type bufferedRow struct {
	types  *pgtype.Map
	fields []pgconn.FieldDescription
	values [][]byte
	err    error
}

func (r *bufferedRow) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	if len(dest) != len(r.values) {
		return fmt.Errorf("scan: %d destinations for %d columns", len(dest), len(r.values))
	}
	for i, d := range dest {
		f := r.fields[i]
		if err := r.types.Scan(f.DataTypeOID, f.Format, r.values[i], d); err != nil {
			return fmt.Errorf("scan column %s: %w", f.Name, err)
		}
	}
	return nil
}

// failedRow is a row whose query was not sent.
type failedRow struct{ err error }

func (r failedRow) Scan(...any) error { return r.err }

// commit sends the held-back writes and COMMIT in one round trip. A
// function that wrote nothing has nothing to commit: not even BEGIN was
// sent.
func (p *pipeline) commit(ctx context.Context) error {
	if !p.begun && len(p.pending) == 1 {
		return nil
	}
	tag, err := p.send(ctx, &queued{query: "COMMIT"})
	if err != nil {
		p.rollback(ctx)
		return fmt.Errorf("commit: %w", unwrapLast(err))
	}
	if tag.String() != "COMMIT" {
		// PostgreSQL answers COMMIT of a failed transaction with ROLLBACK.
		return fmt.Errorf("commit: the transaction was rolled back (%s)", tag)
	}
	return nil
}

// rollback ends a transaction that was begun. Its error is not reported:
// a connection still inside a transaction is discarded when released.
func (p *pipeline) rollback(ctx context.Context) {
	if !p.begun {
		return
	}
	p.conn.ExecContext(ctx, "ROLLBACK")
}

// unwrapLast drops errLastFailed from the caller's own statement error.
func unwrapLast(err error) error {
	if errors.Is(err, errLastFailed) {
		if u, ok := err.(interface{ Unwrap() []error }); ok {
			return u.Unwrap()[1]
		}
	}
	return err
}

// result is a statement's count of affected rows.
type result int64

func (r result) LastInsertId() (int64, error) {
	return 0, errors.New("LastInsertId is not supported on PostgreSQL")
}

func (r result) RowsAffected() (int64, error) { return int64(r), nil }
