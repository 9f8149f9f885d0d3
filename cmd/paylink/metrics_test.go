package main

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/oasdiff/yaml"
	"github.com/prometheus/client_golang/prometheus"
)

// metricName finds series names in PromQL.
var metricName = regexp.MustCompile(`\b(?:paylink|go_sql)_[a-z_]+\b`)

// histogramSuffix is what PromQL appends to a histogram family's name.
var histogramSuffix = regexp.MustCompile(`_(bucket|sum|count)$`)

// alertExprs returns the expressions of every rule in the alert file.
func alertExprs(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile("../../docs/prometheus-alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	js, err := yaml.YAMLToJSON(raw)
	if err != nil {
		t.Fatalf("docs/prometheus-alerts.yml is not YAML: %v", err)
	}
	var file struct {
		Groups []struct {
			Name  string
			Rules []struct{ Alert, Expr, For string }
		}
	}
	if err := json.Unmarshal(js, &file); err != nil {
		t.Fatalf("docs/prometheus-alerts.yml is not a rules file: %v", err)
	}
	var out []string
	for _, g := range file.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" || strings.TrimSpace(r.Expr) == "" {
				t.Errorf("group %s: got a rule %+v, want an alert name and an expression", g.Name, r)
			}
			out = append(out, r.Expr)
		}
	}
	if len(out) < 5 {
		t.Fatalf("got %d alert rules, want the backlog, error rate, job and database alerts", len(out))
	}
	return out
}

// dashboardExprs returns every target expression of the Grafana dashboard.
func dashboardExprs(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile("../../docs/grafana-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("docs/grafana-dashboard.json: %v", err)
	}
	var out []string
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			out = append(out, tg.Expr)
		}
	}
	return out
}

