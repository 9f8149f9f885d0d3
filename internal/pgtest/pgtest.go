// Package pgtest starts a throwaway PostgreSQL server from the local
// binaries for tests, and hands out one fresh database per test.
//
// Without PostgreSQL binaries a test skips with a clear message; with
// PAYLINK_REQUIRE_ALL=1 (set by CI) it fails instead.
package pgtest

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // "pgx" driver
)

// Server is a running throwaway PostgreSQL.
type Server struct {
	dir    string
	port   int
	bin    string
	asUser string // run binaries as this user (PostgreSQL refuses root)
	seq    atomic.Int64
	// durable keeps synchronous_commit on, so that a commit survives an
	// immediate stop (crash drills); off otherwise, for speed.
	durable bool
}

// Required reports whether missing dependencies must fail tests.
func Required() bool { return os.Getenv("PAYLINK_REQUIRE_ALL") == "1" }

// FindBinDir locates initdb and postgres: PATH, then pg_config, then
// /usr/lib/postgresql/*/bin (newest first).
func FindBinDir() (string, error) {
	var candidates []string
	if p, err := exec.LookPath("pg_config"); err == nil {
		if out, err := exec.Command(p, "--bindir").Output(); err == nil {
			candidates = append(candidates, strings.TrimSpace(string(out)))
		}
	}
	globbed, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	for i := len(globbed) - 1; i >= 0; i-- {
		candidates = append(candidates, globbed[i])
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		candidates = append(candidates, filepath.Dir(p))
	}
	for _, dir := range candidates {
		if isExec(filepath.Join(dir, "initdb")) && isExec(filepath.Join(dir, "postgres")) {
			return dir, nil
		}
	}
	return "", fmt.Errorf("PostgreSQL binaries (initdb, postgres) not found on PATH or under /usr/lib/postgresql/*/bin; install the postgresql package")
}

