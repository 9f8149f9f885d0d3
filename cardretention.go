package paylink

import (
	"context"
	"fmt"
	"time"
)

// CardRetention is how long the sealed number of a card that can no
// longer be charged is kept: a spent single-use card (including the cards
// vaulted only for one purchase) or an invalidated token. It outlives
// every step that may still need the number: a 3-D Secure challenge
// (ChallengeTTL) and the recovery of interrupted work (ProcessingTimeout).
const CardRetention = time.Hour

// WipeSpentCards erases the sealed card numbers of cards that can no
// longer be charged once CardRetention has passed; the masked number,
// brand and fingerprint stay for look-ups and reconciliation. It returns
// how many it wiped. The erase is idempotent, so several instances may
// run it.
func (s *Service) WipeSpentCards(ctx context.Context) (int64, error) {
	var n int64
	err := s.store.Update(ctx, func(tx Tx) error {
		var err error
		n, err = tx.WipeSpentCards(s.now().Add(-CardRetention), 500)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("wipe spent cards: %w", err)
	}
	return n, nil
}
