package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// session is the servers one run measures: paylink instances (started by
// the tool or given with --url) and the echo server.
type session struct {
	paylink  []target
	pids     []int // paylink's processes; none when unknown
	dbPID    int   // PostgreSQL's postmaster; 0 when unknown
	started  []*child
	echo     *child
	echoDest target
	hooks    *receiver // with --webhook-receiver
	engine   string    // SQLite or PostgreSQL when the tool started paylink
	tmp      string    // the default SQLite database's directory
}

// placeholder credentials for an echo-only run: as long as real ones, so
// the requests have the same size.
const (
	placeholderKey     = "pl_sk_0000000000000000000000000000000000000000"
	placeholderCompany = "0000000000000000000000000000000000000000000000000000000000000000" +
		"0000000000000000000000000000000000000000000000000000000000000000"
)

// setUp starts what the run needs. On error, whatever it started is
// stopped.
func setUp(ctx context.Context, c config, stderr io.Writer) (_ *session, err error) {
	s := &session{pids: c.serverPIDs, dbPID: c.dbPID}
	if _, ok := stderr.(*os.File); !ok {
		// Each child's output is then copied by a goroutine of its own.
		stderr = &lockedWriter{w: stderr}
	}
	defer func() {
		if err != nil {
			s.stop()
		}
	}()
	key, company := c.apiKey, c.companyToken
	echoOnly := slices.Equal(c.scenarios, []string{"echo"})
	switch {
	case echoOnly:
		key, company = placeholderKey, placeholderCompany
	case c.serveBin != "":
		if key, company, err = s.startPaylink(ctx, c, stderr); err != nil {
			return nil, err
		}
	default:
		for _, addr := range c.addrs {
			s.paylink = append(s.paylink, target{addr: addr, q: newRequests(addr, key, company)})
		}
	}
	if c.echo && c.rows == nil || echoOnly {
		if s.echo, err = startEcho(ctx, stderr); err != nil {
			return nil, err
		}
		s.echoDest = target{addr: s.echo.addr, q: newRequests(s.echo.addr, key, company)}
	}
	return s, nil
}

// startPaylink creates a merchant, then starts c.instances servers on
// c.db (a new SQLite database by default), and returns the merchant's
// credentials.
func (s *session) startPaylink(ctx context.Context, c config, stderr io.Writer) (key, company string, err error) {
	dsn := c.db
	if dsn == "" {
		if s.tmp, err = os.MkdirTemp("", "paylink-load-"); err != nil {
			return "", "", err
		}
		dsn = filepath.Join(s.tmp, "load.db")
	}
	s.engine = "SQLite"
	if isPostgres(dsn) {
		s.engine = "PostgreSQL"
	}
	env, err := serverEnv(dsn)
	if err != nil {
		return "", "", err
	}
	hookURL := c.webhookURL
	if c.webhookReceiver || c.webhookHangs {
		if s.hooks, err = startReceiver(c.webhookHangs); err != nil {
			return "", "", err
		}
		hookURL = s.hooks.url
	}
	creds, err := createMerchant(ctx, c.serveBin, dsn, hookURL, env)
	if err != nil {
		return "", "", err
	}
	for range c.instances {
		p, err := startPaylink(ctx, c.serveBin, dsn, c.processingFirst, env, stderr)
		if err != nil {
			return "", "", err
		}
		s.started = append(s.started, p)
		s.pids = append(s.pids, p.pid())
		s.paylink = append(s.paylink, target{addr: p.addr, q: newRequests(p.addr, creds.APIKey, creds.CompanyToken)})
	}
	return creds.APIKey, creds.CompanyToken, nil
}

// stop stops every process the session started and removes its files.
// A receiver that hangs answers first, so that paylink's shutdown does not
// wait out its attempts' timeout.
func (s *session) stop() {
	s.hooks.release()
	for _, p := range s.started {
		p.stop()
	}
	if s.echo != nil {
		s.echo.stop()
	}
	if s.hooks != nil {
		if err := s.hooks.stop(); err != nil {
			fmt.Fprintln(os.Stderr, "paylink-load:", err)
		}
	}
	if s.tmp != "" {
		os.RemoveAll(s.tmp)
	}
}

