package paylink

import (
	"context"
	"fmt"
	"time"
)

// CardRetention is how long the sealed number of a card that can no
// longer be charged is kept: a spent single-use card (including the cards
// vaulted only for one purchase) or an invalidated token. It outlives
// every step that may still need the number: a 3-D Secure attempt (at
// most MaxAuthenticationTimeout, which is derived from it) and the
// recovery of interrupted work (ProcessingTimeout).
const CardRetention = time.Hour

// wipeBatch is how many cards one transaction of WipeSpentCards wipes.
const wipeBatch = 500

// WipeSpentCards erases the sealed card numbers of cards that can no
// longer be charged once CardRetention has passed; the masked number,
// brand and fingerprint stay for look-ups and reconciliation. It wipes
// every such card, wipeBatch to a transaction, and returns how many. The
// erase is idempotent, so several instances may run it.
func (s *Service) WipeSpentCards(ctx context.Context) (int64, error) {
	before := s.now().Add(-CardRetention)
	n, err := drain(ctx, wipeBatch, func(ctx context.Context) (int, int, error) {
		var n int64
		err := s.store.Update(ctx, func(tx Tx) error {
			var err error
			n, err = tx.WipeSpentCards(before, wipeBatch)
			return err
		})
		return int(n), int(n), err
	})
	if err != nil {
		return int64(n), fmt.Errorf("wipe spent cards: %w", err)
	}
	return int64(n), nil
}
