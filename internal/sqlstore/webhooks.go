package sqlstore

import (
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/paylink/paylink"
)

// Webhooks: the outbox rows (webhook_deliveries) and the delivery log
// (webhook_attempts) of migration 0003.

const deliveryColumns = `id, merchant_id, reference, event_status, target, url, payload, state, attempts,
	next_attempt_at, lease_token, lease_until, last_status_code, last_error, created_at, updated_at, delivered_at, held_for`

func scanDelivery(row interface{ Scan(...any) error }) (*paylink.WebhookDelivery, error) {
	var d paylink.WebhookDelivery
	var payload, status string
	var next, created, updated int64
	var lease, delivered sql.NullInt64
	err := row.Scan(&d.ID, &d.MerchantID, &d.Reference, &status, &d.Target, &d.URL, &payload, &d.State, &d.Attempts,
		&next, &d.LeaseToken, &lease, &d.LastStatusCode, &d.LastError, &created, &updated, &delivered, &d.HeldFor)
	if err != nil {
		return nil, err
	}
	d.EventStatus, d.Payload = paylink.Status(status), []byte(payload)
	d.NextAttemptAt, d.CreatedAt, d.UpdatedAt = time.UnixMicro(next).UTC(), time.UnixMicro(created).UTC(), time.UnixMicro(updated).UTC()
	d.LeaseUntil, d.DeliveredAt = fromMicros(lease), fromMicros(delivered)
	return &d, nil
}

