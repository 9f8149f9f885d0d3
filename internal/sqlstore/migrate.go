package sqlstore

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

//go:embed migrations
var migrations embed.FS

// migration is one versioned schema change.
type migration struct {
	version int
	name    string
	sql     string
	// stopEveryInstance, when set, says why an instance of an older build
	// must not run on the database once this migration is applied: the
	// file's directive "-- paylink: stop-every-instance: WHY". paylink
	// serve does not apply such a migration to a PostgreSQL database in
	// use (migrateToServe); paylink migrate does.
	stopEveryInstance string
	// directives is the length of the directive lines that open the file.
	directives int
}

// The directives a migration file may open with, one a line. Every
// migration from 0035 on carries one of them (TestNewMigrationsSayWhetherAnOlderBuildMayRun):
// whether an instance of the previous build can keep serving on the
// migrated schema during a rolling upgrade is decided when the migration
// is written, not found out in an upgrade.
const (
	directivePrefix  = "-- paylink: "
	stopDirective    = "stop-every-instance: " // followed by why
	rollingDirective = "rolling-upgrade"       // older instances may keep serving
)

// checksum is the SHA-256 of the migration's file without its directive
// lines, recorded with it in schema_migrations: a directive is not
// schema, and adding one to a migration that databases have run (0018,
// 0024 and 0028 got theirs after) does not make it an edited migration.
func (m migration) checksum() string {
	sum := sha256.Sum256([]byte(m.sql[m.directives:]))
	return hex.EncodeToString(sum[:])
}

// parseDirectives reads the directive lines that open a migration file
// into m. Any opening line that looks like one (a comment naming
// paylink, whatever its spacing or case, after an optional byte-order
// mark) must be one of the two, and a file may not say both: a misspelt
// or contradictory directive is an error, never silently ignored.
func (m *migration) parseDirectives() error {
	rest := strings.TrimPrefix(m.sql, "\ufeff")
	var stop string
	var rolling bool
	for {
		line, after, _ := strings.Cut(rest, "\n")
		match := directiveLine.FindStringSubmatch(strings.TrimRight(line, "\r"))
		if match == nil {
			break
		}
		d := strings.TrimSpace(match[1])
		why, isStop := strings.CutPrefix(d, stopDirective)
		switch {
		case isStop && strings.TrimSpace(why) != "":
			stop = strings.TrimSpace(why)
		case d == rollingDirective:
			rolling = true
		default:
			return fmt.Errorf("migration %s: unknown directive %q (want %q WHY or %q)",
				m.name, line, directivePrefix+stopDirective, directivePrefix+rollingDirective)
		}
		rest = after
	}
	if stop != "" && rolling {
		return fmt.Errorf("migration %s: both %q and %q", m.name, stopDirective, rollingDirective)
	}
	if stop != "" || rolling {
		m.stopEveryInstance, m.directives = stop, len(m.sql)-len(rest)
	}
	return nil
}

// directiveLine matches a line that is meant as a directive.
var directiveLine = regexp.MustCompile(`(?i)^\s*--\s*paylink\s*:(.*)$`)

// checksumsFrom is the migration that adds schema_migrations.checksum.
const checksumsFrom = 31

// loadMigrations reads the engine's embedded migrations, ordered by the
// version number that prefixes each file name (0001_init.sql).
func loadMigrations(engine Engine) ([]migration, error) {
	dir := "migrations/" + string(engine)
	entries, err := fs.ReadDir(migrations, dir)
	if err != nil {
		return nil, fmt.Errorf("read migrations: %w", err)
	}
	var out []migration
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || !strings.HasSuffix(e.Name(), ".sql") {
			return nil, fmt.Errorf("migration %s: name must be NNNN_description.sql", e.Name())
		}
		b, err := fs.ReadFile(migrations, dir+"/"+e.Name())
		if err != nil {
			return nil, fmt.Errorf("read migration %s: %w", e.Name(), err)
		}
		m := migration{version: v, name: e.Name(), sql: string(b)}
		if err := m.parseDirectives(); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	return out, nil
}

// SchemaVersion is the newest embedded migration for an engine.
func SchemaVersion(engine Engine) int {
	ms, err := loadMigrations(engine)
	if err != nil || len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].version
}

// AppliedVersion is the newest migration applied to the database, which
// may be newer than this binary's SchemaVersion after an upgrade by a
// later release.
func (s *Store) AppliedVersion(ctx context.Context) (int, error) {
	var v int
	if err := s.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v); err != nil {
		return 0, fmt.Errorf("schema version: %w", s.classify(err))
	}
	return v, nil
}

