// Command paylink-load measures paylink over HTTP: complete card flows
// (a transaction token, then a surcharged card purchase), status
// look-ups and hosted page reads, from many keep-alive clients on raw
// connections, and in the same run the same requests against a trivial
// echo server, with the servers' CPU per flow and peak RSS from /proc.
// It can start the servers itself (start-up to ready measured), on SQLite
// or on PostgreSQL with several instances, and follow throughput as the
// stored transactions grow, and give the merchant a webhook URL or
// receive its webhooks itself, counting them.
// docs/performance.md has one command per figure.
//
//	paylink-load --serve-bin /tmp/paylink --scenario flow,status,page
//	paylink-load --url http://127.0.0.1:8080 --api-key pl_sk_... --company-token ... --server-pid 1234
//
// Send load only to a paylink you run yourself on this machine.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "paylink-load:", err)
		os.Exit(1)
	}
}

// config is the load to generate and where to send it.
type config struct {
	addrs                []string // host:port of running paylink instances
	apiKey, companyToken string
	serverPIDs           []int
	dbPID                int
	serveBin, db         string
	instances            int
	scenarios            []string
	clients              int
	duration, warmup     time.Duration
	echo, json           bool
	processingFirst      bool    // serve with --record-processing-first
	webhookURL           string  // the merchant's webhook URL, if any
	webhookReceiver      bool    // receive the merchant's webhooks in the tool and count them
	webhookHangs         bool    // receive them and never answer, as an endpoint that hangs
	rows                 []int64 // row scaling: stored transactions at which to report
}