// scanDeliveries reads every row of a deliveries query.
func scanDeliveries(rows *sql.Rows, op string) ([]*paylink.WebhookDelivery, error) {
	defer rows.Close()
	var out []*paylink.WebhookDelivery
	for rows.Next() {
		d, err := scanDelivery(rows)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return out, nil
}

// CreateWebhookDelivery inserts an outbox row.
func (t *tx) CreateWebhookDelivery(d *paylink.WebhookDelivery) error {
	return t.execLater("insert webhook delivery", `INSERT INTO webhook_deliveries (`+deliveryColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)`,
		d.ID, d.MerchantID, d.Reference, string(d.EventStatus), d.Target, d.URL, string(d.Payload), d.State, d.Attempts,
		d.NextAttemptAt.UnixMicro(), d.LeaseToken, micros(d.LeaseUntil), d.LastStatusCode, d.LastError,
		d.CreatedAt.UnixMicro(), d.UpdatedAt.UnixMicro(), micros(d.DeliveredAt), d.HeldFor)
}

// ClaimWebhookDeliveries leases due rows (claimQuery).
func (t *tx) ClaimWebhookDeliveries(now, leaseUntil time.Time, token string, limit int) ([]*paylink.WebhookDelivery, error) {
	rows, err := t.q.QueryContext(t.ctx, claimQuery(t.postgres), token, leaseUntil.UnixMicro(), now.UnixMicro(), limit)
	if err != nil {
		return nil, fmt.Errorf("claim webhook deliveries: %w", err)
	}
	return scanDeliveries(rows, "claim webhook deliveries")
}

// claimQuery is the claim of up to $4 rows due at $3 on each engine.
func claimQuery(postgres bool) string {
	if postgres {
		return claimPostgres
	}
	return claimSQLite
}

// The claims. The inner SELECT chooses the due rows. On PostgreSQL it
// is a materialized CTE that locks them, skipping rows another instance
// is claiming at that moment rather than waiting for them: a row locked
// after another transaction changed it is checked against the WHERE
// again, so the claim stays a compare-and-set. (As `id IN (SELECT ...
// LIMIT n FOR UPDATE SKIP LOCKED)` the planner could run the subquery
// more than once, and one claim of 5 rows leased 20: the dispatcher then
// started more attempts than it has slots.) On SQLite the whole
// statement runs under the database's write lock, so nothing changes
// between the SELECT and the UPDATE; repeating the conditions there made
// SQLite walk every due row through webhook_deliveries_due instead of
// looking the chosen ids up by primary key: with a backlog of 13,000
// deliveries, claiming was 42% of the server's CPU (docs/performance.md).
//
// A state is named as a literal, not a placeholder, wherever a query is
// to read webhook_deliveries_due or webhook_deliveries_failed: a planner
// uses a partial index only for a query that repeats its WHERE clause
// (migration 0024).
const (
	pending     = `state = '` + paylink.DeliveryPending + `'`
	failed      = `state = '` + paylink.DeliveryFailed + `'`
	due         = pending + ` AND next_attempt_at <= $3 AND (lease_until IS NULL OR lease_until <= $3)`
	chooseDue   = `SELECT id FROM webhook_deliveries WHERE ` + due + ` ORDER BY next_attempt_at LIMIT $4`
	claimSQLite = `UPDATE webhook_deliveries SET lease_token = $1, lease_until = $2
		WHERE id IN (` + chooseDue + `) RETURNING ` + deliveryColumns
	claimPostgres = `WITH chosen(claimed) AS MATERIALIZED (` + chooseDue + ` FOR UPDATE SKIP LOCKED)
		UPDATE webhook_deliveries SET lease_token = $1, lease_until = $2
		FROM chosen WHERE id = chosen.claimed RETURNING ` + deliveryColumns
)

// batchRows bounds the rows of one multi-row statement (its
// placeholders stay far below SQLite's limit, and the distinct statement
// texts that the statement caches keep stay few).
const batchRows = 64

// FinishWebhookAttempts records attempts' results, batchRows rows per
// statement, and returns the ids of the rows whose lease held.
func (t *tx) FinishWebhookAttempts(fs []paylink.WebhookFinish) ([]string, error) {
	var ids []string
	for len(fs) > 0 {
		n := min(len(fs), batchRows)
		got, err := t.finishBatch(fs[:n])
		if err != nil {
			return nil, fmt.Errorf("finish webhook attempts: %w", err)
		}
		ids, fs = append(ids, got...), fs[n:]
	}
	return ids, nil
}

// finishColumns are the values finishQuery takes per row, with their types.
var finishColumns = []string{"TEXT", "TEXT", "TEXT", "BIGINT", "BIGINT", "BIGINT", "TEXT", "BIGINT", "BIGINT", "TEXT"}

// finishBatch is one UPDATE of the rows of fs that are still pending and
// leased with their tokens; it returns their ids.
func (t *tx) finishBatch(fs []paylink.WebhookFinish) ([]string, error) {
	args := make([]any, 0, len(fs)*len(finishColumns)+1)
	for _, f := range fs {
		d := f.Delivery
		args = append(args, d.ID, f.LeaseToken, d.State, d.Attempts, d.NextAttemptAt.UnixMicro(), d.LastStatusCode,
			d.LastError, d.UpdatedAt.UnixMicro(), micros(d.DeliveredAt), d.HeldFor)
	}
	args = append(args, paylink.DeliveryPending)
	rows, err := t.q.QueryContext(t.ctx, finishQuery(len(fs)), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	ids := make([]string, 0, len(fs))
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// finishQuery updates n deliveries from a VALUES list, each only if it
// is still pending (the last placeholder) and leased with its token.
func finishQuery(n int) string {
	var b strings.Builder
	b.WriteString(`WITH f(id, token, state, attempts, next_attempt_at, last_status_code, last_error, updated_at, delivered_at, held_for)
		AS (VALUES `)
	writeRows(&b, n, len(finishColumns), finishColumns)
	b.WriteString(`)
		UPDATE webhook_deliveries SET state = f.state, attempts = f.attempts, next_attempt_at = f.next_attempt_at,
			lease_token = '', lease_until = NULL, last_status_code = f.last_status_code, last_error = f.last_error,
			updated_at = f.updated_at, delivered_at = f.delivered_at, held_for = f.held_for
		FROM f WHERE webhook_deliveries.id = f.id AND webhook_deliveries.lease_token = f.token
			AND webhook_deliveries.state = $`)
	b.WriteString(strconv.Itoa(n*len(finishColumns) + 1))
	b.WriteString(` RETURNING webhook_deliveries.id`)
	return b.String()
}

// AddWebhookAttempts appends attempts to the delivery log, batchRows rows
// per INSERT (held back on PostgreSQL: see execLater).
func (t *tx) AddWebhookAttempts(as []*paylink.WebhookAttempt) error {
	for len(as) > 0 {
		n := min(len(as), batchRows)
		args := make([]any, 0, n*attemptValues)
		for _, a := range as[:n] {
			args = append(args, a.DeliveryID, a.Attempt, a.URL, a.StatusCode, a.Latency.Microseconds(), a.Error,
				a.StartedAt.UnixMicro(), a.ResponseExcerpt)
		}
		var b strings.Builder
		b.WriteString(`INSERT INTO webhook_attempts (` + attemptColumns + `) VALUES `)
		writeRows(&b, n, attemptValues, nil)
		if err := t.execLater("insert webhook attempts", b.String(), args...); err != nil {
			return err
		}
		as = as[n:]
	}
	return nil
}

// ResendWebhookDelivery makes a finished row due again.
func (t *tx) ResendWebhookDelivery(id string, now time.Time) error {
	err := t.execOne("resend webhook delivery", `UPDATE webhook_deliveries SET state = $1, next_attempt_at = $2,
		updated_at = $3 WHERE id = $4 AND state <> $5`,
		paylink.DeliveryPending, now.UnixMicro(), now.UnixMicro(), id, paylink.DeliveryPending)
	if errors.Is(err, paylink.ErrConflict) {
		if _, lerr := t.WebhookDelivery(id); lerr != nil {
			return lerr
		}
	}
	return err
}

// ReleaseHeldWebhookDeliveries makes up to limit deliveries held for
// receiver due at at, no longer held, and returns how many it released.
func (t *tx) ReleaseHeldWebhookDeliveries(receiver string, limit int, at time.Time) (int, error) {
	n, err := t.moveHeld("release held webhook deliveries", releaseHeldQuery, receiver, limit, at)
	return int(n), err
}

// ProbeHeldWebhookDelivery makes one delivery held for receiver due at
// at, still held, and reports whether there was one.
func (t *tx) ProbeHeldWebhookDelivery(receiver string, at time.Time) (bool, error) {
	n, err := t.moveHeld("probe held webhook delivery", probeHeldQuery, receiver, 1, at)
	return n > 0, err
}

// moveHeld runs a release or probe query (chooseHeld) and returns the
// rows it changed.
func (t *tx) moveHeld(op, query, receiver string, limit int, at time.Time) (int64, error) {
	res, err := t.exec(query, at.UnixMicro(), limit, receiver)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", op, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("%s: %w", op, err)
	}
	return n, nil
}

// HeldWebhookReceivers lists the receivers some pending delivery is held
// for.
func (t *tx) HeldWebhookReceivers() ([]string, error) {
	rows, err := t.q.QueryContext(t.ctx, heldReceiversQuery)
	if err != nil {
		return nil, fmt.Errorf("held webhook receivers: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var r string
		if err := rows.Scan(&r); err != nil {
			return nil, fmt.Errorf("held webhook receivers: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// The queries of held rows read webhook_deliveries_held alone: the held
// condition is a literal, the index's WHERE (migration 0033), so that
// the planners use the partial index. They count pending rows alone: a
// delivered or failed row can still carry a mark (a binary older than
// migration 0032 finished it during a rolling upgrade), and it is held
// for no one.
// A release or a probe takes up to $2 rows held for receiver $3 and not
// leased (a held row being tried is finished by its attempt), oldest
// due first, makes them due at $1, and the release also ends their
// hold; the outer WHERE repeats the inner one, so that on PostgreSQL a
// row another instance released meanwhile is not written again.
const (
	held               = pending + ` AND held_for <> ''`
	heldFor            = held + ` AND held_for = $3 AND lease_token = ''`
	chooseHeld         = `id IN (SELECT id FROM webhook_deliveries WHERE ` + heldFor + ` ORDER BY next_attempt_at, id LIMIT $2) AND ` + heldFor
	releaseHeldQuery   = `UPDATE webhook_deliveries SET held_for = '', next_attempt_at = $1, updated_at = $1 WHERE ` + chooseHeld
	probeHeldQuery     = `UPDATE webhook_deliveries SET next_attempt_at = $1, updated_at = $1 WHERE ` + chooseHeld
	heldReceiversQuery = `SELECT DISTINCT held_for FROM webhook_deliveries WHERE ` + held
)

// WebhookDelivery loads one delivery.
func (t *tx) WebhookDelivery(id string) (*paylink.WebhookDelivery, error) {
	d, err := scanDelivery(t.q.QueryRowContext(t.ctx, `SELECT `+deliveryColumns+` FROM webhook_deliveries WHERE id = $1`, id))
	if err != nil {
		return nil, notFound("load webhook delivery", err)
	}
	return d, nil
}

// ListWebhookDeliveries lists deliveries newest first (deliveriesQuery).
func (t *tx) ListWebhookDeliveries(f paylink.WebhookFilter) ([]*paylink.WebhookDelivery, error) {
	query, args := deliveriesQuery(f)
	rows, err := t.q.QueryContext(t.ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list webhook deliveries: %w", err)
	}
	return scanDeliveries(rows, "list webhook deliveries")
}

// deliveriesQuery is ListWebhookDeliveries' query. Only the given filters
// become conditions, so each query can use its index:
// webhook_deliveries_merchant_created for a merchant's deliveries,
// webhook_deliveries_failed for its failed ones and
// webhook_deliveries_merchant_reference for a payment's.
func deliveriesQuery(f paylink.WebhookFilter) (string, []any) {
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	var c conds
	if f.MerchantID != "" {
		c.add("merchant_id = ?", f.MerchantID)
	}
	if f.Reference != "" {
		c.add("reference = ?", f.Reference)
	}
	if f.FailedOnly {
		c.add(failed)
	}
	if !f.BeforeCreated.IsZero() {
		c.add("(created_at < ? OR (created_at = ? AND id < ?))", f.BeforeCreated.UnixMicro(), f.BeforeCreated.UnixMicro(), f.BeforeID)
	}
	return `SELECT ` + deliveryColumns + ` FROM webhook_deliveries` + c.where() + ` ORDER BY created_at DESC, id DESC LIMIT ` + c.arg(limit), c.args
}

const attemptColumns = `delivery_id, attempt, url, status_code, latency_us, error, started_at, response_excerpt`

// attemptValues is how many values attemptColumns names.
const attemptValues = 8

// WebhookAttempts lists the deliveries' attempts, oldest first.
func (t *tx) WebhookAttempts(deliveryIDs ...string) ([]*paylink.WebhookAttempt, error) {
	if len(deliveryIDs) == 0 {
		return nil, nil
	}
	var c conds
	in(&c, "delivery_id", deliveryIDs)
	rows, err := t.q.QueryContext(t.ctx, `SELECT `+attemptColumns+` FROM webhook_attempts`+c.where()+` ORDER BY id`, c.args...)
	if err != nil {
		return nil, fmt.Errorf("webhook attempts: %w", err)
	}
	defer rows.Close()
	var out []*paylink.WebhookAttempt
	for rows.Next() {
		var a paylink.WebhookAttempt
		var latency, started int64
		if err := rows.Scan(&a.DeliveryID, &a.Attempt, &a.URL, &a.StatusCode, &latency, &a.Error, &started, &a.ResponseExcerpt); err != nil {
			return nil, fmt.Errorf("webhook attempts: %w", err)
		}
		a.Latency, a.StartedAt = time.Duration(latency)*time.Microsecond, time.UnixMicro(started).UTC()
		out = append(out, &a)
	}
	return out, rows.Err()
}

// The outbox's counts read webhook_deliveries_due, and the held rows'
// count webhook_deliveries_held.
const (
	countDueQuery = `SELECT COUNT(*) FROM webhook_deliveries WHERE ` + pending + ` AND next_attempt_at <= $1`
	backlogQuery  = `SELECT COUNT(*), MIN(created_at), MIN(CASE WHEN held_for <> '' THEN NULL
			WHEN lease_until > next_attempt_at THEN lease_until ELSE next_attempt_at END),
		(SELECT COUNT(*) FROM webhook_deliveries WHERE ` + held + `)
		FROM webhook_deliveries WHERE ` + pending
)

// CountDueWebhookDeliveries counts pending rows due at now.
func (t *tx) CountDueWebhookDeliveries(now time.Time) (int, error) {
	var n int
	err := t.q.QueryRowContext(t.ctx, countDueQuery, now.UnixMicro()).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count due webhook deliveries: %w", err)
	}
	return n, nil
}

// WebhookBacklog counts pending rows and finds the oldest one's creation
// and the earliest time one not held is due: its next attempt, or its
// lease's end when an attempt holds it longer (the claim's due).
func (t *tx) WebhookBacklog() (paylink.WebhookBacklog, error) {
	var b paylink.WebhookBacklog
	var oldest, firstDue sql.NullInt64
	err := t.q.QueryRowContext(t.ctx, backlogQuery).Scan(&b.Pending, &oldest, &firstDue, &b.Held)
	if err != nil {
		return paylink.WebhookBacklog{}, fmt.Errorf("webhook backlog: %w", err)
	}
	b.Oldest, b.FirstDue = fromMicros(oldest), fromMicros(firstDue)
	return b, nil
}
