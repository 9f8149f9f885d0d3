package main

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/webhook"
)

func envWith(vars map[string]string) environment {
	return environment{getenv: func(k string) string { return vars[k] }, stdout: io.Discard, stderr: io.Discard}
}

func TestOpenVaultNeedsMasterKeyWithPostgres(t *testing.T) {
	_, err := openVault(envWith(nil), "postgres://db.example/paylink", nil)
	if err == nil || !strings.Contains(err.Error(), "PAYLINK_MASTER_KEY") {
		t.Fatalf("got %v, want an error naming PAYLINK_MASTER_KEY", err)
	}
	key := strings.Repeat("ab", 32)
	if _, err := openVault(envWith(map[string]string{"PAYLINK_MASTER_KEY": key}), "postgres://db.example/paylink", nil); err != nil {
		t.Fatalf("with a key: %v", err)
	}
	if _, err := openVault(envWith(map[string]string{"PAYLINK_MASTER_KEY": "short"}), "postgres://db.example/paylink", nil); err == nil {
		t.Fatalf("with a malformed key: got no error")
	}
}

func TestSQLiteKeyFileIsCreatedPrivateAndReused(t *testing.T) {
	db := filepath.Join(t.TempDir(), "p.db")
	v1, err := openVault(envWith(nil), db, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(db + ".key")
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("got key file mode %v, want 0600", st.Mode().Perm())
	}
	v2, err := openVault(envWith(nil), db, nil)
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := v1.Seal([]byte("4111111111111111"), "test")
	if err != nil {
		t.Fatal(err)
	}
	if pt, err := v2.Open(sealed, "test"); err != nil || string(pt) != "4111111111111111" {
		t.Errorf("reopened vault: got %q, %v; want the sealed PAN back", pt, err)
	}
	if fp1, _ := v1.Fingerprint("m1", "4111111111111111"); fp1 != first(v2.Fingerprint("m1", "4111111111111111")) {
		t.Errorf("fingerprints differ across restarts")
	}
}

func TestEnvironmentSetsFlags(t *testing.T) {
	f := newFlags("x", envWith(map[string]string{"PAYLINK_DB": "from-env.db", "PAYLINK_TRANSACTION_TOKEN_TTL": "2m"}))
	db := f.str("db", "default.db", "")
	ttl := f.duration("transaction-token-ttl", 0, "")
	if err := f.parse(nil); err != nil {
		t.Fatal(err)
	}
	if *db != "from-env.db" || ttl.String() != "2m0s" {
		t.Errorf("got db %q ttl %v, want the environment's values", *db, *ttl)
	}
	if err := f.parse([]string{"--db", "flag.db"}); err != nil || *db != "flag.db" {
		t.Errorf("flag over env: got %q, %v", *db, err)
	}
}

// TestBooleanVariables: a boolean flag's variable takes what
// strconv.ParseBool does, and any other value stops the command naming
// the variable (it used to mean false).
func TestBooleanVariables(t *testing.T) {
	for value, want := range map[string]bool{"true": true, "1": true, "TRUE": true, "t": true, "false": false, "0": false, "": false} {
		f := newFlags("x", envWith(map[string]string{"PAYLINK_WEBHOOK_RETRIES": value}))
		retries := f.boolean("webhook-retries", "")
		if err := f.parse(nil); err != nil || *retries != want {
			t.Errorf("PAYLINK_WEBHOOK_RETRIES=%q: got %v, %v, want %v", value, *retries, err, want)
		}
	}
	for _, value := range []string{"maybe", "yes", "on"} {
		f := newFlags("x", envWith(map[string]string{"PAYLINK_WEBHOOK_RETRIES": value}))
		f.boolean("webhook-retries", "")
		if err := f.parse(nil); err == nil || !strings.Contains(err.Error(), "PAYLINK_WEBHOOK_RETRIES") {
			t.Errorf("PAYLINK_WEBHOOK_RETRIES=%q: got %v, want an error naming the variable", value, err)
		}
	}
}

// first returns the first of two results.
func first[T, U any](t T, _ U) T { return t }

