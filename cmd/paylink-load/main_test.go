package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/paylink/paylink/internal/apitest"
	"github.com/paylink/paylink/internal/pgtest"
)

// pg is the package's throwaway PostgreSQL, started on first use.
var pg pgtest.Shared

// TestMain lets the test binary be the echo server too: the tool starts
// its echo server by running its own executable with echo-server.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "echo-server" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
		stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	pg.Start()
	code := m.Run()
	pg.Stop()
	os.Exit(code)
}

// load runs the tool with args plus --json and returns its report.
func load(t *testing.T, args ...string) report {
	t.Helper()
	var out, errOut bytes.Buffer
	if err := run(context.Background(), append(args, "--json"), &out, &errOut); err != nil {
		t.Fatalf("run: %v\nstderr: %s", err, errOut.String())
	}
	var r report
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("report %q: %v", out.String(), err)
	}
	return r
}

// checkScenario wants requests measured without errors on paylink and on
// the echo server, and flows for the flow scenario.
func checkScenario(t *testing.T, s scenarioResult) {
	t.Helper()
	p := s.Paylink
	if p.Errors != 0 || p.Requests == 0 {
		t.Errorf("%s on paylink: got %d requests, %d errors (first: %s), want requests and no errors", s.Name, p.Requests, p.Errors, p.FirstError)
	}
	if s.Name == "flow" && (p.Flows == 0 || p.Requests != 2*int(p.Flows)) {
		t.Errorf("flow: got %d flows and %d requests, want flows of two requests each", p.Flows, p.Requests)
	}
	if p.ServerCPUUS <= 0 || p.CPUError != "" {
		t.Errorf("%s: got server CPU %v µs per %s (%s), want it measured", s.Name, p.ServerCPUUS, p.CPUUnit, p.CPUError)
	}
	if s.Echo == nil || s.Echo.Errors != 0 || s.Echo.Requests == 0 || s.EchoRatio <= 0 {
		t.Errorf("%s: got echo %+v, ratio %v, want echo requests without errors and a ratio", s.Name, s.Echo, s.EchoRatio)
	}
}

func TestEveryScenarioAgainstARealServer(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	// The server runs in this process: its CPU is the test's own.
	r := load(t, "--url", env.Server.URL, "--api-key", m.Creds.APIKey, "--company-token", m.Creds.CompanyToken,
		"--server-pid", strconv.Itoa(os.Getpid()), "--clients", "4", "--warmup", "200ms", "--duration", "400ms",
		"--scenario", "flow,status,page")
	if len(r.Scenarios) != 3 {
		t.Fatalf("got %d scenarios, want flow, status and page", len(r.Scenarios))
	}
	for _, s := range r.Scenarios {
		t.Run(s.Name, func(t *testing.T) { checkScenario(t, s) })
	}
	if len(r.PeakRSSMiB) != 1 || r.PeakRSSMiB[0] <= 0 {
		t.Errorf("got peak RSS %v, want one figure", r.PeakRSSMiB)
	}
}

func TestEchoAlone(t *testing.T) {
	r := load(t, "--scenario", "echo", "--clients", "2", "--warmup", "0s", "--duration", "300ms")
	if len(r.Scenarios) != 1 || r.Scenarios[0].Echo == nil {
		t.Fatalf("got %+v, want the echo scenario", r.Scenarios)
	}
	e := r.Scenarios[0].Echo
	if e.Errors != 0 || e.Flows == 0 || e.Requests != 2*int(e.Flows) || e.CPUError != "" {
		t.Errorf("got %d errors (%s), %d flows, %d requests, CPU error %q; want flows of two requests, no errors",
			e.Errors, e.FirstError, e.Flows, e.Requests, e.CPUError)
	}
}

// TestErrorsAreCounted sends flows paylink refuses: every one is an
// error, none is a flow.
func TestErrorsAreCounted(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	r := load(t, "--url", env.Server.URL, "--api-key", m.Creds.APIKey, "--company-token", "not-the-company-token",
		"--clients", "2", "--warmup", "0s", "--duration", "300ms", "--echo=false")
	p := r.Scenarios[0].Paylink
	if p.Errors == 0 || p.Flows != 0 || !strings.Contains(p.FirstError, "transaction token: HTTP 4") {
		t.Errorf("got %d errors (first: %q) and %d flows, want errors from HTTP 4xx and no flows", p.Errors, p.FirstError, p.Flows)
	}
}

