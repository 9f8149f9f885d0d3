package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestMerchantCreateWhitelist: the CLI's whitelist goes through the
// Service's one rule: stored normalised with the company webhook's host,
// and a malformed entry is refused.
func TestMerchantCreateWhitelist(t *testing.T) {
	tests := []struct {
		name        string
		domains     []string
		wantDomains []string
		wantErr     string
	}{
		{name: "normalised", domains: []string{"Hooks.Acme.Example.", "[::1]", "127.0.0.1"},
			wantDomains: []string{"hooks.acme.example", "::1", "127.0.0.1"}},
		{name: "other hosts", domains: []string{"dyn.acme.example"}, wantDomains: []string{"hooks.acme.example", "dyn.acme.example"}},
		{name: "with a port", domains: []string{"dyn.acme.example:8443"}, wantErr: "webhook.domains"},
		{name: "with a scheme", domains: []string{"https://dyn.acme.example"}, wantErr: "webhook.domains"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "p.db")
			args := []string{"merchant", "create", "--db", db, "--name", "Acme Pty Ltd", "--trading-name", "Acme",
				"--webhook-url", "https://hooks.acme.example/x", "--json"}
			for _, d := range tt.domains {
				args = append(args, "--webhook-domain", d)
			}
			out, err := runCLI(t, args...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %v, want an error about %s", err, tt.wantErr)
				}
				return
			}
			if got := createdMerchant(t, db, out, err).Settings.Webhook.Domains; !slices.Equal(got, tt.wantDomains) {
				t.Errorf("got whitelist %q, want %q", got, tt.wantDomains)
			}
		})
	}
}
