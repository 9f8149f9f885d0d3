package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runBinary runs the built paylink with args and returns its standard
// output, standard error and exit status.
func runBinary(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := exec.Command(binary, args...)
	cmd.Dir = t.TempDir() // a command that falls through to its default database leaves it here
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatalf("paylink %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), errOut.String(), code
}

// groups are the commands that take a subcommand, with their
// subcommands.
var groups = map[string][]string{
	"merchant": {"create", "list", "update", "rotate-webhook-secret", "roll-api-key"},
	"webhooks": {"list", "resend"},
	"ledger":   {"verify"},
	"report":   {"settlement"},
	"acquirer": {"settlement-file"},
	"keys":     {"rotate"},
	"audit":    {"export"},
	"user":     {"create"},
}

// checkSubcommandList fails unless out lists every subcommand of group,
// one a line with what it does.
func checkSubcommandList(t *testing.T, group, out string) {
	t.Helper()
	if !strings.Contains(out, "usage: paylink "+group+" <subcommand>") {
		t.Errorf("got %q, want the usage of %s", out, group)
	}
	for _, sub := range groups[group] {
		found := false
		for _, line := range strings.Split(out, "\n") {
			name, about, _ := strings.Cut(strings.TrimSpace(line), " ")
			found = found || (name == sub && strings.TrimSpace(about) != "")
		}
		if !found {
			t.Errorf("got %q, want a line naming %s and what it does", out, sub)
		}
	}
}

// TestCommandHelpListsSubcommands: "paylink <command> -h", as the main
// usage tells, prints the command's subcommands and exits 0 (it exited 1
// with unknown subcommand "-h" or want a subcommand); without a
// subcommand the same list goes to standard error, with exit status 1.
func TestCommandHelpListsSubcommands(t *testing.T) {
	for group := range groups {
		for _, help := range []string{"-h", "--help", "help"} {
			t.Run(group+" "+help, func(t *testing.T) {
				stdout, stderr, code := runBinary(t, group, help)
				if code != 0 || stderr != "" {
					t.Fatalf("got exit %d, stderr %q; want 0 and nothing on stderr", code, stderr)
				}
				checkSubcommandList(t, group, stdout)
			})
		}
		t.Run(group+" alone", func(t *testing.T) {
			stdout, stderr, code := runBinary(t, group)
			if code != 1 || stdout != "" {
				t.Fatalf("got exit %d, stdout %q; want 1 and nothing on stdout", code, stdout)
			}
			checkSubcommandList(t, group, stderr)
			if !strings.Contains(stderr, "paylink: "+group+": want a subcommand") {
				t.Errorf("got %q, want the error after the list", stderr)
			}
		})
	}
}

// TestFlagErrorIsPrintedOnce: a flag the command does not define prints
// the command's flags once and the error once, on standard error, and
// exits 1 like every error (the flag package's line came before
// paylink's, and the flags were listed to stderr by the flag package).
func TestFlagErrorIsPrintedOnce(t *testing.T) {
	for _, args := range [][]string{{"merchant", "create", "--bogus"}, {"webhooks", "list", "-bogus"}, {"version", "--bogus"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			stdout, stderr, code := runBinary(t, args...)
			if code != 1 || stdout != "" {
				t.Fatalf("got exit %d, stdout %q; want 1 and nothing on stdout", code, stdout)
			}
			if n := strings.Count(stderr, "flag provided but not defined: -bogus"); n != 1 {
				t.Errorf("got the error %d times in %q, want once", n, stderr)
			}
			want := "paylink: " + args[0] + " " + args[1] + ": flag provided but not defined: -bogus\n"
			if args[0] == "version" {
				want = "paylink: version: flag provided but not defined: -bogus\n"
			}
			if !strings.HasSuffix(stderr, want) {
				t.Errorf("got %q, want it to end with %q", stderr, want)
			}
			if n := strings.Count(stderr, "paylink "+strings.Join(args[:len(args)-1], " ")); n != 1 {
				t.Errorf("got the command's flags %d times in %q, want once", n, stderr)
			}
		})
	}
}

// TestCommandFlagsHelpGoesToStdout: -h on a command with flags prints
// them on standard output and exits 0, as the subcommand lists do.
func TestCommandFlagsHelpGoesToStdout(t *testing.T) {
	stdout, stderr, code := runBinary(t, "merchant", "create", "-h")
	if code != 0 || stderr != "" {
		t.Fatalf("got exit %d, stderr %q; want 0 and nothing on stderr", code, stderr)
	}
	if !strings.Contains(stdout, "-trading-name") {
		t.Errorf("got %q, want merchant create's flags", stdout)
	}
}

