package main

import (
	"bytes"
	"fmt"
	"time"
)

// kind is a kind of request, for latency by kind.
type kind int

const (
	kindToken kind = iota
	kindPurchase
	kindStatus
	kindPage
	numKinds
)

func (k kind) String() string {
	return [numKinds]string{"token", "purchase", "status", "page"}[k]
}

// client is one simulated merchant integration: one keep-alive
// connection, its own request buffers, and its own record, so clients
// share nothing but the phase's flow counter.
type client struct {
	conn     conn
	q        *requests
	p        *phase
	tokenReq []byte
	req      []byte
	tt       []byte
	next     int // the next purchase reference to look up
	rec      record
}

// record is what one client saw: latencies of measured requests by
// window and kind, errors at any time, and, when asked, the references
// of its approved purchases.
type record struct {
	lat      [][numKinds][]time.Duration
	errors   int
	firstErr string
	refs     [][]byte
}

func (r *record) add(window int, k kind, d time.Duration) {
	for len(r.lat) <= window {
		r.lat = append(r.lat, [numKinds][]time.Duration{})
	}
	r.lat[window][k] = append(r.lat[window][k], d)
}

func (r *record) fail(err error) {
	if r.errors == 0 {
		r.firstErr = err.Error()
	}
	r.errors++
}

// check returns an error unless resp is a 200 whose body holds want
// (against the echo server, any 200 will do).
func (c *client) check(resp response, err error, want string) error {
	switch {
	case err != nil:
		return err
	case resp.status != 200:
		return fmt.Errorf("HTTP %d: %.200s", resp.status, resp.body)
	case !c.p.echo && !bytes.Contains(resp.body, []byte(want)):
		// Only the message: a whole answer may carry tokens.
		return fmt.Errorf("answer without %s: status %q, %q", want, field(resp.body, "status"), field(resp.body, "response_message"))
	}
	return nil
}

// flow makes one complete flow: a transaction token, then a surcharged
// card purchase spending it, which must be approved.
func (c *client) flow() {
	t0 := time.Now()
	resp, err := c.conn.do(c.tokenReq)
	t1 := time.Now()
	if err = c.check(resp, err, `"transaction_token":"`); err != nil {
		c.fail("transaction token", err)
		return
	}
	if c.p.echo {
		// The echo server issues no token: send one of a real token's length.
		c.tt = append(c.tt[:0], c.p.echoToken...)
	} else {
		c.tt = append(c.tt[:0], field(resp.body, "transaction_token")...)
	}
	c.req = c.q.purchase(c.req[:0], c.tt)
	resp, err = c.conn.do(c.req)
	t2 := time.Now()
	if err = c.check(resp, err, `"status":"APPROVED"`); err != nil {
		c.fail("purchase", err)
		return
	}
	if c.p.collect {
		c.rec.refs = append(c.rec.refs, bytes.Clone(field(resp.body, "purchase_reference")))
	}
	if w, ok := c.p.flowDone(t2); ok {
		c.rec.add(w, kindToken, t1.Sub(t0))
		c.rec.add(w, kindPurchase, t2.Sub(t1))
	}
}

// status looks up one of the purchases made in the warm-up, in turn.
func (c *client) status() {
	ref := c.p.refs[c.next%len(c.p.refs)]
	c.next++
	c.req = c.q.status(c.req[:0], ref)
	c.timed(kindStatus, c.req, `"status":"APPROVED"`)
}

// page reads the hosted payment page of the link made at the start.
func (c *client) page() {
	c.req = c.q.get(c.req[:0], c.p.pagePath, nil)
	c.timed(kindPage, c.req, "</html>")
}

// timed sends a single-request step and records it.
func (c *client) timed(k kind, req []byte, want string) {
	t0 := time.Now()
	resp, err := c.conn.do(req)
	t1 := time.Now()
	if err = c.check(resp, err, want); err != nil {
		c.fail(k.String(), err)
		return
	}
	if c.p.measured(t1) {
		c.rec.add(0, k, t1.Sub(t0))
	}
}

// fail records an error, unless the run is stopping (an interrupted
// request is not the server's fault).
func (c *client) fail(what string, err error) {
	if c.p.ctx.Err() != nil {
		return
	}
	c.rec.fail(fmt.Errorf("%s: %w", what, err))
}
