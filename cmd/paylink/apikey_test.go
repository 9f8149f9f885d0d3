package main

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/paylink/paylink"
)

// TestRollAPIKeyCommand prints the new key once, makes it the merchant's
// current key, audits the roll as the command, and refuses bad input.
func TestRollAPIKeyCommand(t *testing.T) {
	db := filepath.Join(t.TempDir(), "p.db")
	out, err := runCLI(t, "merchant", "create", "--db", db, "--name", "Acme Pty Ltd", "--trading-name", "Acme", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var creds paylink.Credentials
	if err := json.Unmarshal([]byte(out), &creds); err != nil {
		t.Fatal(err)
	}
	out, err = runCLI(t, "merchant", "roll-api-key", "--db", db, "--merchant", creds.MID, "--overlap", "2h")
	if err != nil {
		t.Fatal(err)
	}
	key := regexp.MustCompile(`api_key: (pl_sk_\w+)`).FindStringSubmatch(out)
	if key == nil || key[1] == creds.APIKey || !strings.Contains(out, "for 2h0m0s") {
		t.Fatalf("got %q, want a new key and the overlap", out)
	}
	if m := loadMerchant(t, db, creds.MID); !paylink.SecretMatches(key[1], m.APIKeyHash) {
		t.Errorf("the printed key is not the merchant's current key")
	}
	out, err = runCLI(t, "audit", "export", "--db", db, "--since", "1h")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, `"action":"api_key.rotate"`) || !strings.Contains(out, `"actor_id":"merchant roll-api-key"`) ||
		strings.Contains(out, key[1]) {
		t.Errorf("audit export: got %q, want an api_key.rotate row by the command without the key", out)
	}
	for _, tt := range []struct {
		name string
		args []string
	}{
		{"no merchant", []string{"--db", db}},
		{"unknown merchant", []string{"--db", db, "--merchant", "MNOPE"}},
		{"negative overlap", []string{"--db", db, "--merchant", creds.MID, "--overlap", "-1h"}},
		{"overlap over a week", []string{"--db", db, "--merchant", creds.MID, "--overlap", "169h"}},
		{"not a duration", []string{"--db", db, "--merchant", creds.MID, "--overlap", "soon"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if out, err := runCLI(t, append([]string{"merchant", "roll-api-key"}, tt.args...)...); err == nil || strings.Contains(out, "pl_sk_") {
				t.Errorf("got %q, %v; want an error and no key", out, err)
			}
		})
	}
	if m := loadMerchant(t, db, creds.MID); !paylink.SecretMatches(key[1], m.APIKeyHash) {
		t.Errorf("a refused roll changed the current key")
	}
}
