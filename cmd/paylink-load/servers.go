package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// child is a server process the tool started: a paylink instance or the
// echo server. It is stopped (SIGTERM, then SIGKILL after 10 s) when the
// run ends, and killed by the kernel if the tool dies first.
type child struct {
	cmd     *exec.Cmd
	addr    string
	startup time.Duration // from exec to the first 200 on /readyz
	done    chan struct{}
	err     error
}

func startChild(bin string, args, env []string, stdout, stderr io.Writer) (*child, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env, cmd.Stdout, cmd.Stderr = env, stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	c := &child{cmd: cmd, done: make(chan struct{})}
	go func() {
		c.err = cmd.Wait()
		close(c.done)
	}()
	return c, nil
}

func (c *child) pid() int { return c.cmd.Process.Pid }

func (c *child) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

func (c *child) stop() {
	c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		c.cmd.Process.Kill()
		<-c.done
	}
}

// lockedWriter serialises the writes of several children's outputs.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// freeAddr is a loopback address with a port free right now.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// isPostgres tells a PostgreSQL DSN from a SQLite path.
func isPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// serverEnv is the environment of the paylink processes: the tool's own,
// plus a fresh master key for PostgreSQL when none is set (every instance
// must share it; SQLite keeps its key file beside the database).
func serverEnv(dsn string) ([]string, error) {
	env := os.Environ()
	if isPostgres(dsn) && os.Getenv("PAYLINK_MASTER_KEY") == "" {
		key := make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, err
		}
		env = append(env, "PAYLINK_MASTER_KEY="+hex.EncodeToString(key))
	}
	return env, nil
}

// credentials is what `paylink merchant create --json` prints.
type credentials struct {
	MID          string `json:"mid"`
	APIKey       string `json:"api_key"`
	CompanyToken string `json:"company_token"`
}

// createMerchant onboards the merchant the load is sent for, with
// webhookURL as its webhook URL unless that is empty.
func createMerchant(ctx context.Context, bin, dsn, webhookURL string, env []string) (credentials, error) {
	out, err := paylinkCommand(ctx, bin, env, "merchant", "create", "--db", dsn, "--name", "Load Test Pty Ltd",
		"--trading-name", "Load Test", "--json")
	if err != nil {
		return credentials{}, err
	}
	var c credentials
	if err := json.Unmarshal(out, &c); err != nil || c.MID == "" || c.APIKey == "" || c.CompanyToken == "" {
		return c, fmt.Errorf("merchant create printed %q, want JSON with mid, api_key and company_token", out)
	}
	if webhookURL != "" {
		if _, err := paylinkCommand(ctx, bin, env, "merchant", "update", "--db", dsn, "--merchant", c.MID, "--webhook-url", webhookURL); err != nil {
			return c, err
		}
	}
	return c, nil
}

// paylinkCommand runs bin with args and returns what it printed.
func paylinkCommand(ctx context.Context, bin string, env []string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		name := strings.Join(args[:min(2, len(args))], " ")
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return nil, fmt.Errorf("%s: %w: %s", name, err, ee.Stderr)
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}

// startPaylink runs `paylink serve` on a free port, rate limit off (and
// with --record-processing-first when processingFirst), and waits until
// /readyz answers 200.
func startPaylink(ctx context.Context, bin, dsn string, processingFirst bool, env []string, stderr io.Writer) (*child, error) {
	return startReady(ctx, "paylink", bin, env, stderr, func(addr string) []string {
		args := []string{"serve", "--db", dsn, "--addr", addr, "--rate-limit", "0", "--log-level", "warn"}
		if processingFirst {
			args = append(args, "--record-processing-first")
		}
		return args
	})
}

// startReady starts bin with the arguments args gives for a free
// address, waits until it is ready, and records how long that took; name
// labels its errors.
func startReady(ctx context.Context, name, bin string, env []string, stderr io.Writer, args func(addr string) []string) (*child, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	t0 := time.Now()
	c, err := startChild(bin, args(addr), env, nil, stderr)
	if err != nil {
		return nil, err
	}
	c.addr = addr
	if err := waitReady(ctx, c); err != nil {
		c.stop()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	c.startup = time.Since(t0)
	return c, nil
}

// waitReady asks /readyz every millisecond until it answers 200, so that
// start-up is measured to within about a millisecond. (The echo server
// answers 200 to any path.)
func waitReady(ctx context.Context, c *child) error {
	deadline := time.Now().Add(time.Minute)
	probe := []byte("GET /readyz HTTP/1.1\r\nHost: " + c.addr + "\r\n\r\n")
	for {
		conn := conn{addr: c.addr}
		resp, err := conn.do(probe)
		conn.close()
		switch {
		case err == nil && resp.status == 200:
			return nil
		case c.exited():
			return fmt.Errorf("%s exited before it was ready: %v", c.cmd.Args[1], c.err)
		case ctx.Err() != nil:
			return ctx.Err()
		case time.Now().After(deadline):
			return fmt.Errorf("%s at %s not ready after a minute (last: %v, HTTP %d)", c.cmd.Args[1], c.addr, err, resp.status)
		}
		time.Sleep(time.Millisecond)
	}
}

// startEcho runs this program's echo-server in a process of its own, so
// that its CPU is measured apart from the generator's.
func startEcho(ctx context.Context, stderr io.Writer) (*child, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("echo server: %w", err)
	}
	return startReady(ctx, "echo server", self, os.Environ(), stderr, func(addr string) []string {
		return []string{"echo-server", "--addr", addr}
	})
}
