package sqlstore

import (
	"database/sql"
	"fmt"
	"math"
	"time"

	"github.com/paylink/paylink"
)

// The audit log of migration 0010. There is deliberately no update or
// delete here: the table is append-only, and its triggers refuse both.

const auditColumns = `at, merchant_id, actor_kind, actor_id, source_ip, request_id, action, object_type, object_id, outcome, detail`

// AddAuditEvent appends an audit row and sets e.ID.
func (t *tx) AddAuditEvent(e *paylink.AuditEvent) error {
	err := t.q.QueryRowContext(t.ctx, `INSERT INTO audit_log (`+auditColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id`,
		e.At.UnixMicro(), e.MerchantID, string(e.ActorKind), e.ActorID, e.SourceIP, e.RequestID,
		e.Action, e.ObjectType, e.ObjectID, string(e.Outcome), e.Detail).Scan(&e.ID)
	if err != nil {
		return fmt.Errorf("insert audit event: %w", err)
	}
	return nil
}

// AuditEvents lists audit rows at or after f.Since with an id above
// f.AfterID, of f.MerchantID, f.ActorID and f.Action when set, in id
// order (descending and below f.BeforeID with f.NewestFirst).
func (t *tx) AuditEvents(f paylink.AuditFilter) ([]*paylink.AuditEvent, error) {
	order, before := "id", int64(math.MaxInt64)
	if f.NewestFirst {
		order = "id DESC"
		if f.BeforeID > 0 {
			before = f.BeforeID
		}
	}
	rows, err := t.q.QueryContext(t.ctx, `SELECT id, `+auditColumns+` FROM audit_log
		WHERE at >= $1 AND id > $2 AND id < $3 AND ($4 = '' OR merchant_id = $5) AND ($6 = '' OR actor_id = $7)
		AND ($8 = '' OR action = $9) ORDER BY `+order+` LIMIT $10`,
		f.Since.UnixMicro(), f.AfterID, before, f.MerchantID, f.MerchantID, f.ActorID, f.ActorID, f.Action, f.Action, f.Limit)
	if err != nil {
		return nil, fmt.Errorf("list audit events: %w", err)
	}
	return scanAuditEvents(rows)
}

// scanAuditEvents reads every row of an audit query.
func scanAuditEvents(rows *sql.Rows) ([]*paylink.AuditEvent, error) {
	defer rows.Close()
	var out []*paylink.AuditEvent
	for rows.Next() {
		var e paylink.AuditEvent
		var at int64
		var actor, outcome string
		if err := rows.Scan(&e.ID, &at, &e.MerchantID, &actor, &e.ActorID, &e.SourceIP, &e.RequestID,
			&e.Action, &e.ObjectType, &e.ObjectID, &outcome, &e.Detail); err != nil {
			return nil, fmt.Errorf("list audit events: %w", err)
		}
		e.At, e.ActorKind, e.Outcome = time.UnixMicro(at).UTC(), paylink.ActorKind(actor), paylink.AuditOutcome(outcome)
		out = append(out, &e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list audit events: %w", err)
	}
	return out, nil
}
