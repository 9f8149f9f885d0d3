package checkout

import (
	"context"

	"github.com/paylink/paylink"
)

// completeThreeDS finishes a card payment after the customer returned
// from the 3-D Secure challenge page. It is the one connection to the
// card lifecycle's 3-D Secure: once that work is merged, this body is
//
//	return svc.CompleteThreeDS(ctx, m, reference)
//
// Until then a challenge cannot be completed here, and the page says so
// without inventing a result.
func completeThreeDS(ctx context.Context, svc *paylink.Service, m *paylink.Merchant, reference string) (*paylink.Transaction, error) {
	return nil, paylink.Errorf(paylink.KindConflict, paylink.CodeNotSupported,
		"3-D Secure completion is not available in this build; no money was taken")
}