// ChangedMigrations lists the migrations the database records under
// another file name than this binary's for the same version (a migration
// renumbered or replaced after a development build applied it), or under
// the same name with other contents (one edited after it ran). Such a
// database's schema may differ from a fresh one's (docs/operations.md,
// "Upgrading"); the runner, which goes by version, does not apply the
// new file.
func (s *Store) ChangedMigrations(ctx context.Context) ([]string, error) {
	ms, err := loadMigrations(s.engine)
	if err != nil {
		return nil, err
	}
	ours := make(map[int]migration, len(ms))
	for _, m := range ms {
		ours[m.version] = m
	}
	rows, err := s.db.QueryContext(ctx, `SELECT version, name, COALESCE(checksum, '') FROM schema_migrations ORDER BY version`)
	if err != nil {
		return nil, fmt.Errorf("applied migrations: %w", err)
	}
	defer rows.Close()
	var changed []string
	for rows.Next() {
		var v int
		var name, sum string
		if err := rows.Scan(&v, &name, &sum); err != nil {
			return nil, fmt.Errorf("applied migrations: %w", err)
		}
		m, ok := ours[v]
		switch {
		case !ok:
		case m.name != name:
			changed = append(changed, fmt.Sprintf("%04d applied as %s, this paylink's is %s", v, name, m.name))
		case sum != "" && sum != m.checksum():
			changed = append(changed, fmt.Sprintf("%04d applied from another %s than this paylink's (SHA-256 %.12s, this paylink's %.12s)",
				v, name, sum, m.checksum()))
		}
	}
	return changed, rows.Err()
}

// migrate applies every pending migration, each in its own transaction. On
// PostgreSQL an advisory lock makes concurrent instances wait for each
// other, so exactly one applies each migration.
func (s *Store) migrate(ctx context.Context) error {
	ms, err := loadMigrations(s.engine)
	if err != nil {
		return err
	}
	if s.writer != nil {
		return s.migrateOn(ctx, s.writer.db, ms)
	}
	return s.whileMigrating(ctx, func(*sql.Conn, string) error { return s.migrateOn(ctx, s.db, ms) })
}

// migrationRunLock is the PostgreSQL advisory lock held, on a connection
// of its own, around a whole run of migrations (serve's check and the
// migrations it applies, or paylink migrate): instances starting together
// on a fresh database take turns, so that one finds the other's work done
// rather than a database half migrated that looks in use. It is not
// migrationsLock, which each migration's transaction takes on another
// connection.
const migrationRunLock = 7275731

// runLockApp is added to the application name of the connection that
// waits for and holds migrationRunLock ("paylink migrations"), so that a
// run waiting its turn, paylink migrate's or a starting serve's, is not
// counted as an instance serving (otherSessions).
const runLockApp = " migrations"

