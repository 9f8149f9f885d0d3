package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/http/pprof"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/api"
	"github.com/paylink/paylink/internal/dashboard"
	"github.com/paylink/paylink/internal/jobs"
	"github.com/paylink/paylink/internal/mailer"
	"github.com/paylink/paylink/internal/metrics"
	"github.com/paylink/paylink/internal/site"
	"github.com/paylink/paylink/internal/sqlstore"
	"github.com/paylink/paylink/internal/webhook"
)

// serveConfig is everything serve needs.
type serveConfig struct {
	dsn         string
	addr        string
	baseURL     string
	service     paylink.Config
	rateLimit   float64
	rateBurst   int
	metricsAddr string
	logLevel    slog.Level // info logs every request; warn keeps only problems
	// webhookTimeout bounds one webhook delivery attempt.
	webhookTimeout time.Duration
	// webhookConcurrency bounds the webhook attempts in flight.
	webhookConcurrency int
	// dashboardIdle ends dashboard sessions unused for this long.
	dashboardIdle time.Duration
	// shutdownDelay is how long serve keeps serving, /readyz answering
	// 503, after SIGTERM before it closes its listener.
	shutdownDelay time.Duration
	// shutdownTimeout bounds the drain of in-flight requests; at least
	// paylink.MaxRequestTime, so no request paylink allows is cut off.
	shutdownTimeout time.Duration
	// mail, when set (--smtp-addr), mails dashboard invites.
	mail *mailer.SMTP
	// ready, when set, is called once the listener is up.
	ready func(baseURL string, svc *paylink.Service) error
}

func runServe(ctx context.Context, env environment, args []string) error {
	cfg, err := parseServe(env, args)
	if err != nil {
		return ignoreHelp(err)
	}
	return serve(ctx, env, cfg)
}

