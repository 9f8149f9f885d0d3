package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/paylink/paylink"
)

// maxBatch bounds how many Update calls share one SQLite commit.
const maxBatch = 256

// writer is SQLite's single writer with group commit: Update calls that
// arrive while a commit is in progress are run together in the next
// transaction, each inside its own savepoint, and share one fsync. An
// error from one call rolls back only its savepoint.
type writer struct {
	db       *sql.DB
	conn     *sql.Conn  // the one write connection, held between batches
	cache    *stmtCache // prepared statements on conn
	jobs     chan *job
	stop     chan struct{}
	done     chan struct{}
	once     sync.Once
	closeErr error
	batches  atomic.Int64 // write transactions run
	updates  atomic.Int64 // Update calls run in them
}

type job struct {
	ctx context.Context
	fn  func(paylink.Tx) error
	err chan error
}

var errClosed = errors.New("store is closed")

func newWriter(db *sql.DB) *writer {
	w := &writer{db: db, jobs: make(chan *job), stop: make(chan struct{}), done: make(chan struct{})}
	go w.loop()
	return w
}

// do queues fn and waits for its commit. Once queued, fn's outcome is
// always waited for, so the caller never reports failure for work that
// committed.
func (w *writer) do(ctx context.Context, fn func(paylink.Tx) error) error {
	j := &job{ctx: ctx, fn: fn, err: make(chan error, 1)}
	select {
	case w.jobs <- j:
	case <-ctx.Done():
		return ctx.Err()
	case <-w.stop:
		return errClosed
	}
	return <-j.err
}

func (w *writer) loop() {
	defer close(w.done)
	for {
		select {
		case <-w.stop:
			return
		case j := <-w.jobs:
			w.run(w.collect(j))
		}
	}
}

// collect takes every job already waiting, up to maxBatch.
func (w *writer) collect(first *job) []*job {
	batch := []*job{first}
	for len(batch) < maxBatch {
		select {
		case j := <-w.jobs:
			batch = append(batch, j)
		default:
			return batch
		}
	}
	return batch
}

// run executes a batch in one transaction and reports to every job.
func (w *writer) run(batch []*job) {
	w.batches.Add(1)
	w.updates.Add(int64(len(batch)))
	ctx := context.Background()
	errs := make([]error, len(batch))
	err := w.connect(ctx)
	if err == nil {
		if err = w.runOn(ctx, batch, errs); err != nil {
			w.disconnect() // start the next batch on a fresh connection
		}
	}
	for i, j := range batch {
		if err != nil && errs[i] == nil {
			errs[i] = err
		}
		var c callerError
		if errors.As(errs[i], &c) {
			errs[i] = c.err
		}
		j.err <- errs[i]
	}
}

// connect takes the write connection if the writer does not hold it.
func (w *writer) connect(ctx context.Context) error {
	if w.conn != nil {
		return nil
	}
	conn, err := w.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("write connection: %w", err)
	}
	w.conn, w.cache = conn, newStmtCache(conn)
	return nil
}

// disconnect drops the write connection and its statements.
func (w *writer) disconnect() {
	if w.conn == nil {
		return
	}
	w.cache.close()
	w.conn.Close()
	w.conn, w.cache = nil, nil
}

func (w *writer) runOn(ctx context.Context, batch []*job, errs []error) error {
	conn := w.cache
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	for i, j := range batch {
		if err := j.ctx.Err(); err != nil {
			errs[i] = err
			continue
		}
		if errs[i] = runSavepoint(ctx, conn, j); errs[i] != nil && !isCallerError(errs[i]) {
			// The connection may be unusable: give up on the whole batch.
			conn.ExecContext(ctx, "ROLLBACK")
			return errs[i]
		}
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		conn.ExecContext(ctx, "ROLLBACK")
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// callerError marks an error returned by a job's own function, as
// opposed to a failure of the savepoint machinery.
type callerError struct{ err error }

func (e callerError) Error() string { return e.err.Error() }
func (e callerError) Unwrap() error { return e.err }

func isCallerError(err error) bool {
	var c callerError
	return errors.As(err, &c)
}

// runSavepoint runs one job inside a savepoint, rolling back to it on error.
func runSavepoint(ctx context.Context, conn *stmtCache, j *job) error {
	if _, err := conn.ExecContext(ctx, "SAVEPOINT job"); err != nil {
		return fmt.Errorf("savepoint: %w", err)
	}
	if err := safeCall(j.fn, &tx{ctx: ctx, q: conn}); err != nil {
		if _, rerr := conn.ExecContext(ctx, "ROLLBACK TO job"); rerr != nil {
			return fmt.Errorf("rollback to savepoint: %w", rerr)
		}
		if _, rerr := conn.ExecContext(ctx, "RELEASE job"); rerr != nil {
			return fmt.Errorf("release savepoint: %w", rerr)
		}
		return callerError{err}
	}
	if _, err := conn.ExecContext(ctx, "RELEASE job"); err != nil {
		return fmt.Errorf("release savepoint: %w", err)
	}
	return nil
}

// safeCall turns a panic in fn into an error so one bad job cannot take
// the writer down.
func safeCall(fn func(paylink.Tx) error, t *tx) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic in store update: %v", r)
		}
	}()
	return fn(t)
}

// close stops the loop after the batch in progress.
func (w *writer) close() error {
	w.once.Do(func() {
		close(w.stop)
		<-w.done
		w.disconnect()
		w.closeErr = w.db.Close()
	})
	return w.closeErr
}