func parse(args []string, stderr io.Writer) (config, error) {
	c := config{}
	fs := flag.NewFlagSet("paylink-load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	urls := fs.String("url", "", "base URL of a running paylink (comma-separated for several instances); or use --serve-bin")
	fs.StringVar(&c.apiKey, "api-key", "", "merchant API key (with --url)")
	fs.StringVar(&c.companyToken, "company-token", "", "merchant company token (with --url)")
	pids := fs.String("server-pid", "", "process id of the running paylink (comma-separated), for its CPU and RSS")
	fs.IntVar(&c.dbPID, "db-pid", 0, "PostgreSQL's main process id (postmaster.pid's first line), for the database's CPU with its backends'")
	fs.StringVar(&c.serveBin, "serve-bin", "", "start this paylink binary, with a fresh merchant, instead of using --url")
	fs.StringVar(&c.db, "db", "", "with --serve-bin: SQLite path or postgres:// DSN (default: a new SQLite database in a temporary directory)")
	fs.IntVar(&c.instances, "instances", 1, "with --serve-bin and PostgreSQL: paylink instances on the one database, clients spread over them")
	scenarios := fs.String("scenario", "flow", "comma-separated: flow, status, page; or echo alone (the echo server only)")
	fs.IntVar(&c.clients, "clients", 64, "concurrent clients, one keep-alive connection each")
	fs.DurationVar(&c.duration, "duration", 10*time.Second, "measured time per scenario (at most 10m)")
	fs.DurationVar(&c.warmup, "warmup", 2*time.Second, "unmeasured time before each measurement (status: the purchases it looks up are made then)")
	fs.BoolVar(&c.echo, "echo", true, "also send each scenario's requests to a trivial echo server, and compare")
	rows := fs.String("rows", "", "row scaling: increasing stored-transaction counts, comma-separated; run flows (no warm-up, no time limit) until the last, reporting at each")
	fs.BoolVar(&c.processingFirst, "record-processing-first", false, "with --serve-bin: start paylink with --record-processing-first (two commits per purchase, as for a remote acquirer)")
	fs.StringVar(&c.webhookURL, "webhook-url", "", "with --serve-bin: give the merchant this webhook URL, so that every payment also writes a webhook delivery that paylink then sends")
	fs.BoolVar(&c.webhookReceiver, "webhook-receiver", false, "with --serve-bin: receive the merchant's webhooks in this tool (answering 200) and report how many a second arrive")
	fs.BoolVar(&c.webhookHangs, "webhook-receiver-hangs", false, "with --serve-bin: receive the merchant's webhooks in this tool and never answer them (an endpoint that hangs; read paylink_webhook_deferred_total from PAYLINK_METRICS_ADDR); reports the attempts that arrive")
	fs.BoolVar(&c.json, "json", false, "print the report as JSON")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	var err error
	if c.addrs, err = parseURLs(*urls); err != nil {
		return c, err
	}
	if c.serverPIDs, err = parseInts[int]("--server-pid", *pids); err != nil {
		return c, err
	}
	if c.rows, err = parseInts[int64]("--rows", *rows); err != nil {
		return c, err
	}
	c.scenarios = strings.Split(*scenarios, ",")
	return c, c.check()
}

func (c config) check() error {
	echoOnly := slices.Equal(c.scenarios, []string{"echo"})
	for _, s := range c.scenarios {
		if !slices.Contains([]string{"flow", "status", "page"}, s) && !echoOnly {
			return fmt.Errorf("--scenario %q: want flow, status or page, or echo alone", s)
		}
	}
	switch {
	case c.dbPID < 0:
		return errors.New("--db-pid must be a process id")
	case c.clients < 1 || c.clients > 4096:
		return errors.New("--clients must be 1 to 4096")
	case c.duration <= 0 || c.duration > 10*time.Minute:
		return errors.New("--duration must be positive and at most 10m")
	case c.warmup < 0 || c.warmup > time.Minute:
		return errors.New("--warmup must be 0 to 1m")
	case c.serveBin != "" && len(c.addrs) > 0:
		return errors.New("give --url or --serve-bin, not both")
	case c.serveBin == "" && (c.db != "" || c.instances != 1 || c.processingFirst || c.webhookURL != "" || c.webhookReceiver || c.webhookHangs):
		return errors.New("--db, --instances, --record-processing-first, --webhook-url, --webhook-receiver and --webhook-receiver-hangs go with --serve-bin")
	case (c.webhookURL != "" && (c.webhookReceiver || c.webhookHangs)) || (c.webhookReceiver && c.webhookHangs):
		return errors.New("give one of --webhook-url, --webhook-receiver and --webhook-receiver-hangs")
	case c.instances < 1 || c.instances > 16:
		return errors.New("--instances must be 1 to 16")
	case c.instances > 1 && !isPostgres(c.db):
		return errors.New("--instances above 1 needs a PostgreSQL --db (one SQLite file has one writer)")
	case echoOnly:
		return nil
	case c.serveBin == "" && len(c.addrs) == 0:
		return errors.New("give --serve-bin, or --url with --api-key and --company-token")
	case c.serveBin == "" && (c.apiKey == "" || c.companyToken == ""):
		return errors.New("--url needs --api-key and --company-token")
	case !increasing(c.rows):
		return errors.New("--rows must be increasing")
	case len(c.rows) > 0 && !slices.Equal(c.scenarios, []string{"flow"}):
		return errors.New("--rows runs the flow scenario only")
	}
	return nil
}

// parseURLs turns http://host:port base URLs into addresses.
func parseURLs(list string) ([]string, error) {
	var addrs []string
	for _, s := range strings.Split(list, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		u, err := url.Parse(s)
		if err != nil || u.Scheme != "http" || u.Port() == "" || strings.Trim(u.Path, "/") != "" {
			return nil, fmt.Errorf("--url %q: want http://host:port (plain HTTP, no path)", s)
		}
		addrs = append(addrs, u.Host)
	}
	return addrs, nil
}

func increasing(ns []int64) bool {
	for i := 1; i < len(ns); i++ {
		if ns[i] <= ns[i-1] {
			return false
		}
	}
	return true
}

// parseInts reads a comma-separated list of positive integers.
func parseInts[T int | int64](name, list string) ([]T, error) {
	var ns []T
	for _, s := range strings.Split(list, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%s %q: want a positive integer", name, s)
		}
		ns = append(ns, T(n))
	}
	return ns, nil
}

// run parses args, runs the load and prints the report to stdout. With
// echo-server first it is the echo server instead.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "echo-server" {
		return runEchoServer(ctx, args[1:])
	}
	c, err := parse(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	s, err := setUp(ctx, c, stderr)
	if err != nil {
		return err
	}
	defer s.stop()
	rep, err := s.measure(ctx, c)
	if err != nil && ctx.Err() == nil {
		return err
	}
	// Interrupted, the report still shows what was measured so far.
	if c.json {
		return errors.Join(writeJSON(stdout, rep), err)
	}
	writeText(stdout, rep)
	return err
}