// parseServe reads serve's flags, with defaults from PAYLINK_* variables.
func parseServe(env environment, args []string) (serveConfig, error) {
	f := newFlags("serve", env)
	cfg := serveConfig{}
	dsn := f.str("db", defaultDB, "database: a SQLite file path, sqlite:PATH, or postgres://...")
	addr := f.str("addr", "127.0.0.1:8080", "listen address host:port")
	base := f.str("base-url", "", "public base URL of this service (default: derived from --addr)")
	ttl := f.duration("transaction-token-ttl", paylink.DefaultTransactionTokenTTL, "lifetime of a transaction token, at most "+paylink.MaxTransactionTokenTTL.String()+" (a key rotation keeps a retired key that long)")
	preauth := f.duration("preauth-expiry", paylink.DefaultPreAuthExpiry, "holds not captured or cancelled within this are cancelled")
	rateLimit := f.float("rate-limit", 100, "requests per second per merchant, per instance; 0 disables")
	rateBurst := f.integer("rate-burst", 200, "burst size of the per-merchant rate limit")
	metrics := f.str("metrics-addr", "", "serve Prometheus metrics at http://ADDR/metrics and the Go profiler at http://ADDR/debug/pprof/; keep it private (default: off)")
	cfg.logLevel = slog.LevelInfo
	if v := env.getenv("PAYLINK_LOG_LEVEL"); v != "" {
		if err := (levelFlag{&cfg.logLevel}).Set(v); err != nil {
			return cfg, fmt.Errorf("PAYLINK_LOG_LEVEL: %w", err)
		}
	}
	f.Var(levelFlag{&cfg.logLevel}, "log-level", "log level: debug, info (every request), warn or error (env PAYLINK_LOG_LEVEL)")
	clearing := f.duration("direct-debit-clearing", paylink.DefaultDirectDebitClearing, "direct debits stay PENDING this long before the bank is asked whether they cleared")
	whTimeout := f.duration("webhook-timeout", webhook.DefaultTimeout, "timeout of one webhook delivery attempt")
	whConcurrency := f.integer("webhook-concurrency", webhook.DefaultConcurrency,
		"webhook delivery attempts in flight per instance, 1 to "+fmt.Sprint(webhook.MaxConcurrency)+" (also the idle connections kept per receiver)")
	cutoff := f.str("settlement-cutoff", "00:00", "daily settlement cut-off, HH:MM UTC: balance transactions before it are settled and paid out")
	authTimeout := f.duration("authentication-timeout", paylink.DefaultAuthenticationTimeout,
		"lifetime of a 3-D Secure attempt, answered or not, and of a payment link's claim by it; after it the attempt fails and is never authorised; at most "+paylink.MaxAuthenticationTimeout.String())
	procTimeout := f.duration("processor-timeout", paylink.DefaultProcessorTimeout,
		"deadline of every acquirer and bank call; at most "+paylink.MaxProcessorTimeout.String()+" (half the recovery threshold)")
	dashIdle := f.duration("dashboard-idle", paylink.SessionIdleDefault, "dashboard sessions unused for this long end")
	smtpAddr := f.str("smtp-addr", "", "mail dashboard invites through this SMTP server, host:port (default: off; invite links are only shown to the admin)")
	smtpFrom := f.str("smtp-from", "", "sender of that mail, such as 'paylink <no-reply@example.com>'; required with --smtp-addr")
	smtpUser := f.str("smtp-username", "", "SMTP user (AUTH PLAIN, only over STARTTLS or to the local host)")
	smtpPasswordFile := f.str("smtp-password-file", "", "file holding the SMTP user's password (a file, not a flag, so it stays out of ps and shell history)")
	shutdownTimeout := f.duration("shutdown-timeout", defaultShutdownTimeout,
		"on SIGINT or SIGTERM, wait this long for in-flight requests to finish; at least "+paylink.MaxRequestTime.String()+
			" (the longest a request may take); set an orchestrator's grace period above it plus --shutdown-delay and --webhook-timeout")
	shutdownDelay := f.duration("shutdown-delay", 0,
		"on SIGINT or SIGTERM, answer /readyz 503 and keep serving this long before closing the listener, so a load balancer stops sending first, at most "+maxShutdownDelay.String()+" (default: 0, close at once)")
	whRetries := f.boolean("webhook-retries", "retry failed webhooks with exponential backoff for every merchant (default: one attempt, as the spec says)")
	processingFirst := f.boolean("record-processing-first", "record every card purchase PROCESSING before asking the sandbox acquirer, as a remote acquirer's payments always are (default: the in-process sandbox is asked inside the purchase's one database transaction)")
	if err := f.parse(args); err != nil {
		return cfg, err
	}
	cfg.dsn, cfg.addr, cfg.baseURL, cfg.metricsAddr, cfg.webhookTimeout = *dsn, *addr, *base, *metrics, *whTimeout
	cfg.dashboardIdle, cfg.webhookConcurrency, cfg.rateLimit, cfg.rateBurst = *dashIdle, *whConcurrency, *rateLimit, *rateBurst
	cfg.shutdownTimeout, cfg.shutdownDelay = *shutdownTimeout, *shutdownDelay
	if cfg.webhookConcurrency < 1 || cfg.webhookConcurrency > webhook.MaxConcurrency {
		return cfg, fmt.Errorf("--webhook-concurrency: got %d, want 1 to %d", cfg.webhookConcurrency, webhook.MaxConcurrency)
	}
	// Every duration must be positive: a 0 on the command line is refused,
	// though the library reads a zero Config field as its default. The
	// upper bounds are Config.Validate's, reported below under the flag
	// of the setting (setting: the Config field the flag sets), every
	// flag out of range at once (checkDurations).
	durations := []durationFlag{
		{"transaction-token-ttl", "TransactionTokenTTL", *ttl},
		{"preauth-expiry", "PreAuthExpiry", *preauth},
		{"direct-debit-clearing", "DirectDebitClearing", *clearing},
		{"webhook-timeout", "", *whTimeout},
		{"authentication-timeout", "AuthenticationTimeout", *authTimeout},
		{"processor-timeout", "ProcessorTimeout", *procTimeout},
		{"dashboard-idle", "", *dashIdle},
	}
	if math.IsNaN(cfg.rateLimit) || math.IsInf(cfg.rateLimit, 0) || cfg.rateLimit < 0 || cfg.rateBurst < 1 {
		return cfg, fmt.Errorf("--rate-limit %v, --rate-burst %d: want a rate of 0 (off) or more and a burst of 1 or more", cfg.rateLimit, cfg.rateBurst)
	}
	if err := checkBaseURL(cfg.baseURL); err != nil {
		return cfg, err
	}
	var err error
	if cfg.mail, err = smtpMailer(*smtpAddr, *smtpFrom, *smtpUser, *smtpPasswordFile); err != nil {
		return cfg, err
	}
	cutoffAt, err := parseTimeOfDay(*cutoff)
	if err != nil {
		return cfg, fmt.Errorf("--settlement-cutoff: %w", err)
	}
	cfg.service = paylink.Config{TransactionTokenTTL: *ttl, PreAuthExpiry: *preauth, DirectDebitClearing: *clearing,
		AuthenticationTimeout: *authTimeout, WebhookRetries: *whRetries, SettlementCutoff: cutoffAt, ProcessorTimeout: *procTimeout,
		RecordProcessingFirst: *processingFirst}
	return cfg, errors.Join(checkShutdown(cfg.shutdownTimeout, cfg.shutdownDelay), checkDurations(durations, cfg.service.Validate()))
}