func isExec(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// Start starts a server in a fresh directory. Call Stop when done
// (TestMain). It returns an error rather than skipping; use Skip. Its
// commits are asynchronous (fast, but an immediate stop loses the last
// ones); crash drills use StartDurable.
func Start() (*Server, error) { return start(false) }

// StartDurable is Start with synchronous commits: a commit that returned
// survives Halt, as on a production server. Drills that stop the server
// under load use it.
func StartDurable() (*Server, error) { return start(true) }

func start(durable bool) (*Server, error) {
	bin, err := FindBinDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "paylink-pg-")
	if err != nil {
		return nil, err
	}
	s := &Server{dir: dir, bin: bin, durable: durable}
	if os.Geteuid() == 0 {
		s.asUser = "postgres"
		if _, err := user.Lookup("postgres"); err != nil {
			return nil, fmt.Errorf("running as root needs a postgres user to run PostgreSQL: %w", err)
		}
		if err := chownTree(dir, "postgres"); err != nil {
			return nil, err
		}
	}
	if err := s.initdb(); err != nil {
		s.Stop()
		return nil, err
	}
	if err := s.start(); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

func chownTree(dir, name string) error {
	u, err := user.Lookup(name)
	if err != nil {
		return err
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chmod(dir, 0o755); err != nil {
		return err
	}
	return os.Chown(dir, uid, gid)
}

// command runs a PostgreSQL binary, as the postgres user when root.
func (s *Server) command(name string, args ...string) *exec.Cmd {
	path := filepath.Join(s.bin, name)
	if s.asUser != "" {
		return exec.Command("runuser", append([]string{"-u", s.asUser, "--", path}, args...)...)
	}
	return exec.Command(path, args...)
}

// initdb makes the cluster with an en-US collation (ICU), as many
// production clusters have, not the byte-wise "C": a query that relies on
// text sorting byte by byte (mixed-case ids, "bt_a" before "bt_B") then
// fails here as it would there.
func (s *Server) initdb() error {
	out, err := s.command("initdb", "--no-sync", "-A", "trust", "-U", "postgres", "-E", "UTF8",
		"--locale=C.UTF-8", "--locale-provider=icu", "--icu-locale=en-US", "-D", filepath.Join(s.dir, "data")).CombinedOutput()
	if err != nil {
		return fmt.Errorf("initdb: %v: %s", err, out)
	}
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// start launches the server on a free port. The port is free when
// freePort closes its listener, but another process (the other test
// packages run beside this one) may bind it before postgres does: then a
// new port is tried.
func (s *Server) start() error {
	for attempt := 1; ; attempt++ {
		port, err := freePort()
		if err != nil {
			return err
		}
		s.port = port
		err = s.launch()
		if err == nil || attempt == 5 || !strings.Contains(err.Error(), "Address already in use") {
			return err
		}
	}
}

// launch starts postgres on s.port and waits until it answers.
func (s *Server) launch() error {
	port := s.port
	logf := filepath.Join(s.dir, "log")
	commit := "off"
	if s.durable {
		commit = "on"
	}
	// fsync stays off even when durable: a stopped server loses nothing
	// the operating system already holds; only a machine crash would.
	cmd := s.command("pg_ctl", "-D", filepath.Join(s.dir, "data"), "-l", logf, "-w", "-t", "30", "start",
		"-o", fmt.Sprintf("-p %d -k %s -h 127.0.0.1 -c fsync=off -c synchronous_commit=%s -c full_page_writes=off -c max_connections=200", port, s.dir, commit))
	if out, err := cmd.CombinedOutput(); err != nil {
		logText, _ := os.ReadFile(logf)
		return fmt.Errorf("pg_ctl start: %v: %s %s", err, out, logText)
	}
	return s.waitReady()
}

func (s *Server) waitReady() error {
	db, err := sql.Open("pgx", s.dsn("postgres"))
	if err != nil {
		return err
	}
	defer db.Close()
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := db.Ping()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres did not become ready: %w", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (s *Server) dsn(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.port, db)
}

// NewDatabase creates an empty database and returns its DSN.
func (s *Server) NewDatabase(ctx context.Context) (string, error) {
	name := fmt.Sprintf("paylink_test_%d_%d", os.Getpid(), s.seq.Add(1))
	db, err := sql.Open("pgx", s.dsn("postgres"))
	if err != nil {
		return "", err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		return "", fmt.Errorf("create database: %w", err)
	}
	return s.dsn(name), nil
}

// Halt stops the server at once, as a crash or a fail-over would
// (immediate mode: clients are cut off, no checkpoint), keeping its data
// for Resume. Outage drills use it on a server of their own.
func (s *Server) Halt() error {
	out, err := s.command("pg_ctl", "-D", filepath.Join(s.dir, "data"), "-m", "immediate", "-w", "stop").CombinedOutput()
	if err != nil {
		return fmt.Errorf("pg_ctl stop: %v: %s", err, out)
	}
	return nil
}

// Resume starts a halted server again on the same port, so that clients
// holding its address reconnect by themselves; it returns once the
// server answers (after crash recovery).
func (s *Server) Resume() error { return s.launch() }

// Stop stops the server and removes its directory.
func (s *Server) Stop() {
	if s.port != 0 {
		s.command("pg_ctl", "-D", filepath.Join(s.dir, "data"), "-m", "immediate", "-w", "stop").Run()
	}
	os.RemoveAll(s.dir)
}

// Skip skips (or, when PAYLINK_REQUIRE_ALL=1, fails) a test whose
// PostgreSQL server could not start.
func Skip(t testing.TB, err error) {
	t.Helper()
	if Required() {
		t.Fatalf("PostgreSQL is required (PAYLINK_REQUIRE_ALL=1) but unavailable: %v", err)
	}
	t.Skipf("PostgreSQL unavailable, skipping: %v", err)
}

// DurableDatabase starts a server of the test's own with synchronous
// commits (StartDurable: it can be halted and resumed), and returns it and
// a fresh database's DSN; the server stops with the test.
func DurableDatabase(t testing.TB) (*Server, string) {
	t.Helper()
	srv, err := StartDurable()
	if err != nil {
		Skip(t, err)
	}
	t.Cleanup(srv.Stop)
	dsn, err := srv.NewDatabase(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return srv, dsn
}

// Shared is a test package's one throwaway server: Start it in TestMain,
// Stop it after m.Run, and take a fresh database per test with Database.
type Shared struct {
	srv *Server
	err error
}

// Start starts the server, remembering why when it cannot.
func (s *Shared) Start() { s.srv, s.err = Start() }

// Stop stops the server if it started.
func (s *Shared) Stop() {
	if s.srv != nil {
		s.srv.Stop()
	}
}

// Log returns what the server has logged so far (a test that turns on
// log_statement reads the statements and their parameters in it).
func (s *Shared) Log(t testing.TB) string {
	t.Helper()
	if s.srv == nil {
		Skip(t, s.err)
	}
	b, err := os.ReadFile(filepath.Join(s.srv.dir, "log"))
	if err != nil {
		t.Fatalf("read the PostgreSQL log: %v", err)
	}
	return string(b)
}

// Database returns the DSN of a new empty database. Without a server the
// test skips, or fails when PAYLINK_REQUIRE_ALL=1.
func (s *Shared) Database(t testing.TB) string {
	t.Helper()
	if s.srv == nil {
		Skip(t, s.err)
	}
	dsn, err := s.srv.NewDatabase(context.Background())
	if err != nil {
		t.Fatalf("new PostgreSQL database: %v", err)
	}
	return dsn
}
