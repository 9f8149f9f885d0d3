package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
	"github.com/paylink/paylink/internal/pgtest"
)

// runCLIWith runs the CLI with environment variables.
func runCLIWith(t *testing.T, vars map[string]string, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := run(context.Background(), args, func(k string) string { return vars[k] }, &out, io.Discard)
	return out.String(), err
}

// exportFields are the export's published field names.
var exportFields = []string{"action", "actor_id", "actor_kind", "detail", "id", "merchant_id", "object_id",
	"object_type", "outcome", "request_id", "source_ip", "time"}

// exportLines parses JSON lines, checking each has exactly the published
// fields and an RFC 3339 UTC time.
func exportLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		var keys []string
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if !slices.Equal(keys, exportFields) {
			t.Errorf("got fields %v, want %v", keys, exportFields)
		}
		ts, _ := m["time"].(string)
		if tm, err := time.Parse(time.RFC3339, ts); err != nil || !strings.HasSuffix(ts, "Z") || time.Since(tm) > time.Hour {
			t.Errorf("time %q: want a recent RFC 3339 UTC time (%v)", ts, err)
		}
		lines = append(lines, m)
	}
	return lines
}

func TestAuditExport(t *testing.T) {
	var pg pgtest.Shared
	pg.Start()
	defer pg.Stop()
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "paylink.db")
			vars := map[string]string{}
			if engine == "postgres" {
				db = pg.Database(t)
				vars["PAYLINK_MASTER_KEY"] = strings.Repeat("ab", 32)
			}
			testAuditExport(t, db, vars)
		})
	}
}

func testAuditExport(t *testing.T, db string, vars map[string]string) {
	cli := func(args ...string) string {
		t.Helper()
		out, err := runCLIWith(t, vars, append(args, "--db", db)...)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return out
	}
	var c creds
	created := cli("merchant", "create", "--name", "Acme Pty Ltd", "--trading-name", "Acme", "--json")
	if err := json.Unmarshal([]byte(created), &c); err != nil {
		t.Fatal(err)
	}
	var secret struct {
		WebhookSecret string `json:"webhook_secret"`
	}
	json.Unmarshal([]byte(created), &secret)
	cli("merchant", "update", "--merchant", c.MID, "--webhook-retries", "--webhook-domain", "hooks.example.com")
	rotated := cli("merchant", "rotate-webhook-secret", "--merchant", c.MID)
	cli("merchant", "create", "--name", "Other Pty Ltd", "--trading-name", "Other")

	type row struct{ action, actor, actorID, merchant string }
	tests := []struct {
		name  string
		flags []string
		want  []row
	}{
		{"one merchant, last hour", []string{"--since", "1h", "--merchant", c.MID}, []row{
			{"merchant.onboard", "cli", "merchant create", c.MID},
			{"api_key.create", "cli", "merchant create", c.MID},
			{"webhook_secret.create", "cli", "merchant create", c.MID},
			{"merchant.settings.update", "cli", "merchant update", c.MID},
			{"merchant.whitelist.update", "cli", "merchant update", c.MID},
			{"webhook_secret.rotate", "cli", "merchant rotate-webhook-secret", c.MID},
		}},
		{"since a time in the future", []string{"--since", time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}, nil},
		{"unknown merchant", []string{"--since", "30d", "--merchant", "MNOPE"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := cli(append([]string{"audit", "export"}, tt.flags...)...)
			var got []row
			for _, l := range exportLines(t, out) {
				got = append(got, row{l["action"].(string), l["actor_kind"].(string), l["actor_id"].(string), l["merchant_id"].(string)})
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
			for _, s := range []string{c.APIKey, c.CompanyToken, secret.WebhookSecret, strings.Fields(rotated[strings.LastIndex(rotated, "whsec_"):])[0]} {
				if s != "" && strings.Contains(out, s) {
					t.Errorf("the export holds a secret: %q", s)
				}
			}
		})
	}
	t.Run("all merchants", func(t *testing.T) {
		lines := exportLines(t, cli("audit", "export", "--since", "2000-01-01T00:00:00Z"))
		if len(lines) != 9 {
			t.Errorf("got %d lines, want 9 (6 of the first merchant, 3 of the second)", len(lines))
		}
	})
}

func TestAuditExportBadSince(t *testing.T) {
	db := filepath.Join(t.TempDir(), "paylink.db")
	for _, since := range []string{"", "yesterday", "-1h", "0s", "2026-13-01T00:00:00Z", "xd", "2026-11-01"} {
		t.Run(since, func(t *testing.T) {
			out, err := runCLI(t, "audit", "export", "--db", db, "--since", since)
			if err == nil || !strings.Contains(err.Error(), "--since") {
				t.Errorf("got %v, want an error naming --since", err)
			}
			if out != "" {
				t.Errorf("printed %q, want nothing", out)
			}
		})
	}
}

func TestParseSince(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Time
	}{
		{"24h", now.Add(-24 * time.Hour)},
		{"90m", now.Add(-90 * time.Minute)},
		{"30d", now.Add(-30 * 24 * time.Hour)},
		{"2026-11-01T00:00:00Z", time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)},
		{"2026-11-01T10:00:00+10:00", time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseSince(tt.in, now)
			if err != nil || !got.Equal(tt.want) {
				t.Errorf("got %v (%v), want %v", got, err, tt.want)
			}
		})
	}
}