// checkShutdown names --shutdown-timeout and --shutdown-delay when out of
// range, both at once, as checkDurations does the others.
func checkShutdown(timeout, delay time.Duration) error {
	var errs []error
	if timeout < paylink.MaxRequestTime {
		errs = append(errs, fmt.Errorf("--shutdown-timeout: got %s, want at least %s: a request may take that long, and one cut off may commit a payment its client never hears of",
			timeout, paylink.MaxRequestTime))
	}
	if delay < 0 || delay > maxShutdownDelay {
		errs = append(errs, fmt.Errorf("--shutdown-delay: got %s, want 0 to %s (long enough for a load balancer to see /readyz fail)", delay, maxShutdownDelay))
	}
	return errors.Join(errs...)
}

// durationFlag is one of serve's duration flags, with the Config field it
// sets ("" for none).
type durationFlag struct {
	flag, setting string
	got           time.Duration
}

// checkDurations names every duration flag out of range, each once under
// its own name: those not positive (the command line's rule: 0 is no
// default there), then the settings invalid (Config.Validate's error)
// refuses, in the flags' own words; a setting no flag sets as Validate
// says it.
func checkDurations(flags []durationFlag, invalid error) error {
	var errs []error
	named := map[string]bool{}
	for _, d := range flags {
		if d.got <= 0 {
			errs = append(errs, fmt.Errorf("--%s: got %s, want a positive duration", d.flag, d.got))
			named[d.setting] = true
		}
	}
	for _, bad := range paylink.SettingErrors(invalid) {
		if !named[bad.Setting] {
			errs = append(errs, underFlag(bad, flags))
		}
	}
	return errors.Join(errs...)
}

// underFlag is a setting Config.Validate refused, told under the flag of
// its setting; bad itself when no flag sets it.
func underFlag(bad *paylink.SettingError, flags []durationFlag) error {
	for _, d := range flags {
		if d.setting == bad.Setting {
			return fmt.Errorf("--%s: got %s, want %s", d.flag, bad.Got, bad.Want())
		}
	}
	return bad
}

// checkBaseURL refuses a --base-url that page links cannot be made from:
// it must be an absolute http or https URL with a host, and no query or
// fragment ("" derives it from --addr).
func checkBaseURL(base string) error {
	if base == "" {
		return nil
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("--base-url %q: want an absolute http or https URL, such as https://pay.example.com", base)
	}
	return nil
}