// whileMigrating runs fn holding migrationRunLock on conn, which is
// named as runLockApp says while it waits and holds the lock; fn is given
// the name conn had before, which the store's other sessions have.
func (s *Store) whileMigrating(ctx context.Context, fn func(conn *sql.Conn, app string) error) error {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("migrations lock: %w", err)
	}
	defer conn.Close()
	var app string
	if err := conn.QueryRowContext(ctx, `SELECT current_setting('application_name')`).Scan(&app); err != nil {
		return fmt.Errorf("migrations lock: the connection's name: %w", err)
	}
	if _, err := conn.ExecContext(ctx, `SELECT set_config('application_name', $1, false)`, app+runLockApp); err != nil {
		return fmt.Errorf("migrations lock: name the connection: %w", err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `RESET application_name`)
	if err := s.takeRunLock(ctx, conn); err != nil {
		return fmt.Errorf("migrations lock: %w", err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, migrationRunLock)
	return fn(conn, app)
}

// runLockPoll is how often a start waiting for migrationRunLock tries it
// again, and runLockNotice how often it says, in the log, who holds it.
const (
	runLockPoll   = 250 * time.Millisecond
	runLockNotice = 15 * time.Second
)

// takeRunLock takes migrationRunLock on conn, waiting as long as another
// run holds it (a long migration is no reason to give up) and for as long
// as ctx allows (waitForLock), so that a start held up behind a hung
// paylink migrate says what it waits for instead of hanging silently.
func (s *Store) takeRunLock(ctx context.Context, conn *sql.Conn) error {
	return s.waitForLock(ctx, conn, `SELECT pg_try_advisory_lock($1)`, migrationRunLock,
		"waiting for another run of migrations to finish: it holds the migrations lock")
}

// rowQuerier is a connection or a transaction.
type rowQuerier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// waitForLock takes the advisory lock with try (pg_try_advisory_lock or
// its transaction form) on q, trying every runLockPoll for as long as
// ctx allows, and logs waiting with the lock's holder at once and every
// runLockNotice meanwhile.
func (s *Store) waitForLock(ctx context.Context, q rowQuerier, try string, lock int64, waiting string) error {
	began := time.Now()
	var noticed time.Time
	for {
		var got bool
		if err := q.QueryRowContext(ctx, try, lock).Scan(&got); err != nil {
			return err
		}
		if got {
			if !noticed.IsZero() {
				s.log.Info("took the migrations lock", "waited", time.Since(began).Round(time.Millisecond))
			}
			return nil
		}
		if noticed.IsZero() || time.Since(noticed) >= runLockNotice {
			noticed = time.Now()
			s.log.Warn(waiting, append([]any{"waited", noticed.Sub(began).Round(time.Second)}, lockHolder(ctx, q, lock)...)...)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(runLockPoll):
		}
	}
}

// lockHolder describes the session holding the advisory lock as log
// attributes: its process id, application name, client address, when it
// connected and what it is doing (PostgreSQL shows the last three only to
// the same role or a monitoring one). A bigint advisory lock is listed
// with its low 32 bits as objid and objsubid 1, in its own database:
// another database on the server may hold one of its own.
func lockHolder(ctx context.Context, q rowQuerier, lock int64) []any {
	var pid int
	var app, client, state string
	var since time.Time
	err := q.QueryRowContext(ctx, `SELECT a.pid, COALESCE(a.application_name, ''), COALESCE(host(a.client_addr), 'local'),
		COALESCE(a.backend_start, now()), COALESCE(a.state, '')
		FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
		WHERE l.locktype = 'advisory' AND l.granted AND l.classid = 0 AND l.objid = $1 AND l.objsubid = 1
		AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
		lock).Scan(&pid, &app, &client, &since, &state)
	if err != nil {
		return []any{"holder", "unknown: " + err.Error()}
	}
	return []any{"holder_pid", pid, "holder_application", app, "holder_client", client,
		"holder_connected", since.UTC().Format(time.RFC3339), "holder_state", state}
}

// migrateToServe is migrate as paylink serve does it on start. On
// PostgreSQL, where several instances serve one database, it applies
// nothing when a pending migration needs every older instance stopped
// (stopEveryInstance) and the database is in use (past version 0): the
// instances of the build being replaced may still be serving on it, and
// would misbehave once it is applied. A fresh database gets every
// migration, as no older instance can be serving on it. On SQLite it is
// migrate: one process serves a file, the one starting now
// (docs/operations.md, "Upgrading").
func (s *Store) migrateToServe(ctx context.Context) error {
	if s.engine != Postgres {
		return s.migrate(ctx)
	}
	return s.whileMigrating(ctx, func(conn *sql.Conn, _ string) error { return s.migrateInUse(ctx, conn) })
}

// migrateInUse is migrateToServe's check and migrations on PostgreSQL.
func (s *Store) migrateInUse(ctx context.Context, conn *sql.Conn) error {
	return s.migrateUnless(ctx, conn, func(m *migration, have int) error {
		return fmt.Errorf("%s, and the database is in use, at schema version %d: paylink serve does not apply it. "+
			"Stop every paylink instance, run this build's paylink migrate, then start this build (docs/operations.md, Upgrading)",
			m.needsStopped(), have)
	})
}

// migrateStopped is migrate as paylink migrate does it. On PostgreSQL it
// applies nothing when a pending migration needs every older instance
// stopped (stopEveryInstance), the database is in use (past version 0)
// and other sessions under this one's application name (paylink, unless
// the DSN names another) are connected to it: instances still serving,
// most likely. force applies it all the same. SQLite has no such check:
// another process holding the file cannot be seen cheaply, and serve
// applies every migration there itself (docs/operations.md, Upgrading).
func (s *Store) migrateStopped(ctx context.Context, force bool) error {
	if s.engine != Postgres || force {
		return s.migrate(ctx)
	}
	return s.whileMigrating(ctx, func(conn *sql.Conn, app string) error {
		return s.migrateUnless(ctx, conn, func(m *migration, have int) error {
			others, err := otherSessions(ctx, conn, app)
			if err != nil || others == 0 {
				return err
			}
			return fmt.Errorf("%s, and %d other session(s) named %q or with no application name (as older builds' are) are connected "+
				"to the database (at schema version %d): nothing applied. "+
				"Stop every paylink instance and run paylink migrate again, or give --force if those sessions are not instances "+
				"(docs/operations.md, Upgrading)", m.needsStopped(), others, app, have)
		})
	})
}

// migrateUnless applies every pending migration on PostgreSQL unless one
// of them needs every older instance stopped, on a database in use, and
// refuse, given it and the database's version, returns an error.
func (s *Store) migrateUnless(ctx context.Context, conn *sql.Conn, refuse func(m *migration, have int) error) error {
	ms, err := loadMigrations(s.engine)
	if err != nil {
		return err
	}
	m, have, err := s.pendingStop(ctx, conn, ms)
	if err != nil {
		return err
	}
	if m != nil {
		if err := refuse(m, have); err != nil {
			return err
		}
	}
	return s.migrateOn(ctx, s.db, ms)
}

// needsStopped says that m needs every older instance stopped, and why.
func (m migration) needsStopped() string {
	return fmt.Sprintf("migration %s needs every instance of an older paylink stopped before it is applied (%s)", m.name, m.stopEveryInstance)
}

// otherSessions counts the client sessions connected to conn's database
// under app, the application name conn had before whileMigrating named
// it (runLockApp) and the store's other sessions have, or under no name,
// as every session of a build older than paylink's naming of them has
// (the migrations that need every instance stopped are pending only on
// databases such builds made, so their instances are the ones to find;
// another client without a name is counted too, a refusal --force
// overrides): other runs of migrations, waiting for the lock under the
// longer name, are not counted. A session of another role shows its name
// but not its backend type (NULL) unless this role may read all
// statistics, so an unnamed session of unknown type counts too;
// autovacuum and the server's own processes, which log in as no user, do
// not. A parallel worker has its leader's user and name, so an instance
// running a parallel query counts more than once (only the message's
// number is larger). PostgreSQL keeps a name's first 63 bytes, as app was read, so
// a name of 63 bytes or more cannot take runLockApp: another run waiting
// for the lock is then counted as an instance (a refusal --force
// overrides, never an instance missed). It must run while conn is the
// store's only connection (whileMigrating's, the first the store opens,
// on which pendingStop reads), or the store's own idle connections are
// counted too. A session whose client has just closed it stays listed
// until its backend exits, a few milliseconds later, so a count above
// zero is taken again for up to sessionsGoneWait: instances stopped just
// before are not counted.
func otherSessions(ctx context.Context, conn *sql.Conn, app string) (int, error) {
	deadline := time.Now().Add(sessionsGoneWait)
	for {
		var n int
		err := conn.QueryRowContext(ctx, `SELECT COUNT(*) FROM pg_stat_activity
			WHERE datname = current_database() AND pid <> pg_backend_pid() AND usesysid IS NOT NULL
			AND (application_name = $1 OR (application_name = '' AND (backend_type = 'client backend' OR backend_type IS NULL)))`,
			app).Scan(&n)
		if err != nil {
			return 0, fmt.Errorf("count the database's paylink sessions: %w", err)
		}
		if n == 0 || time.Now().After(deadline) {
			return n, nil
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// sessionsGoneWait is how long otherSessions waits for sessions to go.
const sessionsGoneWait = 2 * time.Second

// pendingStop returns the first of ms that needs every older instance
// stopped and is not applied to a database in use (past version 0), or
// nil, with the database's version. It creates schema_migrations if it
// is missing and reads it on conn alone.
func (s *Store) pendingStop(ctx context.Context, conn *sql.Conn, ms []migration) (*migration, int, error) {
	if err := s.createMigrationsTable(ctx, conn); err != nil {
		return nil, 0, fmt.Errorf("create schema_migrations: %w", err)
	}
	applied := map[int]bool{}
	rows, err := conn.QueryContext(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return nil, 0, fmt.Errorf("applied migrations: %w", err)
	}
	have := 0
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			rows.Close()
			return nil, 0, fmt.Errorf("applied migrations: %w", err)
		}
		applied[v], have = true, max(have, v)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("applied migrations: %w", err)
	}
	for i, m := range ms {
		if have > 0 && !applied[m.version] && m.stopEveryInstance != "" {
			return &ms[i], have, nil
		}
	}
	return nil, have, nil
}

func (s *Store) migrateOn(ctx context.Context, db *sql.DB, ms []migration) error {
	if err := s.createMigrationsTable(ctx, db); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	began := time.Now()
	var applied []string
	for _, m := range ms {
		done, err := s.apply(ctx, db, m)
		if err != nil {
			return fmt.Errorf("migration %s: %w", m.name, err)
		}
		if done {
			applied = append(applied, m.name)
		}
	}
	if len(applied) > 0 { // one line, so that a first start's banner is not lost under forty
		s.log.Info("applied migrations", "count", len(applied), "first", applied[0], "last", applied[len(applied)-1],
			"took", time.Since(began).Round(time.Millisecond).String())
	}
	if len(ms) == 0 || ms[len(ms)-1].version < checksumsFrom {
		return nil // no checksum column yet
	}
	return recordChecksums(ctx, db, ms)
}

// recordChecksums gives each applied migration without a checksum the
// checksum of this binary's file of the same version and name: the ones
// this binary has just applied, and those applied before migration 0031,
// whose files are taken to be this binary's (nothing else is known).
func recordChecksums(ctx context.Context, db *sql.DB, ms []migration) error {
	rows, err := db.QueryContext(ctx, `SELECT version, name FROM schema_migrations WHERE checksum IS NULL`)
	if err != nil {
		return fmt.Errorf("migrations without a checksum: %w", err)
	}
	missing := map[int]string{}
	for rows.Next() {
		var v int
		var name string
		if err := rows.Scan(&v, &name); err != nil {
			rows.Close()
			return fmt.Errorf("migrations without a checksum: %w", err)
		}
		missing[v] = name
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("migrations without a checksum: %w", err)
	}
	if len(missing) == 0 {
		return nil
	}
	t, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("record migration checksums: %w", err)
	}
	defer t.Rollback()
	for _, m := range ms {
		if name, ok := missing[m.version]; !ok || name != m.name {
			continue
		}
		if _, err := t.ExecContext(ctx, `UPDATE schema_migrations SET checksum = $1 WHERE version = $2 AND checksum IS NULL`,
			m.checksum(), m.version); err != nil {
			return fmt.Errorf("record the checksum of migration %s: %w", m.name, err)
		}
	}
	if err := t.Commit(); err != nil {
		return fmt.Errorf("record migration checksums: %w", err)
	}
	return nil
}

// migrationsLock is the PostgreSQL advisory lock that instances starting
// at once take around each migration and the table that records them.
const migrationsLock = 7275730

// createMigrationsTable creates schema_migrations if it is missing, under
// migrationsLock on PostgreSQL: two CREATE TABLE IF NOT EXISTS at once on
// an empty database collide on the table's type, and all but one fail.
func (s *Store) createMigrationsTable(ctx context.Context, db beginner) error {
	t, err := s.beginMigrating(ctx, db)
	if err != nil {
		return err
	}
	defer t.Rollback()
	if _, err := t.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`); err != nil {
		return err
	}
	return t.Commit()
}

// beginner starts transactions: a *sql.DB, or one of its connections.
type beginner interface {
	BeginTx(ctx context.Context, opts *sql.TxOptions) (*sql.Tx, error)
}

// beginMigrating starts a transaction that holds migrationsLock on
// PostgreSQL (SQLite's writes are serialised by the database itself).
func (s *Store) beginMigrating(ctx context.Context, db beginner) (*sql.Tx, error) {
	t, err := db.BeginTx(ctx, nil)
	if err != nil || s.engine != Postgres {
		return t, err
	}
	// A run of migrations stopped mid-way (kill -9) may leave its session
	// running its migration, then rolling it back, long after the run's
	// own lock went with its connection: the wait says so.
	if err := s.waitForLock(ctx, t, `SELECT pg_try_advisory_xact_lock($1)`, migrationsLock,
		"waiting for a migration another session is running (a run of migrations stopped mid-way leaves its session running the migration, then rolling it back)"); err != nil {
		t.Rollback()
		return nil, fmt.Errorf("lock: %w", err)
	}
	return t, nil
}

// apply runs one migration unless it has been applied already, and
// reports whether it did (logged at debug, each; migrateOn logs the run).
func (s *Store) apply(ctx context.Context, db *sql.DB, m migration) (bool, error) {
	began := time.Now()
	t, err := s.beginMigrating(ctx, db)
	if err != nil {
		return false, err
	}
	defer t.Rollback()
	var n int
	if err := t.QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations WHERE version = $1`, m.version).Scan(&n); err != nil {
		return false, err
	}
	if n > 0 {
		return false, nil
	}
	if _, err := t.ExecContext(ctx, m.sql); err != nil {
		return false, err
	}
	if _, err := t.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`,
		m.version, m.name, time.Now().UnixMicro()); err != nil {
		return false, err
	}
	if err := t.Commit(); err != nil {
		return false, err
	}
	s.log.Debug("applied migration", "migration", m.name, "took", time.Since(began).Round(time.Millisecond).String())
	return true, nil
}