// measure runs what c asks for and reports it.
func (s *session) measure(ctx context.Context, c config) (report, error) {
	rep := report{Clients: c.clients, Instances: len(s.paylink), Engine: s.engine}
	if c.rows == nil {
		rep.Warmup, rep.Duration = c.warmup.String(), c.duration.String()
	}
	for _, p := range s.started {
		rep.StartupMS = append(rep.StartupMS, ms(p.startup))
	}
	switch {
	case slices.Equal(c.scenarios, []string{"echo"}):
		e := s.echoMeasure(ctx, c, &phase{ctx: ctx, scenario: "flow"})
		rep.Scenarios = append(rep.Scenarios, scenarioResult{Name: "echo", Echo: &e})
	case c.rows != nil:
		rep.Rows = s.rows(ctx, c)
	default:
		for _, name := range c.scenarios {
			r, err := s.scenario(ctx, c, name)
			if err != nil {
				return rep, fmt.Errorf("%s: %w", name, err)
			}
			rep.Scenarios = append(rep.Scenarios, r)
		}
	}
	for _, pid := range s.pids {
		rss, err := peakRSS(pid)
		if err != nil {
			return rep, err
		}
		rep.PeakRSSMiB = append(rep.PeakRSSMiB, float64(rss)/(1<<20))
	}
	return rep, ctx.Err()
}

// scenario measures one scenario on paylink, then its requests on the
// echo server.
func (s *session) scenario(ctx context.Context, c config, name string) (scenarioResult, error) {
	p := &phase{ctx: ctx, scenario: name, pids: s.pids, dbPID: s.dbPID, hooks: s.hooks}
	prepared := record{}
	switch name {
	case "status":
		// The purchases to look up are made first, for the warm-up's time.
		prep := &phase{ctx: ctx, scenario: "flow", collect: true, pids: s.pids, dbPID: s.dbPID}
		_, prepared = prep.run(s.paylink, c.clients, max(c.warmup, time.Second), 0)
		if len(prepared.refs) == 0 {
			return scenarioResult{}, fmt.Errorf("no purchase approved to look up (%d errors, first: %s)", prepared.errors, prepared.firstErr)
		}
		p.refs = prepared.refs
	case "page":
		path, err := s.createLink()
		if err != nil {
			return scenarioResult{}, err
		}
		p.pagePath = path
	}
	ws, rec := p.run(s.paylink, c.clients, c.warmup, c.duration)
	rec.errors += prepared.errors
	if rec.firstErr == "" {
		rec.firstErr = prepared.firstErr
	}
	r := scenarioResult{Name: name, Paylink: measureOf(ws[0], rec, len(s.pids) > 0)}
	if c.echo && ctx.Err() == nil {
		e := s.echoMeasure(ctx, c, &phase{ctx: ctx, scenario: name, refs: p.refs, pagePath: p.pagePath})
		r.Echo = &e
		if e.RequestsPerSecond > 0 {
			r.EchoRatio = r.Paylink.RequestsPerSecond / e.RequestsPerSecond
		}
	}
	return r, nil
}

// echoMeasure runs phase p's requests against the echo server.
func (s *session) echoMeasure(ctx context.Context, c config, p *phase) measure {
	p.echo, p.pids = true, []int{s.echo.pid()}
	ws, rec := p.run([]target{s.echoDest}, c.clients, c.warmup, c.duration)
	return measureOf(ws[0], rec, true)
}

// rows runs flows until the last of c.rows transactions are stored,
// measuring between each two.
func (s *session) rows(ctx context.Context, c config) rowScaling {
	p := &phase{ctx: ctx, scenario: "flow", pids: s.pids, dbPID: s.dbPID, rows: c.rows, hooks: s.hooks}
	ws, rec := p.run(s.paylink, c.clients, 0, 0)
	r := rowScaling{Errors: rec.errors, FirstError: rec.firstErr}
	for i, w := range ws {
		m := measureOf(w, record{}, len(s.pids) > 0)
		m.StoredFrom, m.StoredTo = p.from0(i), c.rows[i]
		r.Windows = append(r.Windows, m)
	}
	return r
}

// createLink creates the payment link of the page scenario and returns
// its hosted page's path.
func (s *session) createLink() (string, error) {
	t := s.paylink[0]
	cn := conn{addr: t.addr}
	defer cn.close()
	resp, err := cn.do(t.q.link())
	if err != nil {
		return "", fmt.Errorf("create payment link: %w", err)
	}
	if resp.status != 200 {
		return "", fmt.Errorf("create payment link: HTTP %d: %.200s", resp.status, resp.body)
	}
	u, err := url.Parse(string(field(resp.body, "url")))
	if err != nil || !strings.HasPrefix(u.Path, "/pay/") {
		return "", errors.New("create payment link: no hosted page url in the answer")
	}
	return u.Path, nil
}