// smtpMailer builds the invite mailer from the --smtp-* flags: nil
// without --smtp-addr, an error for settings that cannot work.
func smtpMailer(addr, from, user, passwordFile string) (*mailer.SMTP, error) {
	if addr == "" {
		if from != "" || user != "" || passwordFile != "" {
			return nil, errors.New("--smtp-from, --smtp-username and --smtp-password-file need --smtp-addr")
		}
		return nil, nil
	}
	if (user == "") != (passwordFile == "") {
		return nil, errors.New("--smtp-username and --smtp-password-file go together")
	}
	cfg := mailer.Config{Addr: addr, From: from, Username: user}
	if passwordFile != "" {
		raw, err := os.ReadFile(passwordFile)
		if err != nil {
			return nil, fmt.Errorf("--smtp-password-file: %w", err)
		}
		cfg.Password = strings.TrimRight(string(raw), "\r\n")
	}
	m, err := mailer.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("--smtp-addr, --smtp-from: %w", err)
	}
	return m, nil
}

func ignoreHelp(err error) error {
	if errors.Is(err, errHelp) {
		return nil
	}
	return err
}

// dashboardOptions are the dashboard's settings from serve's flags.
func dashboardOptions(cfg serveConfig) []dashboard.Option {
	opts := []dashboard.Option{dashboard.WithIdleTimeout(cfg.dashboardIdle)}
	if cfg.mail != nil {
		opts = append(opts, dashboard.WithMailer(cfg.mail))
	}
	return opts
}

// serve runs the HTTP service and background jobs until ctx is done, then
// drains in-flight requests and stops the jobs.
func serve(ctx context.Context, env environment, cfg serveConfig) error {
	tuneGC(env.getenv)
	log := newLoggerAt(env.stderr, cfg.logLevel)
	st, err := openStore(ctx, cfg.dsn, sqlstore.WithLogger(log))
	if err != nil {
		return err
	}
	defer st.Close()
	watch := newSchemaWatch(st, log)
	if changed, err := st.ChangedMigrations(ctx); err == nil && len(changed) > 0 {
		log.Warn("migrations were applied from other files than this paylink's: the schema may differ from a fresh database's",
			"migrations", strings.Join(changed, "; "))
	}
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	cfg.service.BaseURL = strings.TrimRight(cfg.baseURL, "/")
	if cfg.service.BaseURL == "" {
		cfg.service.BaseURL = "http://" + ln.Addr().String()
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), watch.behind)
	svc, err := newObservedService(ctx, env, st, cfg.dsn, cfg.service, log, metrics.NewPayments(reg))
	if err == nil {
		err = svc.CheckSecretsOpen(ctx)
	}
	if svc != nil {
		defer closeService(svc, log) // runs before the store's Close
	}
	if err != nil {
		ln.Close()
		return err
	}
	metrics.RegisterStore(reg, svc, st)
	clock := newClockWatch(st, svc.Now, log)
	reg.MustRegister(clock.offset)
	draining := make(chan struct{})
	handler, err := site.Handler(svc, site.Options{Logger: log, Registry: reg,
		API:       []api.Option{api.WithRateLimit(cfg.rateLimit, cfg.rateBurst), api.WithDraining(draining)},
		Dashboard: dashboardOptions(cfg)})
	if err != nil {
		ln.Close()
		return err
	}
	if cfg.metricsAddr != "" {
		stop, err := serveMetrics(cfg.metricsAddr, reg, log)
		if err != nil {
			ln.Close()
			return err
		}
		defer stop()
	}
	running := &inFlight{}
	srv := &http.Server{
		Handler:           running.wrap(handler),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      paylink.MaxRequestTime,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    32 << 10,
	}
	log.Info("paylink listening", "addr", ln.Addr().String(), "base_url", cfg.service.BaseURL, "engine", st.Engine())
	d := drainer{log: log, srv: srv, draining: draining, running: running, delay: cfg.shutdownDelay, timeout: cfg.shutdownTimeout}
	return runUntilDone(ctx, log, d, ln, svc, backgroundTasks(svc, watch, clock), reg, cfg)
}

