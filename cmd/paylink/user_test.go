package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/paylink/paylink/internal/apitest"
)

// runCLIInput runs the CLI with standard input.
func runCLIInput(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := runIO(context.Background(), args, func(string) string { return "" }, strings.NewReader(stdin), &out, io.Discard)
	return out.String(), err
}

func TestUserCreate(t *testing.T) {
	db := filepath.Join(t.TempDir(), "paylink.db")
	created, err := runCLIInput(t, "", "merchant", "create", "--db", db, "--name", "Acme Pty Ltd", "--trading-name", "Acme", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var c struct{ MID string }
	if err := json.Unmarshal([]byte(created), &c); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		stdin   string
		args    []string
		wantErr string
		wantOut string
	}{
		{"admin", "correct staple battery horse\n", []string{"--merchant", c.MID, "--email", "Owner@Example.com", "--role", "admin", "--password-stdin"},
			"", "owner@example.com, admin of merchant " + c.MID},
		{"viewer, no newline", "another long passphrase", []string{"--merchant", c.MID, "--email", "viewer@example.com", "--role", "viewer", "--password-stdin"},
			"", "viewer@example.com, viewer"},
		{"email taken", "correct staple battery horse\n", []string{"--merchant", c.MID, "--email", "owner@example.com", "--password-stdin"},
			"email_taken", ""},
		{"weak password", "password12345\n", []string{"--merchant", c.MID, "--email", "weak@example.com", "--password-stdin"},
			"weak_password", ""},
		{"no password on stdin", "", []string{"--merchant", c.MID, "--email", "none@example.com", "--password-stdin"},
			"no password", ""},
		{"without --password-stdin", "correct staple battery horse\n", []string{"--merchant", c.MID, "--email", "x@example.com"},
			"--password-stdin", ""},
		{"unknown merchant", "correct staple battery horse\n", []string{"--merchant", "nope", "--email", "y@example.com", "--password-stdin"},
			"no merchant nope", ""},
		{"bad role", "correct staple battery horse\n", []string{"--merchant", c.MID, "--email", "z@example.com", "--role", "owner", "--password-stdin"},
			"role", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"user", "create", "--db", db}, tt.args...)
			out, err := runCLIInput(t, tt.stdin, args...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !strings.Contains(out, tt.wantOut) {
				t.Fatalf("got %q, %v, want output containing %q", out, err, tt.wantOut)
			}
		})
	}
}

func TestDemoUser(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	path := filepath.Join(t.TempDir(), "paylink.db.demo-user")
	var first, second bytes.Buffer
	for _, out := range []*bytes.Buffer{&first, &second} {
		if err := printDemoUser(context.Background(), environment{stdout: out}, env.Service, "http://x", m.ID, path); err != nil {
			t.Fatal(err)
		}
	}
	if first.String() != second.String() {
		t.Errorf("second run prints %q, want the same as the first, %q", second.String(), first.String())
	}
	pw := regexp.MustCompile(`password:\s+(\S+)`).FindStringSubmatch(first.String())
	if pw == nil || !strings.Contains(first.String(), "http://x/dashboard/login") || !strings.Contains(first.String(), demoUserEmail) {
		t.Fatalf("demo output %q lacks the sign-in address, email or password", first.String())
	}
	if _, err := env.Service.SignIn(context.Background(), demoUserEmail, pw[1]); err != nil {
		t.Errorf("sign in with the printed password: %v", err)
	}
}

// TestDemoKeyAfterARoll: a later demo run prints the kept API key while
// it works, and a new working one once the kept key was rolled and its
// overlap has ended.
func TestDemoKeyAfterARoll(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "paylink.db.demo.json")
	first, err := demoCredentials(ctx, env.Service, path)
	if err != nil {
		t.Fatal(err)
	}
	again, err := demoCredentials(ctx, env.Service, path)
	if err != nil || again != first {
		t.Fatalf("second run: got %+v, %v, want the first run's credentials", again, err)
	}
	if _, err := env.Service.RollAPIKey(ctx, first.MID, "", time.Hour); err != nil {
		t.Fatal(err)
	}
	if during, err := demoCredentials(ctx, env.Service, path); err != nil || during.APIKey != first.APIKey {
		t.Errorf("during the overlap: got %+v, %v, want the kept key", during, err)
	}
	env.Clock.Advance(time.Hour)
	after, err := demoCredentials(ctx, env.Service, path)
	if err != nil || after.APIKey == first.APIKey || after.MID != first.MID || after.CompanyToken != first.CompanyToken {
		t.Fatalf("after the overlap: got %+v, %v, want a new API key for the same merchant", after, err)
	}
	if _, err := env.Service.Authenticate(ctx, after.APIKey); err != nil {
		t.Errorf("the new demo key: %v", err)
	}
	if kept, err := demoCredentials(ctx, env.Service, path); err != nil || kept != after {
		t.Errorf("the run after: got %+v, %v, want the new key kept", kept, err)
	}
}
