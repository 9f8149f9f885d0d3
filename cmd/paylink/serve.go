package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/api"
	"github.com/paylink/paylink/internal/checkout"
	"github.com/paylink/paylink/internal/jobs"
)

// serveConfig is everything serve needs.
type serveConfig struct {
	dsn     string
	addr    string
	baseURL string
	service paylink.Config
	// ready, when set, is called once the listener is up.
	ready func(baseURL string, svc *paylink.Service) error
}

func runServe(ctx context.Context, env environment, args []string) error {
	f := newFlags("serve", env)
	cfg := serveConfig{}
	dsn := f.str("db", defaultDB, "database: a SQLite file path, sqlite:PATH, or postgres://...")
	addr := f.str("addr", "127.0.0.1:8080", "listen address host:port")
	base := f.str("base-url", "", "public base URL of this service (default: derived from --addr)")
	ttl := f.duration("transaction-token-ttl", 5*time.Minute, "lifetime of a transaction token")
	preauth := f.duration("preauth-expiry", 7*24*time.Hour, "holds not captured or cancelled within this are cancelled")
	if err := f.parse(args); err != nil {
		return ignoreHelp(err)
	}
	cfg.dsn, cfg.addr, cfg.baseURL = *dsn, *addr, *base
	cfg.service = paylink.Config{TransactionTokenTTL: *ttl, PreAuthExpiry: *preauth}
	return serve(ctx, env, cfg)
}

func ignoreHelp(err error) error {
	if errors.Is(err, errHelp) {
		return nil
	}
	return err
}

// serve runs the HTTP service and background jobs until ctx is done, then
// drains in-flight requests and stops the jobs.
func serve(ctx context.Context, env environment, cfg serveConfig) error {
	log := newLogger(env.stderr)
	st, err := openStore(ctx, cfg.dsn)
	if err != nil {
		return err
	}
	defer st.Close()
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	cfg.service.BaseURL = strings.TrimRight(cfg.baseURL, "/")
	if cfg.service.BaseURL == "" {
		cfg.service.BaseURL = "http://" + ln.Addr().String()
	}
	svc, err := newService(env, st, cfg.dsn, cfg.service, log)
	if err != nil {
		ln.Close()
		return err
	}
	apiServer := api.New(svc, log)
	if err := checkout.Mount(apiServer, svc, log); err != nil { // payment link pages (issue 5)
		ln.Close()
		return fmt.Errorf("payment pages: %w", err)
	}
	srv := &http.Server{
		Handler:           apiServer,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    32 << 10,
	}
	log.Info("paylink listening", "addr", ln.Addr().String(), "base_url", cfg.service.BaseURL, "engine", st.Engine())
	return runUntilDone(ctx, log, srv, ln, svc, cfg)
}

// runUntilDone serves and runs jobs, then shuts both down.
func runUntilDone(ctx context.Context, log *slog.Logger, srv *http.Server, ln net.Listener, svc *paylink.Service, cfg serveConfig) error {
	jobCtx, stopJobs := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		jobs.NewRunner(log, backgroundTasks(svc)...).Run(jobCtx)
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
		log.Info("shutting down")
		sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		err = srv.Shutdown(sctx)
		cancel()
	case err = <-serveErr:
	}
	stopJobs()
	wg.Wait()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// backgroundTasks lists the periodic jobs of a serving instance.
func backgroundTasks(svc *paylink.Service) []jobs.Task {
	return []jobs.Task{
		{Name: "transaction-token-cleanup", Every: 10 * time.Minute, Run: func(ctx context.Context) error {
			_, err := svc.CleanupTransactionTokens(ctx)
			return err
		}},
	}
}
