package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/sqlstore"
)

// Audit: the operator's export of the audit log (docs/operations.md).

// runAudit runs the audit log commands.
func runAudit(ctx context.Context, env environment, args []string) error {
	return runSubcommand(ctx, env, "audit", []subcommand{
		{"export", "print the audit log as JSON lines (--since 24h|RFC 3339)", runAuditExport},
	}, args)
}

// auditPage is how many rows one query of the export reads.
const auditPage = 500

func runAuditExport(ctx context.Context, env environment, args []string) error {
	f := newFlags("audit export", env)
	dsn := f.str("db", defaultDB, "database DSN")
	sinceFlag := f.String("since", "", "export rows from this long ago (24h, 90m, 30d) or since this RFC 3339 time (required)")
	mid := f.String("merchant", "", "only this merchant's rows (mid)")
	if err := f.parse(args); err != nil {
		return ignoreHelp(err)
	}
	since, err := parseSince(*sinceFlag, time.Now())
	if err != nil {
		return fmt.Errorf("audit export: --since: %w", err)
	}
	log := newLogger(env.stderr)
	st, err := openExistingStore(ctx, *dsn, sqlstore.WithLogger(log))
	if err != nil {
		return err
	}
	defer st.Close()
	// Reading the log needs no master key: no vault, so none is created.
	svc, err := paylink.NewService(paylink.Config{}, paylink.Deps{Store: st, Logger: log})
	if err != nil {
		return err
	}
	defer closeService(svc, log)
	return exportAudit(ctx, svc, paylink.AuditFilter{Since: since, MerchantID: *mid, Limit: auditPage}, bufio.NewWriter(env.stdout))
}

// exportAudit writes every row matching f as one JSON object per line,
// reading the log a page at a time. What it wrote is flushed whatever
// ends it, so that an export cut short (Ctrl-C, the database gone) ends
// with a whole line: w writes out whenever its buffer fills, mid-line.
func exportAudit(ctx context.Context, svc *paylink.Service, f paylink.AuditFilter, w *bufio.Writer) (err error) {
	defer func() {
		if ferr := w.Flush(); err == nil && ferr != nil {
			err = fmt.Errorf("write audit rows: %w", ferr)
		}
	}()
	enc := json.NewEncoder(w)
	for {
		rows, err := svc.AuditLog(ctx, f)
		if err != nil {
			return err
		}
		for _, e := range rows {
			if err := enc.Encode(auditLine(e)); err != nil {
				return fmt.Errorf("write audit row: %w", err)
			}
			f.AfterID = e.ID
		}
		if len(rows) < f.Limit {
			return nil
		}
	}
}

// auditJSON is the export's stable line format: these field names are a
// published contract (docs/operations.md).
type auditJSON struct {
	ID         int64  `json:"id"`
	Time       string `json:"time"` // RFC 3339, UTC, microseconds
	MerchantID string `json:"merchant_id"`
	ActorKind  string `json:"actor_kind"`
	ActorID    string `json:"actor_id"`
	SourceIP   string `json:"source_ip"`
	RequestID  string `json:"request_id"`
	Action     string `json:"action"`
	ObjectType string `json:"object_type"`
	ObjectID   string `json:"object_id"`
	Outcome    string `json:"outcome"`
	Detail     string `json:"detail"`
}

// auditTimeFormat is RFC 3339 with a fixed six-digit fraction, so that
// lines sort by time as text.
const auditTimeFormat = "2006-01-02T15:04:05.000000Z07:00"

func auditLine(e *paylink.AuditEvent) auditJSON {
	return auditJSON{ID: e.ID, Time: e.At.UTC().Format(auditTimeFormat), MerchantID: e.MerchantID,
		ActorKind: string(e.ActorKind), ActorID: e.ActorID, SourceIP: e.SourceIP, RequestID: e.RequestID,
		Action: e.Action, ObjectType: e.ObjectType, ObjectID: e.ObjectID, Outcome: string(e.Outcome), Detail: e.Detail}
}

// parseSince reads --since: a positive duration before now (Go syntax, or
// whole days as "30d"), or an RFC 3339 time.
func parseSince(v string, now time.Time) (time.Time, error) {
	if v == "" {
		return time.Time{}, errors.New("is required: a duration such as 24h or 30d, or an RFC 3339 time such as 2026-11-01T00:00:00Z")
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	d, err := time.ParseDuration(v)
	if days, ok := strings.CutSuffix(v, "d"); ok {
		n, nerr := strconv.Atoi(days)
		d, err = time.Duration(n)*24*time.Hour, nerr
	}
	if err != nil || d <= 0 {
		return time.Time{}, fmt.Errorf("%q is neither a positive duration (24h, 90m, 30d) nor an RFC 3339 time (2026-11-01T00:00:00Z)", v)
	}
	return now.Add(-d), nil
}
