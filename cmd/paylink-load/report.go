package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"
)

// report is everything one run measured; --json prints it as is.
type report struct {
	Clients    int              `json:"clients"`
	Warmup     string           `json:"warmup,omitempty"`
	Duration   string           `json:"duration,omitempty"`
	Instances  int              `json:"instances"`
	Engine     string           `json:"engine,omitempty"` // when the tool started paylink
	StartupMS  []float64        `json:"startup_to_ready_ms,omitempty"`
	Scenarios  []scenarioResult `json:"scenarios,omitempty"`
	Rows       rowScaling       `json:"row_scaling,omitzero"`
	PeakRSSMiB []float64        `json:"server_peak_rss_mib,omitempty"` // per paylink process
}

// scenarioResult is one scenario on paylink and on the echo server.
type scenarioResult struct {
	Name    string   `json:"scenario"`
	Paylink measure  `json:"paylink,omitzero"`
	Echo    *measure `json:"echo,omitempty"`
	// EchoRatio is paylink's request rate over the echo server's.
	EchoRatio float64 `json:"request_rate_vs_echo,omitempty"`
}

// rowScaling is flows measured window by window as transactions are
// stored.
type rowScaling struct {
	Windows    []measure `json:"windows"`
	Errors     int       `json:"errors"`
	FirstError string    `json:"first_error,omitempty"`
}

// measure is what one measured window showed. CPU figures are per
// complete flow for the flow scenario, per request otherwise; server ones
// are absent when the server's process is unknown.
type measure struct {
	StoredFrom        int64              `json:"stored_transactions_from,omitempty"`
	StoredTo          int64              `json:"stored_transactions_to,omitempty"`
	Seconds           float64            `json:"seconds"`
	Flows             int64              `json:"flows,omitempty"`
	Requests          int                `json:"requests"`
	FlowsPerSecond    float64            `json:"flows_per_second,omitempty"`
	RequestsPerSecond float64            `json:"requests_per_second"`
	Errors            int                `json:"errors"`
	FirstError        string             `json:"first_error,omitempty"`
	Latency           map[string]latency `json:"latency_ms"`
	ServerCPUUS       float64            `json:"server_cpu_us_per_unit,omitempty"`
	ServerCores       float64            `json:"server_cpu_cores,omitempty"`
	DatabaseCPUUS     float64            `json:"database_cpu_us_per_unit,omitempty"`
	DatabaseCores     float64            `json:"database_cpu_cores,omitempty"`
	GeneratorCPUUS    float64            `json:"generator_cpu_us_per_unit"`
	GeneratorCores    float64            `json:"generator_cpu_cores"`
	CPUUnit           string             `json:"cpu_unit"` // flow or request
	CPUError          string             `json:"cpu_error,omitempty"`
	// Webhooks is what the tool's receiver got in the window
	// (--webhook-receiver).
	Webhooks *webhooks `json:"webhooks,omitempty"`
}

// webhooks counts the webhooks the tool received in a window.
type webhooks struct {
	Received  int64   `json:"received"`
	PerSecond float64 `json:"received_per_second"`
}

