package pgtest

import (
	"bytes"
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

// Cut is an armed fault: the next batch a client sends that holds COMMIT
// and Marker (a value bound in the transaction, such as an invoice
// number) is cut off. With Forward the batch reaches the server, which
// commits, and only its answer is lost; without it, the server never
// sees the batch and rolls the transaction back.
type Cut struct {
	Marker  string
	Forward bool
	// Delay holds the batch back before forwarding it: the client has
	// lost its connection before the server has even read its COMMIT.
	Delay time.Duration
	done  chan struct{}
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
		var muted atomic.Bool
		go answer(client, server, &muted)
		go p.forward(client, server, &muted)
	}
}

// answer copies what the server sends to the client until muted.
func answer(client, server net.Conn, muted *atomic.Bool) {
	defer client.Close()
	buf := make([]byte, 64<<10)
	for {
		n, err := server.Read(buf)
		if n > 0 && !muted.Load() {
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
func (p *Proxy) forward(client, server net.Conn, muted *atomic.Bool) {
	defer server.Close()
	defer client.Close()
	buf := make([]byte, 64<<10)
	for {
		n, err := client.Read(buf)
		if n > 0 {
			if c := p.take(buf[:n]); c != nil {
				muted.Store(true)
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

// take disarms and returns the armed cut if b matches it.
func (p *Proxy) take(b []byte) *Cut {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.cut
	if c == nil || !bytes.Contains(b, []byte("COMMIT")) || !bytes.Contains(b, []byte(c.Marker)) {
		return nil
	}
	p.cut = nil
	return c
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
