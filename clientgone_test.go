package paylink_test

import (
	"context"
	"testing"

	"github.com/paylink/paylink"
)

// TestOperationsRunToTheirEndWhenTheClientLeaves: a client that hangs up
// (its request's context cancelled) before or while an operation's first
// commit claims it does not leave the operation PROCESSING for recovery to
// fail minutes later: the claim commits, the processor is asked and the
// answer is recorded, for a purchase, a capture and a refund, on both
// engines.
func TestOperationsRunToTheirEndWhenTheClientLeaves(t *testing.T) {
	engines(t, func(t *testing.T, r *rig) {
		gone, hangUp := context.WithCancel(ctx)
		hangUp()
		bought, err := r.svc.Purchase(gone, r.m.Merchant, r.purchaseRequest("4111111111111111", 1000, false))
		if err != nil || bought.Status != paylink.StatusApproved {
			t.Fatalf("purchase: got %+v, %v; want APPROVED", bought, err)
		}
		held := r.pay("4111111111111111", 1000, true, paylink.StatusPreAuthorised)
		captured, err := r.svc.Capture(gone, r.m.Merchant, held.Reference, paylink.CaptureRequest{
			CompanyToken: r.m.Creds.CompanyToken, TransactionToken: r.token(), Amount: 1000, Currency: "AUD"})
		if err != nil || captured.Status != paylink.StatusApproved {
			t.Fatalf("capture: got %+v, %v; want APPROVED", captured, err)
		}
		refund, _, err := r.svc.Refund(gone, r.m.Merchant, bought.Reference, paylink.RefundRequest{
			CompanyToken: r.m.Creds.CompanyToken, TransactionToken: r.token(),
			Customer: paylink.Customer{IPAddress: "192.0.2.10", Timezone: "UTC"}, Amount: 400, Currency: "AUD"})
		if err != nil || refund.Status != paylink.StatusApproved {
			t.Fatalf("refund: got %+v, %v; want APPROVED", refund, err)
		}
		for _, ref := range []string{bought.Reference, held.Reference} {
			if st := r.status(ref); st != paylink.StatusApproved {
				t.Errorf("%s: stored %s, want APPROVED", ref, st)
			}
		}
	})
}