func TestMerchantUpdate(t *testing.T) {
	db := filepath.Join(t.TempDir(), "paylink.db")
	var c creds
	out, err := runCLI(t, "merchant", "create", "--db", db, "--name", "Acme Pty Ltd", "--trading-name", "Acme", "--json",
		"--webhook-url", "https://old.example.com/hook")
	if err != nil || json.Unmarshal([]byte(out), &c) != nil {
		t.Fatalf("merchant create: %v %q", err, out)
	}
	tests := []struct {
		name    string
		flags   []string
		url     string
		domains []string
		retries bool
		wantErr string
	}{
		{name: "new URL joins the whitelist", flags: []string{"--webhook-url", "https://new.example.com/hook"},
			url: "https://new.example.com/hook", domains: []string{"new.example.com", "old.example.com"}},
		{name: "domains replace the whitelist", flags: []string{"--webhook-domain", "a.example.com", "--webhook-retries"},
			url: "https://new.example.com/hook", domains: []string{"new.example.com", "a.example.com"}, retries: true},
		// The last extra host could not be taken off (the merchant
		// settings sweep): --webhook-domain= alone empties the list.
		{name: "an empty domain empties the whitelist", flags: []string{"--webhook-domain=", "--webhook-retries"},
			url: "https://new.example.com/hook", domains: []string{"new.example.com"}, retries: true},
		{name: "no merchant", flags: []string{"--merchant", ""}, wantErr: "--merchant is required"},
		{name: "unknown merchant", flags: []string{"--merchant", "MNOPE", "--webhook-retries"}, wantErr: "no merchant MNOPE"},
		{name: "bad URL", flags: []string{"--webhook-url", "ftp://x"}, wantErr: "must be an absolute http:// or https:// address"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := runCLI(t, append([]string{"merchant", "update", "--db", db, "--merchant", c.MID}, tt.flags...)...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %v, want an error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			w := loadMerchant(t, db, c.MID).Settings.Webhook
			if w.URL != tt.url || !slices.Equal(w.Domains, tt.domains) || w.Retries != tt.retries {
				t.Errorf("got url %q domains %v retries %t, want %q %v %t", w.URL, w.Domains, w.Retries, tt.url, tt.domains, tt.retries)
			}
		})
	}
}

// TestAnAuditExportCutShortEndsWithAWholeLine: an export stopped between
// two pages has written whole lines only: what its buffer held is
// flushed, where the last line was cut where the buffer happened to fill
// (the CLI sweep).
func TestAnAuditExportCutShortEndsWithAWholeLine(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	err := env.Store.Update(context.Background(), func(tx paylink.Tx) error {
		for i := range 120 {
			e := &paylink.AuditEvent{At: env.Clock.Now(), MerchantID: m.ID, ActorKind: paylink.ActorCLI, ActorID: "test",
				Action: paylink.AuditUserRemove, ObjectType: paylink.ObjectUser, ObjectID: fmt.Sprintf("usr_%03d", i),
				Outcome: paylink.OutcomeSuccess, Detail: strings.Repeat("d", 40)}
			if err := tx.AddAuditEvent(e); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out bytes.Buffer // its first write out is a Ctrl-C (cancelOnWrite)
	f := paylink.AuditFilter{Since: env.Clock.Now().Add(-time.Hour), Limit: 100}
	err = exportAudit(ctx, env.Service, f, bufio.NewWriterSize(io.MultiWriter(cancelOnWrite{cancel}, &out), 4096))
	if err == nil {
		t.Fatal("an export cancelled mid-way: got no error")
	}
	text := out.String()
	if !strings.HasSuffix(text, "\n") || strings.Count(text, "\n") < 10 {
		t.Fatalf("an export cut short ends %q after %d lines, want whole lines", text[max(0, len(text)-80):], strings.Count(text, "\n"))
	}
	exportLines(t, text)
}