// TestRowScalingCountsStoredTransactions checks the row windows against
// the database: every counted flow is a stored transaction.
func TestRowScalingCountsStoredTransactions(t *testing.T) {
	db := filepath.Join(t.TempDir(), "rows.db")
	env := apitest.Start(t, apitest.Options{DSN: db})
	m := env.Onboard()
	r := load(t, "--url", env.Server.URL, "--api-key", m.Creds.APIKey, "--company-token", m.Creds.CompanyToken,
		"--clients", "4", "--rows", "20,100,150", "--echo=false")
	if r.Rows.Errors != 0 || len(r.Rows.Windows) != 3 {
		t.Fatalf("got %d errors (%s), %d windows, want none and 3", r.Rows.Errors, r.Rows.FirstError, len(r.Rows.Windows))
	}
	from := int64(0)
	for i, to := range []int64{20, 100, 150} {
		w := r.Rows.Windows[i]
		if w.StoredFrom != from || w.StoredTo != to || w.Flows != to-from || w.FlowsPerSecond <= 0 || w.Latency["purchase"].Count != int(to-from) {
			t.Errorf("window %d: got %+v, want %d flows from %d to %d stored", i, w, to-from, from, to)
		}
		from = to
	}
	stored := countTransactions(t, db)
	// Clients that started a flow as the limit was reached finish it
	// uncounted: at most one each.
	if stored < 150 || stored > 150+3 {
		t.Errorf("got %d stored transactions, want 150 to 153", stored)
	}
}

func countTransactions(t *testing.T, path string) int {
	t.Helper()
	var n int
	if err := withDB(t, path).QueryRow("SELECT count(*) FROM transactions WHERE status = 'APPROVED'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// withDB opens the SQLite database at path for the rest of the test.
func withDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// buildPaylink builds the real binary for the tests that start it.
func buildPaylink(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "paylink")
	if out, err := exec.Command("go", "build", "-o", bin, "../paylink").CombinedOutput(); err != nil {
		t.Fatalf("build paylink: %v\n%s", err, out)
	}
	return bin
}

// TestStartsTheServers runs the tool as the documented commands do: it
// starts paylink itself, on SQLite and on PostgreSQL with two instances.
func TestStartsTheServers(t *testing.T) {
	bin := buildPaylink(t)
	for _, tc := range []struct {
		name      string
		db        func(t testing.TB) string
		instances int
	}{
		{"SQLite", func(testing.TB) string { return "" }, 1},
		{"PostgreSQL", pg.Database, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"--serve-bin", bin, "--clients", "4", "--warmup", "200ms", "--duration", "400ms",
				"--instances", strconv.Itoa(tc.instances)}
			if db := tc.db(t); db != "" {
				args = append(args, "--db", db)
			}
			r := load(t, args...)
			if r.Engine != tc.name || r.Instances != tc.instances || len(r.StartupMS) != tc.instances || len(r.PeakRSSMiB) != tc.instances {
				t.Errorf("got engine %q, %d instances, start-up %v, RSS %v; want %s and %d of each",
					r.Engine, r.Instances, r.StartupMS, r.PeakRSSMiB, tc.name, tc.instances)
			}
			for _, ms := range append(r.StartupMS, r.PeakRSSMiB...) {
				if ms <= 0 {
					t.Errorf("got start-up %v and RSS %v, want positive figures", r.StartupMS, r.PeakRSSMiB)
				}
			}
			if len(r.Scenarios) != 1 {
				t.Fatalf("got %d scenarios, want flow", len(r.Scenarios))
			}
			checkScenario(t, r.Scenarios[0])
		})
	}
}

// webhookRun runs a short flow on a new SQLite database with the given
// webhook flags, and returns the database and paylink's figures.
func webhookRun(t *testing.T, flags ...string) (string, measure) {
	t.Helper()
	db := filepath.Join(t.TempDir(), "webhooks.db")
	r := load(t, append([]string{"--serve-bin", buildPaylink(t), "--db", db, "--clients", "4",
		"--warmup", "200ms", "--duration", "400ms", "--echo=false"}, flags...)...)
	if len(r.Scenarios) != 1 {
		t.Fatalf("got %+v, want one scenario", r.Scenarios)
	}
	return db, r.Scenarios[0].Paylink
}

// TestWebhookURLGivesTheMerchantWebhooks: with --webhook-url every
// approved payment of the run writes a webhook delivery for that URL.
func TestWebhookURLGivesTheMerchantWebhooks(t *testing.T) {
	const url = "http://127.0.0.1:9/hook"
	db, p := webhookRun(t, "--webhook-url", url)
	if p.Flows == 0 || p.Errors != 0 {
		t.Fatalf("got %+v, want flows without errors", p)
	}
	approved := countTransactions(t, db)
	var deliveries, others int
	err := withDB(t, db).QueryRow(`SELECT count(*) FILTER (WHERE url = $1), count(*) FILTER (WHERE url <> $1)
		FROM webhook_deliveries`, url).Scan(&deliveries, &others)
	if err != nil {
		t.Fatal(err)
	}
	if approved == 0 || deliveries != approved || others != 0 {
		t.Errorf("got %d deliveries to %s and %d elsewhere for %d approved payments, want one each to it", deliveries, url, others, approved)
	}
}