// leafCommands are every command that parses flags.
var leafCommands = [][]string{{"serve"}, {"demo"}, {"migrate"}, {"merchant", "create"}, {"merchant", "list"},
	{"merchant", "update"}, {"merchant", "rotate-webhook-secret"}, {"merchant", "roll-api-key"}, {"webhooks", "list"},
	{"webhooks", "resend"}, {"ledger", "verify"}, {"settle"}, {"report", "settlement"}, {"acquirer", "settlement-file"},
	{"reconcile"}, {"keys", "rotate"}, {"audit", "export"}, {"review"}, {"version"}, {"user", "create"}}

// TestFlagDefaultsAreShownOnce: no flag's help says its default twice
// (merchant create said "(default 2.9) (default 2.9)": the help text and
// the flag package both gave it).
func TestFlagDefaultsAreShownOnce(t *testing.T) {
	for _, cmd := range leafCommands {
		t.Run(strings.Join(cmd, " "), func(t *testing.T) {
			var out bytes.Buffer
			err := run(context.Background(), append(cmd, "-h"), func(string) string { return "" }, &out, &out)
			if err != nil {
				t.Fatalf("-h: %v", err)
			}
			for _, line := range strings.Split(out.String(), "\n") {
				if strings.Count(line, "(default") > 1 {
					t.Errorf("got %q, want each default once", line)
				}
			}
		})
	}
}

// TestUnexpectedArgumentHintFitsTheCommand: the hint after an argument a
// command does not take names --db only where the command has it
// (version said "flags take a value: --db PATH").
func TestUnexpectedArgumentHintFitsTheCommand(t *testing.T) {
	db := filepath.Join(t.TempDir(), "p.db")
	tests := []struct {
		args    []string
		want    string
		notWant string
	}{
		{[]string{"version", "extra"}, `version: unexpected argument "extra" (version takes no arguments or flags)`, "--db"},
		{[]string{"ledger", "verify", db}, "(flags take a value: --db PATH)", ""},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args[:len(tt.args)-1], " "), func(t *testing.T) {
			_, err := runCLI(t, tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error with %q", err, tt.want)
			}
			if tt.notWant != "" && strings.Contains(err.Error(), tt.notWant) {
				t.Errorf("got %v, want no %q in it", err, tt.notWant)
			}
		})
	}
}

// TestMerchantCreateNamesEveryMissingField: two required flags missing
// are both named ("name: is required (and 1 more)" named one), with the
// webhook's problem beside them, and refused input creates nothing: no
// database, no key file beside it.
func TestMerchantCreateNamesEveryMissingField(t *testing.T) {
	dir := t.TempDir()
	_, err := runCLI(t, "merchant", "create", "--db", filepath.Join(dir, "p.db"), "--webhook-url", "ftp://hooks.example")
	for _, want := range []string{"name: is required", "trading_name: is required", "webhook.url:"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want an error with %q", err, want)
		}
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("refused input left %d files in the database's directory (%s first)", len(left), left[0].Name())
	}
}

// TestServeHelpSaysTheMetricsAddressServesTheProfiler: --metrics-addr
// also serves the Go profiler, so its help says so and that the address
// must stay private (it said only "serve Prometheus metrics").
func TestServeHelpSaysTheMetricsAddressServesTheProfiler(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"serve", "-h"}, func(string) string { return "" }, &out, &out); err != nil {
		t.Fatalf("serve -h: %v", err)
	}
	_, entry, ok := strings.Cut(out.String(), "-metrics-addr")
	if !ok {
		t.Fatalf("got %q, want --metrics-addr in serve's help", out.String())
	}
	if next := strings.Index(entry, "\n  -"); next >= 0 {
		entry = entry[:next]
	}
	for _, want := range []string{"/metrics", "/debug/pprof/", "private"} {
		if !strings.Contains(entry, want) {
			t.Errorf("--metrics-addr's help %q does not say %q", entry, want)
		}
	}
}

// TestHelpHidesADatabasePassword: a flag's default comes from its
// PAYLINK_* variable, and -h prints it: PAYLINK_DB's password (in a URL or
// in key=value form) is hidden, the rest shown (key rotation sweep: the
// password was printed; the CLI sweep: a URL's ?password= and a quoted
// one's tail were).
func TestHelpHidesADatabasePassword(t *testing.T) {
	for _, dsn := range []string{"postgres://paylink:SuperSecretPw@db.example:5432/paylink", "host=db.example password=SuperSecretPw user=paylink",
		"postgres://db.example/paylink?sslmode=require&password=SuperSecretPw", "host=db.example password='x SuperSecretPw'"} {
		var out bytes.Buffer
		env := func(k string) string {
			if k == "PAYLINK_DB" {
				return dsn
			}
			return ""
		}
		if err := run(context.Background(), []string{"migrate", "-h"}, env, &out, &out); err != nil {
			t.Fatalf("migrate -h: %v", err)
		}
		if strings.Contains(out.String(), "SuperSecretPw") || !strings.Contains(out.String(), "db.example") {
			t.Errorf("help with PAYLINK_DB=%s:\n%s\nwant the database shown, its password not", strings.ReplaceAll(dsn, "SuperSecretPw", "…"), out.String())
		}
	}
}
