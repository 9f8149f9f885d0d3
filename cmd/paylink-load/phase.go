package main

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// target is a server the clients of a phase talk to.
type target struct {
	addr string // host:port
	q    *requests
}

// phase is one run of one scenario by every client against a set of
// targets: a warm-up, then a measured window. In row-scaling mode (rows
// set) there is no warm-up and no time limit: flows are counted from the
// start, window w holds flows rows[w-1]+1 to rows[w] (from 1 for the
// first), and the phase ends after the last.
type phase struct {
	ctx       context.Context
	scenario  string // flow, status or page
	echo      bool   // against the echo server: only the status is checked
	echoToken []byte // the transaction token sent to the echo server
	collect   bool   // keep the references of approved purchases
	refs      [][]byte
	pagePath  string

	from, to time.Time // the measured window
	rows     []int64
	flows    atomic.Int64 // measured flows
	pids     []int        // the servers' processes, for CPU; none when unknown
	dbPID    int          // the database server's main process; 0 when unknown
	hooks    *receiver    // the tool's webhook receiver; nil when none
	marks    []mark       // marks[w] starts window w; the last one ends the phase
}

// mark is a point in time with the CPU used so far by the servers and by
// the generator.
type mark struct {
	at               time.Time
	server, db, self time.Duration
	webhooks         int64 // received so far
	err              error
}

// window is what a phase measured between two marks.
type window struct {
	elapsed           time.Duration
	flows             int64
	lat               [numKinds][]time.Duration // sorted
	serverCPU, genCPU time.Duration
	dbCPU             time.Duration // when the phase has a dbPID
	cpuErr            error
	webhooks          int64 // received in the window, when the phase has a receiver
	receiver          bool
}

func (p *phase) sample() mark {
	m := mark{at: time.Now(), self: selfCPU(), webhooks: p.hooks.received()}
	for _, pid := range p.pids {
		cpu, err := processCPU(pid)
		m.server += cpu
		m.err = errors.Join(m.err, err)
	}
	if p.dbPID != 0 {
		cpu, err := familyCPU(p.dbPID)
		m.db = cpu
		m.err = errors.Join(m.err, err)
	}
	return m
}

func (p *phase) measured(t time.Time) bool { return !t.Before(p.from) && t.Before(p.to) }

// flowDone counts a flow completed at t and returns the window it belongs
// to, or false when it is not measured (warm-up, or past the limit).
func (p *phase) flowDone(t time.Time) (int, bool) {
	if p.rows == nil {
		if !p.measured(t) {
			return 0, false
		}
		p.flows.Add(1)
		return 0, true
	}
	n := p.flows.Add(1)
	w, last := slices.BinarySearch(p.rows, n)
	if w == len(p.rows) {
		return 0, false // past the last
	}
	if last {
		p.marks[w+1] = p.sample() // only this client writes this mark
	}
	return w, true
}

func (p *phase) running() bool {
	switch {
	case p.ctx.Err() != nil:
		return false
	case p.rows != nil:
		return p.flows.Load() < p.rows[len(p.rows)-1]
	}
	return time.Now().Before(p.to)
}

// run runs the phase with n clients spread over targets, and returns its
// windows and what the clients saw, merged.
func (p *phase) run(targets []target, n int, warmup, duration time.Duration) ([]window, record) {
	p.echoToken = bytes.Repeat([]byte("e"), 128) // a real token's length
	p.from = time.Now().Add(warmup)
	p.to = p.from.Add(duration)
	if p.rows != nil {
		p.to = time.Now().Add(100 * 365 * 24 * time.Hour)
		p.marks = make([]mark, len(p.rows)+1)
		p.marks[0] = p.sample()
	}
	clients := make([]*client, n)
	var wg sync.WaitGroup
	for i := range clients {
		t := targets[i%len(targets)]
		// next: each client starts its look-ups at a different purchase.
		c := &client{conn: conn{addr: t.addr}, q: t.q, p: p, tokenReq: t.q.token(), next: i * 7919}
		clients[i] = c
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.conn.close()
			step := map[string]func(){"flow": c.flow, "status": c.status, "page": c.page}[p.scenario]
			for p.running() {
				step()
			}
		}()
	}
	if p.rows == nil {
		sleepUntil(p.ctx, p.from)
		p.marks = append(p.marks, p.sample())
		sleepUntil(p.ctx, p.to)
		p.marks = append(p.marks, p.sample())
	}
	wg.Wait()
	return p.windows(clients), merge(clients)
}

// windows puts the clients' latencies and the marks together.
func (p *phase) windows(clients []*client) []window {
	marks := p.marks
	for len(marks) > 1 && marks[len(marks)-1].at.IsZero() {
		marks = marks[:len(marks)-1] // interrupted before the limit
	}
	ws := make([]window, len(marks)-1)
	for w := range ws {
		a, b := marks[w], marks[w+1]
		ws[w] = window{elapsed: b.at.Sub(a.at), serverCPU: b.server - a.server, genCPU: b.self - a.self, dbCPU: b.db - a.db,
			cpuErr: errors.Join(a.err, b.err), flows: p.flows.Load(), webhooks: b.webhooks - a.webhooks, receiver: p.hooks != nil}
		if p.rows != nil {
			ws[w].flows = p.rows[w] - p.from0(w)
		}
		for _, c := range clients {
			if w < len(c.rec.lat) {
				for k := range numKinds {
					ws[w].lat[k] = append(ws[w].lat[k], c.rec.lat[w][k]...)
				}
			}
		}
		for k := range numKinds {
			slices.Sort(ws[w].lat[k])
		}
	}
	return ws
}

// merge adds up the clients' errors and references.
func merge(clients []*client) record {
	var r record
	for _, c := range clients {
		if r.errors == 0 {
			r.firstErr = c.rec.firstErr
		}
		r.errors += c.rec.errors
		r.refs = append(r.refs, c.rec.refs...)
	}
	return r
}

// from0 is the count of stored transactions window w starts from.
func (p *phase) from0(w int) int64 {
	if w == 0 {
		return 0
	}
	return p.rows[w-1]
}

func sleepUntil(ctx context.Context, t time.Time) {
	select {
	case <-ctx.Done():
	case <-time.After(time.Until(t)):
	}
}
