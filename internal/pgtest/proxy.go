package pgtest

import (
	"bytes"
	"encoding/binary"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Proxy forwards TCP connections to a PostgreSQL server and can cut one
// off at the moment that matters to a payment: when a client sends a
// COMMIT. It is a real network fault between paylink and a real server,
// for the tests of what paylink answers when it cannot know whether its
// transaction committed.
type Proxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	cut    *Cut
}

// Cut is an armed fault: the COMMIT of the next transaction in which a
// client sent Marker (a value bound in it, such as an invoice number) is
// cut off, with what the client sent with it. With Forward the batch reaches the server, which
// commits, and only its answer is lost; without it, the server never
// sees the batch and rolls the transaction back.
type Cut struct {
	Marker  string
	Forward bool
	// Delay holds the batch back before forwarding it: the client has
	// lost its connection before the server has even read its COMMIT.
	Delay time.Duration
	// Hold, instead of a cut, forwards the batch at once and holds the
	// server's answers back for this long, on a connection that stays
	// up: a slow COMMIT, during which paylink's caller may give up.
	Hold time.Duration
	done chan struct{}
}

// StartProxy proxies to the server of dsn and returns the proxy and the
// same DSN through it. The proxy stops with the test.
func StartProxy(t testing.TB, dsn string) (*Proxy, string) {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{ln: ln, target: u.Host}
	go p.serve()
	t.Cleanup(func() { ln.Close() })
	u.Host = ln.Addr().String()
	return p, u.String()
}

// Arm cuts off the next batch that matches c, and returns a channel
// closed once it was.
func (p *Proxy) Arm(c Cut) <-chan struct{} {
	c.done = make(chan struct{})
	p.mu.Lock()
	p.cut = &c
	p.mu.Unlock()
	return c.done
}

func (p *Proxy) serve() {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		server, err := net.Dial("tcp", p.target)
		if err != nil {
			client.Close()
			continue
		}
		l := &link{}
		go answer(client, server, l)
		go p.forward(client, server, l)
	}
}

// link is the state one proxied connection's two directions share.
type link struct {
	muted     atomic.Bool  // the server's answers are dropped
	heldUntil atomic.Int64 // the server's answers wait until then (Unix nanoseconds)
}

// answer copies what the server sends to the client until muted, each
// answer no earlier than the link's hold allows.
func answer(client, server net.Conn, l *link) {
	defer client.Close()
	buf := make([]byte, 64<<10)
	for {
		n, err := server.Read(buf)
		if wait := time.Until(time.Unix(0, l.heldUntil.Load())); n > 0 && wait > 0 {
			time.Sleep(wait)
		}
		if n > 0 && !l.muted.Load() {
			if _, werr := client.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// forward copies what a client sends to the server, watching for the
// armed cut; once it is cut, the server's answers are dropped (muted).
func (p *Proxy) forward(client, server net.Conn, l *link) {
	defer server.Close()
	defer client.Close()
	st := &stream{stmts: map[string]string{}}
	buf := make([]byte, 64<<10)
	for {
		n, err := client.Read(buf)
		if n > 0 {
			c := p.take(st, buf[:n])
			if c != nil && c.Hold > 0 {
				l.heldUntil.Store(time.Now().Add(c.Hold).UnixNano())
				close(c.done)
				c = nil
			}
			if c != nil {
				l.muted.Store(true)
				if c.Forward {
					batch := append([]byte(nil), buf[:n]...)
					batch = append(batch, readRest(client, buf)...)
					client.Close() // the answer can no longer reach the client
					time.Sleep(c.Delay)
					server.Write(batch)
				}
				client.Close()
				time.Sleep(200 * time.Millisecond)
				close(c.done)
				return
			}
			if _, werr := server.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// take disarms and returns the armed cut if chunk, read next from the
// client, sends a COMMIT of a transaction in which the cut's marker was
// sent.
func (p *Proxy) take(st *stream, chunk []byte) *Cut {
	p.mu.Lock()
	defer p.mu.Unlock()
	marker := ""
	if p.cut != nil {
		marker = p.cut.Marker
	}
	if !st.read(chunk, marker) || p.cut == nil {
		return nil
	}
	c := p.cut
	p.cut = nil
	return c
}

// stream follows the messages of PostgreSQL's protocol a client sends:
// the statements it prepares (Parse), so that it knows when one of them,
// bound and run later by name, is a COMMIT; and whether a marker was sent
// since the last COMMIT.
type stream struct {
	started bool // the start-up message, which has no type byte, is past
	pending []byte
	stmts   map[string]string // prepared statement name -> query
	marked  bool
}

// read takes the next bytes from the client and reports whether they
// commit a transaction in which marker was sent.
func (st *stream) read(b []byte, marker string) bool {
	st.pending = append(st.pending, b...)
	commits := false
	for {
		msg, typ, ok := st.next()
		if !ok {
			return commits
		}
		if marker != "" && bytes.Contains(msg, []byte(marker)) {
			st.marked = true
		}
		if st.isCommit(typ, msg) {
			commits = commits || st.marked
			st.marked = false
		}
	}
}

// next cuts the next whole message from pending: its body and type (0
// for the start-up message).
func (st *stream) next() ([]byte, byte, bool) {
	head := 5
	if !st.started {
		head = 4
	}
	if len(st.pending) < head {
		return nil, 0, false
	}
	size := int(binary.BigEndian.Uint32(st.pending[head-4 : head]))
	end := head - 4 + size
	if len(st.pending) < end {
		return nil, 0, false
	}
	var typ byte
	if st.started {
		typ = st.pending[0]
	}
	st.started = true
	msg := append([]byte(nil), st.pending[head:end]...)
	st.pending = st.pending[end:]
	return msg, typ, true
}

// isCommit reports whether a message runs COMMIT: a simple query, or a
// Bind of a statement prepared as COMMIT; it remembers what Parse
// prepares.
func (st *stream) isCommit(typ byte, msg []byte) bool {
	fields := bytes.Split(msg, []byte{0})
	switch {
	case typ == 'Q' && len(fields) > 0:
		return isCommitQuery(fields[0])
	case typ == 'P' && len(fields) > 1:
		st.stmts[string(fields[0])] = string(fields[1])
	case typ == 'B' && len(fields) > 1:
		return isCommitQuery([]byte(st.stmts[string(fields[1])]))
	}
	return false
}

func isCommitQuery(q []byte) bool {
	return bytes.EqualFold(bytes.TrimSpace(q), []byte("COMMIT"))
}

// readRest reads what is left of the client's batch, sent with the part
// already read: what arrives within a moment.
func readRest(client net.Conn, buf []byte) []byte {
	var rest []byte
	client.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	for {
		n, err := client.Read(buf)
		rest = append(rest, buf[:n]...)
		if err != nil {
			return rest
		}
	}
}