// latency is the spread of one kind of request, in milliseconds.
type latency struct {
	Count int     `json:"count"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P99   float64 `json:"p99"`
	Max   float64 `json:"max"`
}

func ms(d time.Duration) float64 { return math.Round(float64(d)/1e3) / 1e3 }

// latencyOf reads percentiles (nearest rank) from sorted durations.
func latencyOf(sorted []time.Duration) latency {
	at := func(p float64) float64 {
		return ms(sorted[max(0, int(math.Ceil(p*float64(len(sorted))))-1)])
	}
	return latency{Count: len(sorted), P50: at(0.5), P90: at(0.9), P99: at(0.99), Max: at(1)}
}

// measureOf turns a window into figures; serverKnown says whether its
// server CPU was sampled.
func measureOf(w window, rec record, serverKnown bool) measure {
	m := measure{Seconds: w.elapsed.Seconds(), Flows: w.flows, Errors: rec.errors, FirstError: rec.firstErr,
		Latency: map[string]latency{}}
	var all []time.Duration
	for k := range numKinds {
		if len(w.lat[k]) > 0 {
			m.Latency[k.String()] = latencyOf(w.lat[k])
			m.Requests += len(w.lat[k])
			all = append(all, w.lat[k]...)
		}
	}
	if len(m.Latency) > 1 {
		slices.Sort(all)
		m.Latency["all"] = latencyOf(all) // every request of the flow
	}
	if m.Seconds <= 0 {
		return m
	}
	m.RequestsPerSecond = float64(m.Requests) / m.Seconds
	m.FlowsPerSecond = float64(m.Flows) / m.Seconds
	if w.receiver {
		m.Webhooks = &webhooks{Received: w.webhooks, PerSecond: float64(w.webhooks) / m.Seconds}
	}
	units, unit := float64(m.Requests), "request"
	if m.Flows > 0 {
		units, unit = float64(m.Flows), "flow"
	}
	m.CPUUnit = unit
	if units == 0 {
		return m
	}
	m.GeneratorCPUUS = float64(w.genCPU.Microseconds()) / units
	m.GeneratorCores = w.genCPU.Seconds() / m.Seconds
	if w.cpuErr != nil {
		m.CPUError = w.cpuErr.Error()
		return m
	}
	if serverKnown {
		m.ServerCPUUS = float64(w.serverCPU.Microseconds()) / units
		m.ServerCores = w.serverCPU.Seconds() / m.Seconds
	}
	m.DatabaseCPUUS = float64(w.dbCPU.Microseconds()) / units // zero without --db-pid
	m.DatabaseCores = w.dbCPU.Seconds() / m.Seconds
	return m
}

func writeJSON(w io.Writer, r report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// writeText prints the report for a reader.
func writeText(w io.Writer, r report) {
	if len(r.Rows.Windows) > 0 {
		fmt.Fprintf(w, "%d clients, flows from an empty database (no warm-up) until %d are stored", r.Clients, r.Rows.Windows[len(r.Rows.Windows)-1].StoredTo)
	} else {
		fmt.Fprintf(w, "%d clients, %s warm-up, %s measured", r.Clients, r.Warmup, r.Duration)
	}
	if r.Engine != "" {
		fmt.Fprintf(w, ", paylink on %s started by paylink-load, %d instance(s)", r.Engine, r.Instances)
	}
	fmt.Fprintln(w)
	if len(r.StartupMS) > 0 {
		fmt.Fprintf(w, "start-up to ready: %s ms\n", joinFloats(r.StartupMS, "%.1f"))
	}
	for _, s := range r.Scenarios {
		if s.Name != "echo" {
			writeMeasure(w, s.Name+" on paylink", s.Paylink)
		}
		if s.Echo != nil {
			writeMeasure(w, s.Name+" on the echo server", *s.Echo)
		}
		if s.EchoRatio > 0 {
			fmt.Fprintf(w, "  request rate, paylink / echo: %.3f\n", s.EchoRatio)
		}
	}
	if len(r.Rows.Windows) > 0 {
		writeRows(w, r.Rows)
	}
	if len(r.PeakRSSMiB) > 0 {
		fmt.Fprintf(w, "server peak RSS: %s MiB\n", joinFloats(r.PeakRSSMiB, "%.1f"))
	}
}

func writeMeasure(w io.Writer, title string, m measure) {
	fmt.Fprintf(w, "%s: %.1f s", title, m.Seconds)
	if m.Flows > 0 {
		fmt.Fprintf(w, ", %d flows (%.0f/s)", m.Flows, m.FlowsPerSecond)
	}
	fmt.Fprintf(w, ", %d requests (%.0f/s), %d errors\n", m.Requests, m.RequestsPerSecond, m.Errors)
	if m.FirstError != "" {
		fmt.Fprintf(w, "  first error: %s\n", m.FirstError)
	}
	for _, k := range []string{"token", "purchase", "status", "page", "all"} {
		if l, ok := m.Latency[k]; ok {
			fmt.Fprintf(w, "  %-8s p50 %7.2f  p90 %7.2f  p99 %7.2f  max %7.2f ms  (%d)\n", k, l.P50, l.P90, l.P99, l.Max, l.Count)
		}
	}
	switch {
	case m.CPUError != "":
		fmt.Fprintf(w, "  server CPU: %s\n", m.CPUError)
	case m.ServerCores > 0:
		fmt.Fprintf(w, "  server CPU %.0f µs per %s (%.2f cores)", m.ServerCPUUS, m.CPUUnit, m.ServerCores)
	default:
		fmt.Fprintf(w, "  server CPU unknown (give --server-pid)")
	}
	if m.DatabaseCores > 0 {
		fmt.Fprintf(w, "; database CPU %.0f µs per %s (%.2f cores)", m.DatabaseCPUUS, m.CPUUnit, m.DatabaseCores)
	}
	fmt.Fprintf(w, "; generator CPU %.0f µs per %s (%.2f cores)\n", m.GeneratorCPUUS, m.CPUUnit, m.GeneratorCores)
	if h := m.Webhooks; h != nil {
		fmt.Fprintf(w, "  webhooks received: %d (%.0f/s)\n", h.Received, h.PerSecond)
	}
}

func writeRows(w io.Writer, r rowScaling) {
	fmt.Fprintf(w, "row scaling: %d errors\n", r.Errors)
	if r.FirstError != "" {
		fmt.Fprintf(w, "  first error: %s\n", r.FirstError)
	}
	fmt.Fprintf(w, "  %-22s %9s %12s %12s %14s\n", "stored transactions", "flows/s", "token p99", "purchase p99", "server µs/flow")
	for _, m := range r.Windows {
		fmt.Fprintf(w, "  %9d to %9d %9.0f %9.2f ms %9.2f ms %14.0f\n", m.StoredFrom, m.StoredTo, m.FlowsPerSecond,
			m.Latency["token"].P99, m.Latency["purchase"].P99, m.ServerCPUUS)
	}
}

func joinFloats(fs []float64, format string) string {
	s := make([]string, len(fs))
	for i, f := range fs {
		s[i] = fmt.Sprintf(format, f)
	}
	return strings.Join(s, ", ")
}
