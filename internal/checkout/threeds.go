package checkout

import (
	"context"

	"github.com/paylink/paylink"
)

// completeThreeDS finishes a card payment after the customer returned
// from the 3-D Secure challenge page: the same completion as the API's
// 3dsredirect call.
func completeThreeDS(ctx context.Context, svc *paylink.Service, m *paylink.Merchant, reference string) (*paylink.Transaction, error) {
	return svc.CompleteThreeDS(ctx, m, reference)
}