// runUntilDone serves and runs jobs, then shuts both down: the HTTP
// drain first, then the jobs (the webhook dispatcher waits for its
// attempts in flight, up to --webhook-timeout).
func runUntilDone(ctx context.Context, log *slog.Logger, d drainer, ln net.Listener, svc *paylink.Service,
	tasks []jobs.Task, reg prometheus.Registerer, cfg serveConfig) error {
	srv := d.srv
	jobCtx, stopJobs := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		jobs.NewRunner(log, jobs.NewMetrics(reg), tasks...).Run(jobCtx)
	}()
	go func() {
		defer wg.Done()
		webhook.New(svc, webhook.Options{Timeout: cfg.webhookTimeout, Concurrency: cfg.webhookConcurrency, Logger: log,
			Metrics: webhook.NewMetrics(reg)}).Run(jobCtx)
	}()
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	if cfg.ready != nil {
		if err := cfg.ready(svc.Config().BaseURL, svc); err != nil {
			stopJobs()
			srv.Close()
			wg.Wait()
			return err
		}
	}
	var err error
	select {
	case <-ctx.Done():
		err = d.drain()
	case err = <-serveErr:
	}
	stopJobs()
	wg.Wait()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// maxShutdownDelay bounds --shutdown-delay: a load balancer sees /readyz
// fail within a few of its health checks, and an instance that stays up
// longer only delays its deployment.
const maxShutdownDelay = 5 * time.Minute

// defaultShutdownTimeout is --shutdown-timeout's default: the longest a
// request may take, and a margin for its answer to be written.
const defaultShutdownTimeout = paylink.MaxRequestTime + 10*time.Second

// inFlight counts the requests being served, for the drain's report.
type inFlight struct{ n atomic.Int64 }

// wrap counts h's requests while they run.
func (f *inFlight) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.n.Add(1)
		defer f.n.Add(-1)
		h.ServeHTTP(w, r)
	})
}

// drainer stops the HTTP server on SIGINT or SIGTERM without cutting off
// a request paylink allows: one cut off may still commit its payment, its
// client never told.
type drainer struct {
	log      *slog.Logger
	srv      *http.Server
	draining chan struct{} // closed when the drain starts: /readyz answers 503
	running  *inFlight
	delay    time.Duration // --shutdown-delay: serving on, not ready, before the listener closes
	timeout  time.Duration // --shutdown-timeout: how long in-flight requests get
}

// drain makes /readyz answer 503, keeps serving for the delay, closes the
// listener and waits up to the timeout for in-flight requests. Requests
// still running then are cut off, logged at WARN with their number, and
// reported in the error.
func (d drainer) drain() error {
	close(d.draining)
	d.log.Info("shutting down", "in_flight", d.running.n.Load(), "shutdown_delay", d.delay.String(), "shutdown_timeout", d.timeout.String())
	time.Sleep(d.delay)
	ctx, cancel := context.WithTimeout(context.Background(), d.timeout)
	defer cancel()
	err := d.srv.Shutdown(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	n := d.running.n.Load()
	d.log.Warn("shutdown: requests still running when the drain gave up are cut off; their clients get no answer, and what they commit stays (a retry with the same Idempotency-Key or a status look-up tells)",
		"in_flight", n, "shutdown_timeout", d.timeout.String())
	d.srv.Close()
	return fmt.Errorf("shutdown: %d requests still running after --shutdown-timeout %s were cut off", n, d.timeout)
}

// serveMetrics serves /metrics and the Go profiler (/debug/pprof/) on
// their own address, which must stay private, and returns a function that
// stops it.
func serveMetrics(addr string, reg *prometheus.Registry, log *slog.Logger) (func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics listen: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /debug/pprof/", boundedProfile(pprof.Index))
	mux.HandleFunc("GET /debug/pprof/profile", boundedProfile(pprof.Profile))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second,
		WriteTimeout: 2 * time.Minute, IdleTimeout: 2 * time.Minute}
	go srv.Serve(ln)
	log.Info("metrics listening", "addr", ln.Addr().String())
	if !loopback(ln.Addr()) {
		log.Warn("the metrics and profiler address is not a loopback address: keep it private (a firewall, or --metrics-addr 127.0.0.1:PORT)", "addr", ln.Addr().String())
	}
	return func() { srv.Close() }, nil
}

