// Package sqlstore persists paylink in SQLite (the embedded default) or
// PostgreSQL (for several instances on one database). The SQL is written
// once for both engines; only DDL, connection set-up and write batching
// differ.
package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/paylink/paylink"
)

// Engine names a database engine.
type Engine string

// Engines.
const (
	SQLite   Engine = "sqlite"
	Postgres Engine = "postgres"
)

// Store is a paylink.Store on SQL. It is safe for concurrent use.
type Store struct {
	engine Engine
	db     *sql.DB // PostgreSQL: everything; SQLite: readers
	reads  querier // db, through a statement cache on SQLite
	writer *writer // SQLite only: the single, batching writer
	// unavailable counts errors classified as an unreachable database.
	unavailable atomic.Int64
	// lastCommit is when a write transaction last committed (Unix ns).
	lastCommit atomic.Int64
	// log hears what opening the database waits for (WithLogger).
	log *slog.Logger
}

// Option adjusts how Open, OpenToServe and OpenExisting open a database.
type Option func(*Store)

// WithLogger has the store log what it waits for while it opens a
// PostgreSQL database: another run of migrations holding their lock,
// named. Without it the store logs nothing.
func WithLogger(l *slog.Logger) Option { return func(s *Store) { s.log = l } }

// Open connects, applies pending migrations and returns the store.
func Open(ctx context.Context, dsn string, opts ...Option) (*Store, error) {
	return open(ctx, dsn, nil, (*Store).migrate, opts...)
}

// OpenToServe is Open as paylink serve does it: on PostgreSQL it refuses
// a database in use that a pending migration would move past instances
// of an older build still serving on it (migrateToServe); paylink
// migrate, run with every instance stopped, applies such a migration.
func OpenToServe(ctx context.Context, dsn string, opts ...Option) (*Store, error) {
	return open(ctx, dsn, nil, (*Store).migrateToServe, opts...)
}

// OpenToMigrate is Open as paylink migrate does it: on PostgreSQL it
// refuses, applying nothing, a database in use that a pending migration
// needing every older instance stopped would change while other paylink
// sessions are connected to it, unless force (migrateStopped).
func OpenToMigrate(ctx context.Context, dsn string, force bool, opts ...Option) (*Store, error) {
	return open(ctx, dsn, nil, func(s *Store, ctx context.Context) error { return s.migrateStopped(ctx, force) }, opts...)
}

// OpenExisting opens a database paylink has already set up, at this
// binary's schema version or newer, and creates or migrates nothing: the
// administrative commands use it, so that a mistyped --db is an error
// rather than a new, empty database that every check then passes. A
// newer schema is logged (NewerSchemaWarning) to WithLogger's logger.
func OpenExisting(ctx context.Context, dsn string, opts ...Option) (*Store, error) {
	d, err := ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	if _, serr := os.Stat(d.Path); d.Engine == SQLite && errors.Is(serr, fs.ErrNotExist) {
		return nil, fmt.Errorf("no database at %s: paylink serve, paylink demo, paylink migrate or paylink merchant create makes one", d.Path)
	}
	return open(ctx, dsn, nil, (*Store).CheckSchema, opts...)
}

// CheckSchema refuses a database without paylink's schema, or with an
// older one than this binary's, and logs NewerSchemaWarning for a newer
// one: OpenExisting's check, and merchant create's after it opened the
// database to serve.
func (s *Store) CheckSchema(ctx context.Context) error {
	have, err := s.AppliedVersion(ctx)
	if err = s.classify(err); errors.Is(err, paylink.ErrUnavailable) {
		return fmt.Errorf("the database cannot be reached: %w", err)
	}
	if err != nil && noSchemaTable(err) {
		return fmt.Errorf("the database has no paylink schema (paylink migrate sets one up): %w", err)
	}
	if err != nil { // a login refused, a permission missing: not an empty database
		return fmt.Errorf("the database's schema version cannot be read: %w", err)
	}
	want := SchemaVersion(s.engine)
	if have < want {
		return fmt.Errorf("the database is at schema version %d and this paylink needs %d: run paylink migrate", have, want)
	}
	if have > want {
		s.log.Warn(NewerSchemaWarning, "database_version", have, "paylink_version", want)
	}
	return nil
}

// NewerSchemaWarning is the warning logged, with database_version and
// paylink_version, when the database's schema is newer than this
// binary's: by a serving instance (its schema-version-check) and by the
// administrative commands (OpenExisting, WithLogger), which go on.
const NewerSchemaWarning = "the database's schema is newer than this paylink's: a later release migrated it; use that release's paylink"

// noSchemaTable reports whether err says the schema's version table does
// not exist (PostgreSQL's undefined_table, SQLite's "no such table").
func noSchemaTable(err error) bool {
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		return pg.Code == "42P01"
	}
	return strings.Contains(err.Error(), "no such table")
}

