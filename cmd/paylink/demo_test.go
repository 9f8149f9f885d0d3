package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/paylink/paylink/internal/apitest"
)

// demoSignIn runs the demo's sign-in step against env and returns the
// email and password it printed, failing unless they sign in.
func demoSignIn(t *testing.T, env *apitest.Env, mid, path string) (email, password string) {
	t.Helper()
	var out bytes.Buffer
	if err := printDemoUser(context.Background(), environment{stdout: &out}, env.Service, "http://x", mid, path); err != nil {
		t.Fatalf("demo user: %v", err)
	}
	got := regexp.MustCompile(`email:\s+(\S+)\n\s+password:\s+(\S+)`).FindStringSubmatch(out.String())
	if got == nil {
		t.Fatalf("demo output %q lacks the email or password", out.String())
	}
	in, err := env.Service.SignIn(context.Background(), got[1], got[2])
	if err != nil || in.User.MerchantID != mid {
		t.Fatalf("sign in with the printed %s %s: got %v, %v; want the demo merchant %s's admin", got[1], got[2], in, err, mid)
	}
	return got[1], got[2]
}

// TestDemoAfterTheDatabaseWasRemoved: with the demo's files kept beside
// a database that was removed (a new, empty one in its place), the demo
// onboards its merchant again, rewrites the files and prints working
// keys and a working dashboard password.
func TestDemoAfterTheDatabaseWasRemoved(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	keys, user := filepath.Join(dir, "paylink.db.demo.json"), filepath.Join(dir, "paylink.db.demo-user")
	old := apitest.Start(t, apitest.Options{})
	first, err := demoCredentials(ctx, old.Service, keys)
	if err != nil {
		t.Fatal(err)
	}
	demoSignIn(t, old, first.MID, user)
	fresh := apitest.Start(t, apitest.Options{})
	again, err := demoCredentials(ctx, fresh.Service, keys)
	if err != nil || again.MID == first.MID {
		t.Fatalf("on a new database: got %+v, %v; want a new demo merchant", again, err)
	}
	if _, err := fresh.Service.Authenticate(ctx, again.APIKey); err != nil {
		t.Errorf("the new demo key: %v", err)
	}
	if kept, err := demoCredentials(ctx, fresh.Service, keys); err != nil || kept != again {
		t.Errorf("the run after: got %+v, %v; want the new merchant's credentials kept", kept, err)
	}
	demoSignIn(t, fresh, again.MID, user)
}

// TestDemoUserPasswordThatNoLongerSignsIn: the demo prints a password
// that signs in whatever became of the one it kept: a password file
// without its user (a new database), a password changed in the
// dashboard, a password file removed, and an admin email that another
// merchant's user holds.
func TestDemoUserPasswordThatNoLongerSignsIn(t *testing.T) {
	ctx := context.Background()
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	path := filepath.Join(t.TempDir(), "paylink.db.demo-user")
	if err := os.WriteFile(path, []byte("kept-from-an-old-database-1"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, pw := demoSignIn(t, env, m.ID, path); pw != "kept-from-an-old-database-1" {
		t.Errorf("a kept password without its user: printed %q, want the kept one, for its user created", pw)
	}
	in, err := env.Service.SignIn(ctx, demoUserEmail, "kept-from-an-old-database-1")
	if err != nil {
		t.Fatal(err)
	}
	ss, err := env.Service.StaffSession(ctx, in.Token, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Service.ChangePassword(ctx, ss, "kept-from-an-old-database-1", "changed-in-the-dashboard-2"); err != nil {
		t.Fatal(err)
	}
	demoSignIn(t, env, m.ID, path)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	_, pw := demoSignIn(t, env, m.ID, path)
	if kept, err := os.ReadFile(path); err != nil || string(kept) != pw {
		t.Errorf("a removed password file: got %q, %v kept; want the printed %q", kept, err, pw)
	}
	other := env.Onboard()
	if email, _ := demoSignIn(t, env, other.ID, path); email == demoUserEmail {
		t.Errorf("another demo merchant: printed %s, which is the first one's admin", email)
	}
}

// runDemoBinary runs the built paylink demo on db until it has printed
// its payment link, stops it, and returns what it printed.
func runDemoBinary(t *testing.T, db string) string {
	t.Helper()
	cmd := exec.Command(binary, "demo", "--db", db, "--addr", "127.0.0.1:0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	lines := make(chan string)
	go func() {
		defer close(lines)
		for sc := bufio.NewScanner(stdout); sc.Scan(); {
			lines <- sc.Text()
		}
	}()
	var out strings.Builder
	for timeout := time.After(time.Minute); ; {
		select {
		case line, ok := <-lines:
			if !ok {
				_ = cmd.Wait()
				t.Fatalf("demo ended (%v) before printing its link:\n%s\n%s", cmd.ProcessState, out.String(), stderr.String())
			}
			out.WriteString(line + "\n")
			if strings.Contains(line, "virtual terminal:") {
				return out.String()
			}
		case <-timeout:
			t.Fatalf("demo printed no link in a minute:\n%s\n%s", out.String(), stderr.String())
		}
	}
}

// TestDemoBinaryAfterTheDatabaseWasRemoved is the README's first command
// run again after paylink.db was removed and the files beside it were
// not: it prints its credentials, not "demo merchant ...: not_found".
func TestDemoBinaryAfterTheDatabaseWasRemoved(t *testing.T) {
	db := filepath.Join(t.TempDir(), "paylink.db")
	first := runDemoBinary(t, db)
	for _, f := range []string{db, db + "-wal", db + "-shm"} {
		if err := os.Remove(f); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	again := runDemoBinary(t, db)
	mid := regexp.MustCompile(`mid:\s+(\S+)`)
	if a, b := mid.FindStringSubmatch(first), mid.FindStringSubmatch(again); a == nil || b == nil || a[1] == b[1] {
		t.Errorf("got mids %v then %v, want a new demo merchant on the new database", a, b)
	}
	for _, f := range []string{".demo.json", ".demo-user", ".key"} {
		if _, err := os.Stat(db + f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	if !strings.Contains(again, "password:") || !strings.Contains(again, "api_key:") {
		t.Errorf("second run printed %q, want keys and a dashboard password", again)
	}
}
