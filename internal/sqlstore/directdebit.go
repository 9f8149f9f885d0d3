package sqlstore

import (
	"time"
)

// ReleaseRefunded takes a rejected refund's reservation off the refunded
// total; it never goes below zero.
func (t *tx) ReleaseRefunded(reference string, amount int64, now time.Time) error {
	return t.execOne("release refunded", `UPDATE transactions SET refunded = refunded - $1, version = version + 1, updated_at = $2
		WHERE reference = $3 AND refunded >= $4`,
		amount, now.UnixMicro(), reference, amount)
}
