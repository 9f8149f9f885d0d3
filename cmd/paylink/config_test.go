package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paylink/paylink"
)

func envWith(vars map[string]string) environment {
	return environment{getenv: func(k string) string { return vars[k] }, stdout: io.Discard, stderr: io.Discard}
}

func TestOpenVaultNeedsMasterKeyWithPostgres(t *testing.T) {
	_, err := openVault(envWith(nil), "postgres://db.example/paylink")
	if err == nil || !strings.Contains(err.Error(), "PAYLINK_MASTER_KEY") {
		t.Fatalf("got %v, want an error naming PAYLINK_MASTER_KEY", err)
	}
	key := strings.Repeat("ab", 32)
	if _, err := openVault(envWith(map[string]string{"PAYLINK_MASTER_KEY": key}), "postgres://db.example/paylink"); err != nil {
		t.Fatalf("with a key: %v", err)
	}
	if _, err := openVault(envWith(map[string]string{"PAYLINK_MASTER_KEY": "short"}), "postgres://db.example/paylink"); err == nil {
		t.Fatalf("with a malformed key: got no error")
	}
}

func TestSQLiteKeyFileIsCreatedPrivateAndReused(t *testing.T) {
	db := filepath.Join(t.TempDir(), "p.db")
	v1, err := openVault(envWith(nil), db)
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
	v2, err := openVault(envWith(nil), db)
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := v1.Seal([]byte("4111111111111111"))
	if err != nil {
		t.Fatal(err)
	}
	if pt, err := v2.Open(sealed); err != nil || string(pt) != "4111111111111111" {
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
