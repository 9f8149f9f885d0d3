package sqlstore

import (
	"github.com/paylink/paylink"
)

// Card lifecycle (issue 3): the store side of 3-D Secure challenges and
// refund completion.

// TransactionByReference loads a transaction by reference, unscoped.
func (t *tx) TransactionByReference(reference string) (*paylink.Transaction, error) {
	tr, err := scanTransaction(t.q.QueryRowContext(t.ctx, `SELECT `+transactionColumns+`
		FROM transactions WHERE reference = $1`, reference))
	if err != nil {
		return nil, notFound("load transaction by reference", err)
	}
	return tr, nil
}

// UpdateRefund moves a refund out of status from (compare-and-set).
func (t *tx) UpdateRefund(r *paylink.Refund, from paylink.Status) error {
	details, err := toJSON(r.Details)
	if err != nil {
		return err
	}
	return t.execOne("update refund", `UPDATE refunds SET status = $1, details = $2 WHERE reference = $3 AND status = $4`,
		string(r.Status), details, r.Reference, string(from))
}
