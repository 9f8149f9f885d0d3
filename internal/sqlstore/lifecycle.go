package sqlstore

import (
	"github.com/paylink/paylink"
)

// Card lifecycle: the store side of 3-D Secure challenges and
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
