package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// receiver is the merchant's webhook endpoint when the tool receives the
// webhooks itself (--webhook-receiver): it answers every POST 200 and
// counts them, so that a run reports how fast paylink's outbox is
// drained beside how fast payments are made. It runs in the tool's
// process, so its CPU counts as the generator's. One that hangs
// (--webhook-receiver-hangs) counts the attempts that arrive and answers
// none until it is released.
type receiver struct {
	srv      *http.Server
	url      string
	hits     atomic.Int64
	served   chan error    // Serve's result
	hang     chan struct{} // closed by release; nil for a receiver that answers
	released sync.Once
}

func startReceiver(hangs bool) (*receiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("webhook receiver: %w", err)
	}
	r := &receiver{url: "http://" + ln.Addr().String() + "/hook", served: make(chan error, 1)}
	if hangs {
		r.hang = make(chan struct{})
	}
	r.srv = &http.Server{Handler: http.HandlerFunc(r.serveHTTP), ReadHeaderTimeout: 10 * time.Second}
	go func() { r.served <- r.srv.Serve(ln) }()
	return r, nil
}

func (r *receiver) serveHTTP(w http.ResponseWriter, req *http.Request) {
	io.Copy(io.Discard, req.Body)
	if req.Method == http.MethodPost {
		r.hits.Add(1)
	}
	if r.hang != nil {
		<-r.hang
	}
}

// release makes a receiver that hangs answer the attempts it holds and
// those to come; nothing for one that answers, or for none.
func (r *receiver) release() {
	if r == nil || r.hang == nil {
		return
	}
	r.released.Do(func() { close(r.hang) })
}

// received counts the webhooks received so far; zero for no receiver.
func (r *receiver) received() int64 {
	if r == nil {
		return 0
	}
	return r.hits.Load()
}

// stop stops the receiver and returns why it had stopped serving, if
// it had.
func (r *receiver) stop() error {
	r.release()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r.srv.Shutdown(ctx)
	if err := <-r.served; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("webhook receiver: %w", err)
	}
	return nil
}