// operationsSeries returns the series that docs/operations.md's metrics
// table lists, from the first cell of each of its rows.
func operationsSeries(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(raw), "\n## Metrics and alerts\n")
	if !ok {
		t.Fatal(`docs/operations.md has no section "Metrics and alerts"`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var out []string
	for _, line := range strings.Split(section, "\n") {
		if first, ok := strings.CutPrefix(line, "| `"); ok {
			first, _, _ = strings.Cut(first, " |")
			out = append(out, metricName.FindAllString(first, -1)...)
		}
	}
	if len(out) < 20 {
		t.Fatalf("got %d series from operations.md's metrics table (%v), want every row's", len(out), out)
	}
	return out
}

// TestDashboardHasAPanelForEverySeries: operations.md says the sample
// dashboard has a panel for every series of its metrics table; each is
// queried by at least one panel (a histogram by its buckets).
func TestDashboardHasAPanelForEverySeries(t *testing.T) {
	queried := map[string]bool{}
	for _, e := range dashboardExprs(t) {
		for _, n := range metricName.FindAllString(e, -1) {
			queried[histogramSuffix.ReplaceAllString(n, "")] = true
		}
	}
	for _, n := range operationsSeries(t) {
		if !queried[n] {
			t.Errorf("operations.md lists %s, but no panel of docs/grafana-dashboard.json queries it", n)
		}
	}
	// operations.md: "alert on a rise of FAILED" refunds.
	if !slices.ContainsFunc(alertExprs(t), func(e string) bool { return strings.Contains(e, `paylink_refunds_total{status="FAILED"}`) }) {
		t.Error(`no alert rule selects paylink_refunds_total{status="FAILED"}, which operations.md says to alert on`)
	}
}

// reservedLabel finds a label Prometheus sets on every series it scrapes
// (job, instance) in a series line: scraped, such a label is renamed
// exported_job, and every query by it reads the scrape job's instead.
var reservedLabel = regexp.MustCompile(`[{,](job|instance)="`)

// scrapeNames returns the metric family names a running instance
// exports, failing the test on a series with a label Prometheus reserves.
func scrapeNames(t *testing.T, url string) map[string]bool {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	names := map[string]bool{}
	for _, line := range strings.Split(string(body), "\n") {
		if f := strings.Fields(line); len(f) >= 3 && f[0] == "#" && f[1] == "TYPE" {
			names[f[2]] = true
		}
		if !strings.HasPrefix(line, "#") && reservedLabel.MatchString(line) {
			t.Errorf("a series with a label Prometheus reserves (the scrape sets job and instance): %s", line)
		}
	}
	return names
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// TestAlertsAndDashboardNameRealMetrics scrapes a serving instance after
// a payment and checks that every series the alert rules and the
// dashboard query exists.
func TestAlertsAndDashboardNameRealMetrics(t *testing.T) {
	db := filepath.Join(t.TempDir(), "metrics.db")
	c := createMerchant(t, db)
	metricsAddr := freeAddr(t)
	s := startServe(t, db, "--metrics-addr", metricsAddr)
	s.purchase(c, testCard("4111111111111111"), "10.00", nil)
	quick := &http.Client{Timeout: 10 * time.Second}
	for _, p := range []string{"profile", "heap", "goroutine"} {
		if res, err := quick.Get("http://" + metricsAddr + "/debug/pprof/" + p + "?seconds=86400"); err != nil || res.StatusCode != http.StatusBadRequest {
			t.Errorf("a day-long %s profile: got %v, %v; want 400 (over maxProfileSeconds)", p, res, err)
		} else {
			res.Body.Close()
		}
	}
	have := scrapeNames(t, "http://"+metricsAddr+"/metrics")
	exprs := append(alertExprs(t), dashboardExprs(t)...)
	named := map[string]bool{}
	for _, e := range exprs {
		for _, n := range metricName.FindAllString(e, -1) {
			named[n] = true
		}
	}
	var missing []string
	for n := range named {
		family := histogramSuffix.ReplaceAllString(n, "")
		if !have[n] && !have[family] {
			missing = append(missing, n)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("alert rules or dashboard name metrics that /metrics does not export: got missing %v", missing)
	}
	for _, n := range operationsSeries(t) {
		if !have[n] {
			t.Errorf("operations.md's metrics table lists %s, which /metrics does not export", n)
		}
	}
	for _, want := range []string{"paylink_payments_total", "paylink_http_requests_total", "paylink_webhook_outbox_pending",
		"paylink_job_runs_total", "go_sql_in_use_connections", "paylink_database_unavailable_total"} {
		if !named[want] {
			t.Errorf("got no alert or panel on %s, want one", want)
		}
	}
}

func TestVersionCommand(t *testing.T) {
	out, err := exec.Command(binary, "version").Output()
	if err != nil {
		t.Fatalf("paylink version: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "paylink ") || !strings.HasPrefix(lines[1], "commit ") || !strings.HasPrefix(lines[2], "go1.") {
		t.Errorf("got %q, want three lines: paylink VERSION, commit REV, goVERSION", out)
	}
}

// TestMetricsAddressWarnsAndTimesOut: the metrics address warns when it
// listens beyond the loopback interface, and closes a connection that
// never sends its request's header (ReadHeaderTimeout, 5 s), so a slow
// or idle client cannot hold it.
func TestMetricsAddressWarnsAndTimesOut(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		addr string
		warn bool
	}{{"127.0.0.1:0", false}, {"0.0.0.0:0", true}} {
		var out strings.Builder
		stop, err := serveMetrics(c.addr, prometheus.NewRegistry(), slog.New(slog.NewJSONHandler(&out, nil)))
		if err != nil {
			t.Fatal(err)
		}
		stop()
		if got := strings.Contains(out.String(), "not a loopback address"); got != c.warn {
			t.Errorf("%s: warned %v, want %v: %s", c.addr, got, c.warn, out.String())
		}
	}

	var out strings.Builder
	stop, err := serveMetrics("127.0.0.1:0", prometheus.NewRegistry(), slog.New(slog.NewJSONHandler(&out, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	var listening struct{ Addr string }
	if err := json.Unmarshal([]byte(strings.SplitN(out.String(), "\n", 2)[0]), &listening); err != nil || listening.Addr == "" {
		t.Fatalf("no address in the first log line %q: %v", out.String(), err)
	}
	conn, err := net.Dial("tcp", listening.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.Write([]byte("GET /metrics HTTP/1.1\r\n")) // and never the rest
	start := time.Now()
	conn.SetReadDeadline(start.Add(8 * time.Second))
	if n, err := conn.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a request whose header never ends: read %d bytes, %v after %s; want the connection closed", n, err, time.Since(start))
	}
}