// maxProfileSeconds is the longest profile the metrics address takes (a
// CPU profile, or a heap, allocation, goroutine, block or mutex delta):
// one request must not hold the CPU profiler (one at a time) or a
// connection for hours.
const maxProfileSeconds = 120

// boundedProfile is h refusing a profile longer than maxProfileSeconds.
func boundedProfile(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if sec, err := strconv.ParseFloat(r.FormValue("seconds"), 64); err == nil && !(sec <= maxProfileSeconds) {
			http.Error(w, fmt.Sprintf("seconds: at most %d", maxProfileSeconds), http.StatusBadRequest)
			return
		}
		h(w, r)
	}
}

// loopback reports whether addr listens on a loopback address only.
func loopback(addr net.Addr) bool {
	tcp, ok := addr.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}

// schemaWatch warns when the database's schema is newer than this
// binary's: at start-up, and when a later build migrates it while this
// instance serves (a rolling upgrade that left this instance behind), once
// per version. Its check is the schema-version-check job's, which runs at
// start-up (as every job runs first then) and every minute.
type schemaWatch struct {
	store *sqlstore.Store
	log   *slog.Logger
	ours  int // this binary's schema version
	seen  int // the newest version warned about, or ours
	// behind is paylink_schema_behind: 1 while the database's schema is
	// newer than ours, for an alert on an instance left behind.
	behind prometheus.Gauge
}

func newSchemaWatch(st *sqlstore.Store, log *slog.Logger) *schemaWatch {
	v := sqlstore.SchemaVersion(st.Engine())
	return &schemaWatch{store: st, log: log, ours: v, seen: v, behind: prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "paylink_schema_behind",
		Help: "1 when the database's schema is newer than this paylink's (a later build migrated it: restart this instance on that build), else 0.",
	})}
}

// check reads the database's version and warns if it is newer than any
// seen before.
func (w *schemaWatch) check(ctx context.Context) error {
	have, err := w.store.AppliedVersion(ctx)
	if err != nil {
		return err
	}
	if have > w.ours {
		w.behind.Set(1)
	} else {
		w.behind.Set(0)
	}
	if have > w.seen {
		w.seen = have
		w.log.Warn(sqlstore.NewerSchemaWarning, "database_version", have, "paylink_version", w.ours)
	}
	return nil
}

// backgroundTasks lists the periodic jobs of a serving instance: the
// Service's maintenance jobs (Service.Jobs), then this instance's own
// checks: the schema version, and the clock where there is a database
// clock to measure it against (PostgreSQL). A nil svc gives the checks
// alone (tests of them).
func backgroundTasks(svc *paylink.Service, watch *schemaWatch, clock *clockWatch) []jobs.Task {
	var tasks []jobs.Task
	if svc != nil {
		for _, j := range svc.Jobs() {
			tasks = append(tasks, jobs.Task{Name: j.Name, Every: j.Every, Run: j.Run})
		}
	}
	// Notice a later build migrating the database while this one serves.
	tasks = append(tasks, jobs.Task{Name: "schema-version-check", Every: time.Minute, Run: watch.check})
	if clock.measures() {
		// Measure this instance's clock against the database server's (at
		// start-up, as every job runs first then, and every minute).
		tasks = append(tasks, jobs.Task{Name: "clock-offset-check", Every: time.Minute, Run: clock.check})
	}
	return tasks
}