// TestWebhookReceiverCountsTheWebhooks: with --webhook-receiver the
// merchant's webhooks come to the tool, which reports how many arrived
// in the measured window; every approved payment has its delivery, and
// paylink records the receiver's answers as delivered.
func TestWebhookReceiverCountsTheWebhooks(t *testing.T) {
	db, p := webhookRun(t, "--webhook-receiver")
	if p.Flows == 0 || p.Errors != 0 || p.Webhooks == nil || p.Webhooks.Received == 0 || p.Webhooks.PerSecond <= 0 {
		t.Fatalf("got %d flows, %d errors, webhooks %+v; want flows without errors and webhooks received", p.Flows, p.Errors, p.Webhooks)
	}
	var delivered, approved int
	if err := withDB(t, db).QueryRow(`SELECT count(*) FILTER (WHERE state = 'delivered'), count(*) FROM webhook_deliveries`).
		Scan(&delivered, &approved); err != nil {
		t.Fatal(err)
	}
	if approved != countTransactions(t, db) || delivered == 0 {
		t.Errorf("got %d deliveries, %d delivered, for %d approved payments; want one each, delivered", approved, delivered, countTransactions(t, db))
	}
}

// TestWebhookReceiverThatHangs: with --webhook-receiver-hangs the
// merchant's endpoint takes paylink's attempts and never answers; the
// payments go on without errors, and no delivery is failed for it within
// the run (the spec's one attempt is not spent while the endpoint hangs).
// The first attempts arrive in the warm-up and are held past the window,
// so the window counts none; the tool releases them before it stops
// paylink, which records them delivered instead of waiting out their
// timeout.
func TestWebhookReceiverThatHangs(t *testing.T) {
	db, p := webhookRun(t, "--webhook-receiver-hangs")
	if p.Flows == 0 || p.Errors != 0 || p.Webhooks == nil {
		t.Fatalf("got %d flows, %d errors, webhooks %+v; want flows without errors and the receiver's count", p.Flows, p.Errors, p.Webhooks)
	}
	var failed, delivered, deliveries int
	if err := withDB(t, db).QueryRow(`SELECT count(*) FILTER (WHERE state = 'failed'), count(*) FILTER (WHERE state = 'delivered'), count(*) FROM webhook_deliveries`).
		Scan(&failed, &delivered, &deliveries); err != nil {
		t.Fatal(err)
	}
	if approved := countTransactions(t, db); deliveries != approved || failed != 0 || delivered == 0 {
		t.Errorf("got %d deliveries, %d failed, %d delivered once released, for %d approved payments; want one each, none failed, the held ones delivered",
			deliveries, failed, delivered, approved)
	}
}

func TestFlagsAreChecked(t *testing.T) {
	creds := []string{"--url", "http://127.0.0.1:1", "--api-key", "k", "--company-token", "c"}
	for name, args := range map[string][]string{
		"nothing to load":       {},
		"no credentials":        {"--url", "http://127.0.0.1:1"},
		"zero clients":          append(creds, "--clients", "0"),
		"too long":              append(creds, "--duration", "11m"),
		"unknown scenario":      append(creds, "--scenario", "flow,refund"),
		"echo with others":      append(creds, "--scenario", "echo,flow"),
		"https":                 {"--url", "https://127.0.0.1:1", "--api-key", "k", "--company-token", "c"},
		"a path":                {"--url", "http://127.0.0.1:1/v5", "--api-key", "k", "--company-token", "c"},
		"url and serve-bin":     append(creds, "--serve-bin", "/bin/false"),
		"instances on SQLite":   {"--serve-bin", "/bin/false", "--instances", "3"},
		"instances without bin": append(creds, "--instances", "3"),
		"webhooks without bin":  append(creds, "--webhook-url", "http://127.0.0.1:9/hook"),
		"receiver without bin":  append(creds, "--webhook-receiver"),
		"url and receiver":      {"--serve-bin", "/bin/false", "--webhook-url", "http://127.0.0.1:9/hook", "--webhook-receiver"},
		"receiver both ways":    {"--serve-bin", "/bin/false", "--webhook-receiver", "--webhook-receiver-hangs"},
		"hanging without bin":   append(creds, "--webhook-receiver-hangs"),
		"rows not increasing":   append(creds, "--rows", "100,100"),
		"rows not a number":     append(creds, "--rows", "1k"),
		"rows with status":      append(creds, "--rows", "100", "--scenario", "status"),
		"bad pid":               append(creds, "--server-pid", "x"),
	} {
		t.Run(name, func(t *testing.T) {
			if err := run(context.Background(), args, &bytes.Buffer{}, &bytes.Buffer{}); err == nil {
				t.Errorf("args %v: got no error", args)
			}
		})
	}
}
