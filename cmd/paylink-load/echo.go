package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// runEchoServer serves the trivial handler the load is compared with: it
// answers every request 200 with the request's own body, through the same
// net/http server paylink uses, so the ratio of the two request rates is
// what paylink's own work costs.
func runEchoServer(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("paylink-load echo-server", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:0", "listen address")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("echo server: %w", err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(echo), ReadHeaderTimeout: 10 * time.Second}
	stop := context.AfterFunc(ctx, func() { srv.Close() })
	defer stop()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("echo server: %w", err)
	}
	return nil
}

func echo(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	io.Copy(w, r.Body)
}