// open connects to the database of dsn (for PostgreSQL through dial, nil
// for the default: tests count round trips through it) and makes the
// schema ready with prepare: migrate, or CheckSchema.
func open(ctx context.Context, dsn string, dial pgconn.DialFunc, prepare func(*Store, context.Context) error, opts ...Option) (*Store, error) {
	d, err := ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	var s *Store
	if d.Engine == Postgres {
		s, err = openPostgres(d.URL, dial)
	} else {
		s, err = openSQLite(d.Path)
	}
	if err != nil {
		return nil, err
	}
	for _, o := range opts {
		o(s)
	}
	if err := prepare(s, ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func openPostgres(url string, dial pgconn.DialFunc) (*Store, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	if dial != nil {
		cfg.DialFunc = dial
	}
	if _, ok := cfg.RuntimeParams["application_name"]; !ok {
		// pg_stat_activity names paylink's sessions unless the DSN does.
		cfg.RuntimeParams["application_name"] = "paylink"
	}
	db := stdlib.OpenDB(*cfg, stdlib.OptionAfterConnect(noteBackendStart))
	db.SetMaxOpenConns(32)
	db.SetMaxIdleConns(32)
	// A session keeps the settings it started with (an ALTER DATABASE ...
	// SET made since applies to new ones only), so connections are
	// renewed now and then.
	db.SetConnMaxLifetime(30 * time.Minute)
	return &Store{engine: Postgres, db: db, reads: sqlReads{db}, log: slog.New(slog.DiscardHandler)}, nil
}

// sqliteURL builds a modernc DSN: WAL, synchronous=FULL for durable
// commits, a busy timeout, foreign keys on, and temporary storage in
// memory: the group-commit writer gives every caller a savepoint, whose
// statement journal otherwise goes to a temporary file, one pwrite per
// page first touched (a third of the writer's CPU in a profile). It holds
// nothing that must survive a crash; the WAL does. A read transaction
// held long (Snapshot: ledger verify) keeps checkpoints from resetting
// the WAL, which then grows with every write meanwhile; the size limit
// has SQLite truncate the file back to walSizeLimit once a checkpoint
// after it resets the log, instead of keeping its peak size until the
// last connection closes.
func sqliteURL(path string, readOnly bool) string {
	q := url.Values{}
	// busy_timeout first: switching a new file to WAL waits for a
	// process doing the same.
	for _, p := range []string{"busy_timeout(10000)", "journal_mode(WAL)", "synchronous(FULL)", "foreign_keys(1)", "temp_store(MEMORY)",
		fmt.Sprintf("journal_size_limit(%d)", walSizeLimit)} {
		q.Add("_pragma", p)
	}
	if readOnly {
		q.Add("_pragma", "query_only(1)")
	} else {
		// Every transaction of the write pool writes (migrations,
		// checksums): take the write lock at BEGIN, waiting for it up to
		// busy_timeout, where a deferred one that read first fails at its
		// first write with SQLITE_BUSY while another process writes.
		q.Add("_txlock", "immediate")
	}
	return "file:" + uriFilePath(path) + "?" + q.Encode()
}

// uriFilePath is path as a file: URI's path: escaped (uriPath), an
// absolute one after an empty authority ("file:///x": "file://x" would
// name host x, as //x did), and ":memory:" as the file of that name
// rather than SQLite's in-memory database.
func uriFilePath(path string) string {
	p := uriPath.Replace(filepath.ToSlash(path))
	switch {
	case strings.HasPrefix(p, "/"):
		return "//" + p
	case strings.HasPrefix(p, ":"):
		return "./" + p
	}
	return p
}

// uriPath escapes what a SQLite file: URI would read in a path: "?"
// starts its parameters, "#" its fragment, "%" an escape. Unescaped, a
// path holding one opened another file (the part before "?" or "#"),
// without the parameters after it (busy_timeout, WAL) and not created
// private.
var uriPath = strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")

// walSizeLimit is the size SQLite truncates its write-ahead log file to
// when a checkpoint resets it (PRAGMA journal_size_limit).
const walSizeLimit = 64 << 20

func openSQLite(path string) (*Store, error) {
	if err := createPrivate(path); err != nil {
		return nil, err
	}
	wdb, err := sql.Open("sqlite", sqliteURL(path, false))
	if err != nil {
		return nil, fmt.Errorf("open sqlite: %w", err)
	}
	wdb.SetMaxOpenConns(1)
	// Create the file and switch it to WAL before readers open it.
	if err := wdb.Ping(); err != nil {
		wdb.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	rdb, err := sql.Open("sqlite", sqliteURL(path, true))
	if err != nil {
		wdb.Close()
		return nil, fmt.Errorf("open sqlite: %w", err)
	}
	rdb.SetMaxOpenConns(8)
	rdb.SetMaxIdleConns(8)
	return &Store{engine: SQLite, db: rdb, reads: newStmtCache(rdb), writer: newWriter(wdb), log: slog.New(slog.DiscardHandler)}, nil
}

// createPrivate creates a missing database file, empty and with mode
// 0600: it holds customer names, emails and IP addresses. SQLite gives
// the -wal and -shm files it creates beside it the database file's mode,
// so they are 0600 too, without touching the process-wide umask. An
// existing file keeps its mode (docs/operations.md says how to tighten
// it).
func createPrivate(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("create sqlite database %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("create sqlite database %s: %w", path, err)
	}
	return nil
}

// DB is the underlying read pool, for operator tools and tests that
// inspect rows directly; writes must go through Update.
func (s *Store) DB() *sql.DB { return s.db }

// WriterStats reports, for SQLite, how many write transactions the group
// committer has run and how many Update calls they held; their ratio is
// the average batch size. Both are zero on PostgreSQL.
func (s *Store) WriterStats() (batches, updates int64) {
	if s.writer == nil {
		return 0, 0
	}
	return s.writer.batches.Load(), s.writer.updates.Load()
}

// Engine reports the store's engine.
func (s *Store) Engine() Engine { return s.engine }

// View runs fn on a read-only view. An unreachable database is
// reported as paylink.ErrUnavailable, here and in Update and Ping.
func (s *Store) View(ctx context.Context, fn func(paylink.Tx) error) error {
	return s.classify(fn(&tx{ctx: ctx, q: s.reads, postgres: s.engine == Postgres}))
}

// Snapshot runs fn in one read-only transaction on one connection:
// SQLite's deferred transaction keeps the write-ahead log's state of its
// first read, and PostgreSQL's REPEATABLE READ the snapshot of its first
// statement.
func (s *Store) Snapshot(ctx context.Context, fn func(paylink.Tx) error) error {
	opts := &sql.TxOptions{ReadOnly: true}
	if s.engine == Postgres {
		opts.Isolation = sql.LevelRepeatableRead
	}
	stx, err := s.db.BeginTx(ctx, opts)
	if err != nil {
		return s.classify(fmt.Errorf("begin snapshot: %w", err))
	}
	defer stx.Rollback() // read only: nothing to commit
	return s.classify(fn(&tx{ctx: ctx, q: sqlReads{stx}, postgres: s.engine == Postgres}))
}

// Update runs fn in a durable write transaction.
func (s *Store) Update(ctx context.Context, fn func(paylink.Tx) error) error {
	err := s.update(ctx, fn)
	if err == nil {
		s.lastCommit.Store(time.Now().UnixNano())
	}
	return s.classify(err)
}

func (s *Store) update(ctx context.Context, fn func(paylink.Tx) error) error {
	if s.writer != nil {
		return s.writer.do(ctx, fn)
	}
	return s.updatePipelined(ctx, fn)
}

// Ping checks that the database answers a read and commits a write: one
// that answers but cannot commit (a full disk, a read-only file or a
// standby, a write lock held elsewhere) fails every payment, and is not
// ready. A write committed within writeProofAge proves the second without
// a probe of its own, so a loaded instance adds no write; otherwise one
// row is rewritten (readiness_probe). Ping returns when ctx ends even if
// the probe is still waiting for SQLite's writer.
func (s *Store) Ping(ctx context.Context) error {
	var one int
	if err := s.db.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil {
		return s.classify(fmt.Errorf("ping: %w", err))
	}
	if time.Since(time.Unix(0, s.lastCommit.Load())) < writeProofAge {
		return nil
	}
	probed := make(chan error, 1)
	go func() {
		probed <- s.update(ctx, func(ptx paylink.Tx) error {
			return ptx.(*tx).execLater("readiness probe", `INSERT INTO readiness_probe (id, probed_at) VALUES (1, $1)
				ON CONFLICT (id) DO UPDATE SET probed_at = excluded.probed_at`, time.Now().UnixMicro())
		})
	}()
	var err error
	select {
	case err = <-probed:
	case <-ctx.Done():
		err = fmt.Errorf("readiness probe: %w", ctx.Err())
	}
	if err == nil {
		s.lastCommit.Store(time.Now().UnixNano())
	}
	return s.classify(err) // once: a probe's failure is one unavailable error
}

// writeProofAge is how recent a committed write must be for Ping to take
// it as proof that the database commits.
const writeProofAge = 5 * time.Second

// DatabaseClock reads the PostgreSQL server's clock (clock_timestamp(),
// the time the statement runs, not its transaction's start), for an
// instance to measure its own clock against the one every instance
// shares. SQLite has no server: an error there.
func (s *Store) DatabaseClock(ctx context.Context) (time.Time, error) {
	if s.engine != Postgres {
		return time.Time{}, errors.New("database clock: only PostgreSQL has a server clock")
	}
	var t time.Time
	if err := s.db.QueryRowContext(ctx, "SELECT clock_timestamp()").Scan(&t); err != nil {
		return time.Time{}, s.classify(fmt.Errorf("database clock: %w", err))
	}
	return t, nil
}

// Close stops the writer and closes the connections.
func (s *Store) Close() error {
	var err error
	if s.writer != nil {
		err = s.writer.close()
	}
	if c, ok := s.reads.(*stmtCache); ok {
		c.close()
	}
	return errors.Join(err, s.db.Close())
}
