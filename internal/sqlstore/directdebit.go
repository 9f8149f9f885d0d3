package sqlstore

import (
	"time"

	"github.com/paylink/paylink"
)

// UpdateRefund writes a refund's status and details if its status is
// still from (direct debit refunds settle a reserved refund).
func (t *tx) UpdateRefund(r *paylink.Refund, from paylink.Status) error {
	details, err := toJSON(r.Details)
	if err != nil {
		return err
	}
	return t.execOne("update refund", `UPDATE refunds SET status = $1, details = $2 WHERE reference = $3 AND status = $4`,
		string(r.Status), details, r.Reference, string(from))
}

// ReleaseRefunded takes a rejected refund's reservation off the refunded
// total; it never goes below zero.
func (t *tx) ReleaseRefunded(reference string, amount int64, now time.Time) error {
	return t.execOne("release refunded", `UPDATE transactions SET refunded = refunded - $1, version = version + 1, updated_at = $2
		WHERE reference = $3 AND refunded >= $4`,
		amount, now.UnixMicro(), reference, amount)
}
