// Command paylink-load drives card purchases against a running paylink
// over HTTP and reports throughput and latency. Each purchase is two
// requests (a transaction token, then the purchase), exactly as a
// merchant integration makes them.
//
//	paylink-load --url http://127.0.0.1:8080 --api-key pl_sk_... --company-token ... \
//	    --concurrency 64 --duration 20s
//
// Send load only to a paylink you run yourself on this machine.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"sync"
	"time"

	"github.com/paylink/paylink/client"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "paylink-load:", err)
		os.Exit(1)
	}
}

// config is the load to generate.
type config struct {
	url, apiKey, companyToken string
	concurrency               int
	duration                  time.Duration
	card                      string
}

func parse(args []string) (config, error) {
	var c config
	fs := flag.NewFlagSet("paylink-load", flag.ContinueOnError)
	fs.StringVar(&c.url, "url", "http://127.0.0.1:8080", "paylink base URL (loopback only)")
	fs.StringVar(&c.apiKey, "api-key", "", "merchant API key")
	fs.StringVar(&c.companyToken, "company-token", "", "merchant company token")
	fs.IntVar(&c.concurrency, "concurrency", 64, "concurrent clients")
	fs.DurationVar(&c.duration, "duration", 20*time.Second, "how long to run (at most 10m)")
	fs.StringVar(&c.card, "card", "4111111111111111", "test card number")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	switch {
	case c.apiKey == "" || c.companyToken == "":
		return c, errors.New("--api-key and --company-token are required")
	case c.concurrency < 1 || c.concurrency > 4096:
		return c, errors.New("--concurrency must be 1 to 4096")
	case c.duration <= 0 || c.duration > 10*time.Minute:
		return c, errors.New("--duration must be positive and at most 10m")
	}
	return c, nil
}

// result is what one client saw.
type result struct {
	latencies []time.Duration
	errors    int
}

func run(ctx context.Context, args []string, out io.Writer) error {
	c, err := parse(args)
	if err != nil {
		return err
	}
	transport := &http.Transport{MaxIdleConnsPerHost: c.concurrency, MaxConnsPerHost: c.concurrency}
	api := client.New(c.url, c.apiKey, c.companyToken, client.WithHTTPClient(&http.Client{Transport: transport, Timeout: 30 * time.Second}))
	ctx, cancel := context.WithTimeout(ctx, c.duration)
	defer cancel()
	results := make([]result, c.concurrency)
	start := time.Now()
	var wg sync.WaitGroup
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = drive(ctx, api, c.card)
		}()
	}
	wg.Wait()
	report(out, results, time.Since(start), c)
	return nil
}

// drive makes purchases until ctx ends.
func drive(ctx context.Context, api *client.Client, card string) result {
	var r result
	expiry := fmt.Sprint(time.Now().Year()%100 + 3)
	for ctx.Err() == nil {
		t0 := time.Now()
		res, err := api.Purchase(ctx, client.PurchaseRequest{
			Customer: client.Customer{IPAddress: "203.0.113.7", Timezone: "UTC"},
			Card:     &client.Card{Number: card, ExpiryMonth: "12", ExpiryYear: expiry, CVC: "123"},
			Purchase: client.PurchaseDetails{Amount: "10.00", Currency: "AUD", ApplySurcharge: true},
		})
		switch {
		case ctx.Err() != nil:
		case err != nil || res.Purchase.Status != "APPROVED":
			r.errors++
		default:
			r.latencies = append(r.latencies, time.Since(t0))
		}
	}
	return r
}

func report(out io.Writer, results []result, elapsed time.Duration, c config) {
	var all []time.Duration
	errs := 0
	for _, r := range results {
		all = append(all, r.latencies...)
		errs += r.errors
	}
	slices.Sort(all)
	pct := func(p float64) time.Duration {
		if len(all) == 0 {
			return 0
		}
		return all[int(float64(len(all)-1)*p)]
	}
	fmt.Fprintf(out, "concurrency %d, %s: %d approved purchases (%d errors)\n", c.concurrency, elapsed.Round(time.Millisecond), len(all), errs)
	fmt.Fprintf(out, "throughput  %.0f purchases/s (%.0f requests/s)\n", float64(len(all))/elapsed.Seconds(), 2*float64(len(all))/elapsed.Seconds())
	fmt.Fprintf(out, "latency     p50 %s  p90 %s  p99 %s  max %s (token + purchase)\n",
		pct(0.5).Round(time.Microsecond), pct(0.9).Round(time.Microsecond), pct(0.99).Round(time.Microsecond), pct(1).Round(time.Microsecond))
}