// TestAuthenticationTimeoutSetting: serve's --authentication-timeout
// defaults to paylink.DefaultAuthenticationTimeout, is read from
// PAYLINK_AUTHENTICATION_TIMEOUT, and the flag wins over the variable.
func TestAuthenticationTimeoutSetting(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want time.Duration
	}{
		{"default", nil, nil, paylink.DefaultAuthenticationTimeout},
		{"environment", map[string]string{"PAYLINK_AUTHENTICATION_TIMEOUT": "20m"}, nil, 20 * time.Minute},
		{"flag over environment", map[string]string{"PAYLINK_AUTHENTICATION_TIMEOUT": "20m"}, []string{"--authentication-timeout", "5m"}, 5 * time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := parseServe(envWith(tt.env), tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.service.AuthenticationTimeout; got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// TestSMTPSettings: invite mail is off by default; --smtp-addr turns it on
// with a sender; the password comes from a file; settings that cannot
// work are refused.
func TestSMTPSettings(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "smtp-password")
	if err := os.WriteFile(secret, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		env     map[string]string
		args    []string
		on, bad bool
	}{
		{"default off", nil, nil, false, false},
		{"on", nil, []string{"--smtp-addr", "127.0.0.1:2525", "--smtp-from", "paylink <no-reply@example.com>"}, true, false},
		{"environment", map[string]string{"PAYLINK_SMTP_ADDR": "mail.example.com:587", "PAYLINK_SMTP_FROM": "no-reply@example.com"}, nil, true, false},
		{"with a user", nil, []string{"--smtp-addr", "mail.example.com:587", "--smtp-from", "no-reply@example.com",
			"--smtp-username", "paylink", "--smtp-password-file", secret}, true, false},
		{"no sender", nil, []string{"--smtp-addr", "mail.example.com:587"}, false, true},
		{"no port", nil, []string{"--smtp-addr", "mail.example.com", "--smtp-from", "no-reply@example.com"}, false, true},
		{"sender without server", nil, []string{"--smtp-from", "no-reply@example.com"}, false, true},
		{"user without password", nil, []string{"--smtp-addr", "mail.example.com:587", "--smtp-from", "no-reply@example.com", "--smtp-username", "paylink"}, false, true},
		{"missing password file", nil, []string{"--smtp-addr", "mail.example.com:587", "--smtp-from", "no-reply@example.com",
			"--smtp-username", "paylink", "--smtp-password-file", secret + ".missing"}, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := parseServe(envWith(tt.env), tt.args)
			if tt.bad {
				if err == nil {
					t.Errorf("got nil error, want the settings refused")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.mail != nil; got != tt.on {
				t.Errorf("mail on: got %v, want %v", got, tt.on)
			}
		})
	}
}

// TestWebhookConcurrencySetting: serve's --webhook-concurrency defaults
// to the dispatcher's, is read from PAYLINK_WEBHOOK_CONCURRENCY, the flag
// wins over the variable, and values that cannot work are refused.
func TestWebhookConcurrencySetting(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want int // 0: refused
	}{
		{"default", nil, nil, webhook.DefaultConcurrency},
		{"environment", map[string]string{"PAYLINK_WEBHOOK_CONCURRENCY": "256"}, nil, 256},
		{"flag over environment", map[string]string{"PAYLINK_WEBHOOK_CONCURRENCY": "256"}, []string{"--webhook-concurrency", "16"}, 16},
		{"zero", nil, []string{"--webhook-concurrency", "0"}, 0},
		{"too many", nil, []string{"--webhook-concurrency", "5000"}, 0},
		{"variable not a number", map[string]string{"PAYLINK_WEBHOOK_CONCURRENCY": "lots"}, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := parseServe(envWith(tt.env), tt.args)
			switch {
			case tt.want == 0 && err == nil:
				t.Errorf("got %d, want the setting refused", cfg.webhookConcurrency)
			case tt.want != 0 && (err != nil || cfg.webhookConcurrency != tt.want):
				t.Errorf("got %d, %v; want %d", cfg.webhookConcurrency, err, tt.want)
			}
		})
	}
}

// TestServeDefaultsAreTheSpecs (spec 2.7, 6.2.2, 8): `paylink serve`
// without settings gives the merchant's endpoint 30 seconds to answer a
// webhook and a transaction token five minutes.
func TestServeDefaultsAreTheSpecs(t *testing.T) {
	cfg, err := parseServe(envWith(nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.webhookTimeout != 30*time.Second || cfg.service.TransactionTokenTTL != 5*time.Minute {
		t.Errorf("got webhook timeout %v, token lifetime %v; want the spec's 30s and 5m", cfg.webhookTimeout, cfg.service.TransactionTokenTTL)
	}
}

// TestRateLimitSettings: the per-merchant rate limit is read from
// PAYLINK_RATE_LIMIT and PAYLINK_RATE_BURST as the README says, and a
// variable that is not a number is refused rather than ignored.
func TestRateLimitSettings(t *testing.T) {
	cfg, err := parseServe(envWith(map[string]string{"PAYLINK_RATE_LIMIT": "2.5", "PAYLINK_RATE_BURST": "7"}), nil)
	if err != nil || cfg.rateLimit != 2.5 || cfg.rateBurst != 7 {
		t.Errorf("got %v/s burst %d, %v; want 2.5/s burst 7", cfg.rateLimit, cfg.rateBurst, err)
	}
	if cfg, err := parseServe(envWith(nil), nil); err != nil || cfg.rateLimit != 100 || cfg.rateBurst != 200 {
		t.Errorf("defaults: got %v/s burst %d, %v; want 100/s burst 200", cfg.rateLimit, cfg.rateBurst, err)
	}
	for _, env := range []map[string]string{{"PAYLINK_RATE_LIMIT": "fast"}, {"PAYLINK_RATE_BURST": "1.5"}, {"PAYLINK_PREAUTH_EXPIRY": "a week"}} {
		if _, err := parseServe(envWith(env), nil); err == nil {
			t.Errorf("%v: got no error, want the variable refused", env)
		}
	}
}

// TestLogLevelSetting: PAYLINK_LOG_LEVEL takes slog's level names, and a
// name it does not know is refused with the names it does (SRE sweep: the
// message was slog's "unknown name" alone).
func TestLogLevelSetting(t *testing.T) {
	if cfg, err := parseServe(envWith(map[string]string{"PAYLINK_LOG_LEVEL": "WARN"}), nil); err != nil || cfg.logLevel != slog.LevelWarn {
		t.Errorf("WARN: got %v, %v; want the warn level", cfg.logLevel, err)
	}
	_, err := parseServe(envWith(map[string]string{"PAYLINK_LOG_LEVEL": "verbose"}), nil)
	if err == nil || !strings.Contains(err.Error(), `PAYLINK_LOG_LEVEL: "verbose" is not a level: give debug, info, warn or error`) {
		t.Errorf("verbose: got %v, want it refused naming the levels", err)
	}
	if cfg, err := parseServe(envWith(nil), []string{"--log-level", "debug"}); err != nil || cfg.logLevel != slog.LevelDebug {
		t.Errorf("--log-level debug: got %v, %v; want the debug level", cfg.logLevel, err)
	}
	_, err = parseServe(envWith(nil), []string{"--log-level", "verbose"})
	if err == nil || !strings.Contains(err.Error(), `"verbose" is not a level: give debug, info, warn or error`) {
		t.Errorf("--log-level verbose: got %v, want it refused naming the levels", err)
	}
}

// TestServeRefusesSettingsThatCannotWork: a duration that is not
// positive, a rate or burst that is negative or not a number, and a base
// URL that page links cannot be made from stop serve before it starts.
func TestServeRefusesSettingsThatCannotWork(t *testing.T) {
	for _, args := range [][]string{
		{"--transaction-token-ttl", "0s"}, {"--preauth-expiry", "-1h"}, {"--direct-debit-clearing", "0s"},
		{"--webhook-timeout", "-5s"}, {"--authentication-timeout", "0s"}, {"--authentication-timeout", "2h"}, {"--dashboard-idle", "-1m"},
		{"--rate-limit", "-5"}, {"--rate-limit", "NaN"}, {"--rate-burst", "0"},
		{"--base-url", "not a url"}, {"--base-url", "ftp://pay.example.com"}, {"--base-url", "https://pay.example.com/?x=1"},
	} {
		if _, err := parseServe(envWith(nil), args); err == nil {
			t.Errorf("%v: got nil error, want it refused", args)
		}
	}
	if _, err := parseServe(envWith(nil), []string{"--base-url", "https://pay.example.com/shop", "--rate-limit", "0"}); err != nil {
		t.Errorf("a base URL with a path and the rate limit off: got %v, want accepted", err)
	}
}
