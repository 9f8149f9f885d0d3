package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
	"github.com/paylink/paylink/internal/processor"
)

const visa = "4111111111111111"

// hold places a pre-authorisation and returns its purchase reference.
func hold(t *testing.T, env *apitest.Env, m *apitest.Merchant, amount string) string {
	t.Helper()
	r := env.Post("/v5/purchase", m, env.CardPurchase(m, visa, amount, func(b map[string]any) {
		apitest.Set(b, "purchase.should_service_apply_pre_authorisation", true)
	}))
	if r.Status != http.StatusOK || r.Str("purchase.status") != "PRE_AUTHORISED" {
		t.Fatalf("hold: got %d %s, want 200 PRE_AUTHORISED", r.Status, r.Raw)
	}
	return r.Str("purchase.purchase_reference")
}

// capture posts a capture of amount (AUD) with a fresh transaction token.
func capture(env *apitest.Env, m *apitest.Merchant, ref, amount string, mutate ...func(map[string]any)) apitest.Response {
	b := map[string]any{
		"token":   map[string]any{"company_token": m.Creds.CompanyToken, "transaction_token": env.TransactionToken(m)},
		"capture": map[string]any{"amount": amount, "currency": "AUD"},
	}
	for _, f := range mutate {
		f(b)
	}
	return env.Post("/v5/purchase/"+ref+"/capture", m, b)
}

// cancel posts a cancel with a fresh transaction token.
func cancel(env *apitest.Env, m *apitest.Merchant, ref string) apitest.Response {
	return env.Post("/v5/purchase/"+ref+"/cancel", m, map[string]any{
		"token": map[string]any{"company_token": m.Creds.CompanyToken, "transaction_token": env.TransactionToken(m)},
	})
}

// statusOf polls the transaction status endpoint.
func statusOf(t *testing.T, env *apitest.Env, m *apitest.Merchant, ref string) string {
	t.Helper()
	r := env.Post("/v5/purchase/"+ref, m, map[string]any{"company_token": m.Creds.CompanyToken})
	if r.Status != http.StatusOK {
		t.Fatalf("status %s: got %d %s", ref, r.Status, r.Raw)
	}
	return r.Str("status")
}

// expectError checks an error response's HTTP status and code.
func expectError(t *testing.T, r apitest.Response, wantStatus int, wantCode string) {
	t.Helper()
	if r.Status != wantStatus || r.Str("response_code") != wantCode {
		t.Errorf("got %d %s, want %d %s", r.Status, r.Raw, wantStatus, wantCode)
	}
	if r.Get("purchase") != nil {
		t.Errorf("error body has a purchase key: %s", r.Raw)
	}
}

func TestPreAuthorisationHoldsFunds(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	r := env.Post("/v5/purchase", m, env.CardPurchase(m, visa, "25.50", func(b map[string]any) {
		apitest.Set(b, "purchase.should_service_apply_pre_authorisation", "true")
	}))
	checks := map[string]string{
		"purchase.status": "PRE_AUTHORISED", "purchase.pre_authorised_amount": "25.50",
		"purchase.total_amount": "25.5", "response_code": "success",
	}
	for path, want := range checks {
		if got := r.Str(path); got != want {
			t.Errorf("%s: got %q, want %q (%s)", path, got, want, r.Raw)
		}
	}
	if r.Get("purchase.pre_authorised") != true {
		t.Errorf("pre_authorised: got %v, want true", r.Get("purchase.pre_authorised"))
	}
	// A hold the issuer did not approve held nothing.
	for card, status := range map[string]string{"4000000000000002": "DECLINED", "4000000000000119": "FAILED"} {
		r := env.Post("/v5/purchase", m, env.CardPurchase(m, card, "15.00", func(b map[string]any) {
			apitest.Set(b, "purchase.should_service_apply_pre_authorisation", "true")
		}))
		if r.Str("purchase.status") != status || r.Get("purchase.pre_authorised") != false || r.Str("purchase.pre_authorised_amount") != "0.00" {
			t.Errorf("a %s hold: got %s, want pre_authorised false and 0.00 held", status, r.Raw)
		}
	}
}

func TestCaptureRules(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m, other := env.Onboard(), env.Onboard()
	t.Run("above the hold is refused and captures nothing", func(t *testing.T) {
		ref := hold(t, env, m, "10.00")
		expectError(t, capture(env, m, ref, "10.01"), http.StatusBadRequest, paylink.CodeAmountExceedsAuthorised)
		if got := statusOf(t, env, m, ref); got != "PRE_AUTHORISED" {
			t.Errorf("status after refused capture: got %s, want PRE_AUTHORISED", got)
		}
		if r := capture(env, m, ref, "10.00"); r.Str("purchase.status") != "APPROVED" || r.Str("purchase.total_amount") != "10" {
			t.Errorf("full capture after refusal: got %s, want APPROVED total 10", r.Raw)
		}
	})
	t.Run("partial capture releases the rest", func(t *testing.T) {
		ref := hold(t, env, m, "10.00")
		r := capture(env, m, ref, "6.25", func(b map[string]any) {
			apitest.Set(b, "metadata.channel", "pos")
			apitest.Set(b, "metadata.merchant_hash", "abc123")
		})
		if r.Status != http.StatusOK || r.Str("purchase.status") != "APPROVED" || r.Str("purchase.total_amount") != "6.25" {
			t.Fatalf("partial capture: got %d %s, want 200 APPROVED total 6.25", r.Status, r.Raw)
		}
		tr := stored(t, env, m, ref)
		if tr.Total != 625 || tr.Details.Metadata["channel"] != "pos" || tr.Details.Metadata["merchant_hash"] != "abc123" {
			t.Errorf("stored capture: got total %d metadata %v, want 625 with channel and merchant_hash", tr.Total, tr.Details.Metadata)
		}
	})
	t.Run("capture with surcharge stays within the hold", func(t *testing.T) {
		ref := hold(t, env, m, "100.00")
		surcharged := func(b map[string]any) { apitest.Set(b, "capture.should_service_apply_surcharge", true) }
		expectError(t, capture(env, m, ref, "100.00", surcharged), http.StatusBadRequest, paylink.CodeAmountExceedsAuthorised)
		r := capture(env, m, ref, "90.00", surcharged)
		amount, sur, total := r.Str("purchase.amount"), r.Str("purchase.surcharge_amount"), r.Str("purchase.total_amount")
		if r.Str("purchase.status") != "APPROVED" || amount != "90" || sur == "0" || total == "90" {
			t.Errorf("surcharged capture: got amount %s surcharge %s total %s (%s), want a surcharge on 90", amount, sur, total, r.Raw)
		}
	})
	t.Run("second capture is a conflict", func(t *testing.T) {
		ref := hold(t, env, m, "10.00")
		capture(env, m, ref, "5.00")
		expectError(t, capture(env, m, ref, "5.00"), http.StatusConflict, paylink.CodeAlreadyCaptured)
		if got := stored(t, env, m, ref).Total; got != 500 {
			t.Errorf("captured total after second capture: got %d, want 500", got)
		}
	})
	t.Run("cancel after capture is a conflict", func(t *testing.T) {
		ref := hold(t, env, m, "10.00")
		capture(env, m, ref, "10.00")
		expectError(t, cancel(env, m, ref), http.StatusConflict, paylink.CodeAlreadyCaptured)
	})
	t.Run("capture after cancel is a conflict", func(t *testing.T) {
		ref := hold(t, env, m, "10.00")
		if r := cancel(env, m, ref); r.Str("purchase.status") != "PRE_AUTHORISED_REVERSED" {
			t.Fatalf("cancel: got %s, want PRE_AUTHORISED_REVERSED", r.Raw)
		}
		expectError(t, capture(env, m, ref, "10.00"), http.StatusConflict, paylink.CodeHoldReleased)
		expectError(t, cancel(env, m, ref), http.StatusConflict, paylink.CodeHoldReleased)
	})
	t.Run("currency must match", func(t *testing.T) {
		ref := hold(t, env, m, "10.00")
		r := capture(env, m, ref, "10.00", func(b map[string]any) { apitest.Set(b, "capture.currency", "NZD") })
		expectError(t, r, http.StatusBadRequest, paylink.CodeCurrencyMismatch)
	})
	t.Run("another merchant's hold is unknown", func(t *testing.T) {
		ref := hold(t, env, m, "10.00")
		expectError(t, capture(env, other, ref, "10.00"), http.StatusNotFound, paylink.CodeNotFound)
		expectError(t, cancel(env, other, ref), http.StatusNotFound, paylink.CodeNotFound)
	})
	t.Run("a completed purchase is not a hold", func(t *testing.T) {
		r := env.Post("/v5/purchase", m, env.CardPurchase(m, visa, "10.00"))
		expectError(t, capture(env, m, r.Str("purchase.purchase_reference"), "10.00"), http.StatusConflict, paylink.CodeInvalidState)
	})
	t.Run("a used transaction token is refused", func(t *testing.T) {
		ref := hold(t, env, m, "10.00")
		tok := env.TransactionToken(m)
		body := map[string]any{"token": map[string]any{"company_token": m.Creds.CompanyToken, "transaction_token": tok},
			"capture": map[string]any{"amount": "1.00", "currency": "AUD"}}
		env.Post("/v5/purchase/"+ref+"/capture", m, body)
		expectError(t, env.Post("/v5/purchase/"+ref+"/cancel", m, body), http.StatusConflict, paylink.CodeTransactionTokenUsed)
	})
}

// race runs n copies of op at once and returns their responses.
func race(n int, op func(i int) apitest.Response) []apitest.Response {
	out := make([]apitest.Response, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			out[i] = op(i)
		}()
	}
	close(start)
	wg.Wait()
	return out
}

// winners counts 200 answers and checks every loser is a 409.
func winners(t *testing.T, rs []apitest.Response) int {
	t.Helper()
	n := 0
	for _, r := range rs {
		switch {
		case r.Status == http.StatusOK:
			n++
		case r.Status != http.StatusConflict:
			t.Errorf("loser: got %d %s, want 409", r.Status, r.Raw)
		}
	}
	return n
}

func TestCaptureCancelRaceHasOneWinner(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	for round := range 5 {
		ref := hold(t, env, m, "10.00")
		caps := []string{env.TransactionToken(m), env.TransactionToken(m)}
		rs := race(2, func(i int) apitest.Response {
			body := map[string]any{"token": map[string]any{"company_token": m.Creds.CompanyToken, "transaction_token": caps[i]},
				"capture": map[string]any{"amount": "10.00", "currency": "AUD"}}
			if i == 0 {
				return env.Post("/v5/purchase/"+ref+"/capture", m, body)
			}
			return env.Post("/v5/purchase/"+ref+"/cancel", m, body)
		})
		if got := winners(t, rs); got != 1 {
			t.Fatalf("round %d: got %d winners, want 1: %s | %s", round, got, rs[0].Raw, rs[1].Raw)
		}
		want := "APPROVED"
		if rs[1].Status == http.StatusOK {
			want = "PRE_AUTHORISED_REVERSED"
		}
		if got := statusOf(t, env, m, ref); got != want {
			t.Errorf("round %d: final status got %s, want %s", round, got, want)
		}
	}
}

func TestFourRacingCapturesHaveOneWinner(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	ref := hold(t, env, m, "10.00")
	toks := []string{env.TransactionToken(m), env.TransactionToken(m), env.TransactionToken(m), env.TransactionToken(m)}
	rs := race(4, func(i int) apitest.Response {
		return env.Post("/v5/purchase/"+ref+"/capture", m, map[string]any{
			"token":   map[string]any{"company_token": m.Creds.CompanyToken, "transaction_token": toks[i]},
			"capture": map[string]any{"amount": []string{"1.00", "2.00", "3.00", "4.00"}[i], "currency": "AUD"}})
	})
	if got := winners(t, rs); got != 1 {
		t.Fatalf("got %d winners, want 1", got)
	}
	for i, r := range rs {
		if r.Status == http.StatusOK {
			if got, want := stored(t, env, m, ref).Total, int64(100*(i+1)); got != want {
				t.Errorf("captured total: got %d, want the winner's %d", got, want)
			}
		}
	}
}

// TestPreAuthExpiryJobWorksThroughABacklog: one run of the expiry job
// releases every expired hold, more than a batch of them, not a batch a
// minute.
func TestPreAuthExpiryJobWorksThroughABacklog(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	const holds = paylink.ExpiryBatch*2 + 3
	for range holds {
		hold(t, env, m, "1.00")
	}
	env.Clock.Advance(7*24*time.Hour + time.Minute)
	if n, err := env.Service.ExpirePreAuths(context.Background()); err != nil || n != holds {
		t.Fatalf("one run: released %d, %v; want all %d", n, err, holds)
	}
	if n, err := env.Service.ExpirePreAuths(context.Background()); err != nil || n != 0 {
		t.Errorf("the next run: released %d, %v; want none left", n, err)
	}
}

func TestPreAuthExpiryJobCancelsOldHolds(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	ref := hold(t, env, m, "10.00")
	ctx := context.Background()
	env.Clock.Advance(167 * time.Hour)
	if n, err := env.Service.ExpirePreAuths(ctx); err != nil || n != 0 {
		t.Fatalf("before 7 days: got %d released, %v; want 0", n, err)
	}
	fresh := hold(t, env, m, "5.00")
	env.Clock.Advance(2 * time.Hour)
	if n, err := env.Service.ExpirePreAuths(ctx); err != nil || n != 1 {
		t.Fatalf("after 7 days: got %d released, %v; want 1", n, err)
	}
	if got := statusOf(t, env, m, ref); got != "PRE_AUTHORISED_REVERSED" {
		t.Errorf("expired hold: got %s, want PRE_AUTHORISED_REVERSED", got)
	}
	if got := statusOf(t, env, m, fresh); got != "PRE_AUTHORISED" {
		t.Errorf("fresh hold: got %s, want PRE_AUTHORISED", got)
	}
	expectError(t, capture(env, m, ref, "10.00"), http.StatusConflict, paylink.CodeHoldReleased)
	if n, err := env.Service.ExpirePreAuths(ctx); err != nil || n != 0 {
		t.Errorf("second run: got %d released, %v; want 0", n, err)
	}
}

// gatedCapture is the sandbox acquirer whose captures, once asked, wait
// for their gate: a capture still in flight.
type gatedCapture struct {
	processor.Sandbox
	asked, gate chan struct{}
}

func (p *gatedCapture) Capture(ctx context.Context, req paylink.OpRequest) (paylink.OpResult, error) {
	p.asked <- struct{}{}
	<-p.gate
	return p.Sandbox.Capture(ctx, req)
}

// TestRefundDuringACaptureIsInProgress: a refund that arrives while the
// hold's capture is with the processor is 409 operation_in_progress, not
// a refusal, and its Idempotency-Key is not spent on that answer: the
// same request again, once the capture is done, refunds.
func TestRefundDuringACaptureIsInProgress(t *testing.T) {
	proc := &gatedCapture{asked: make(chan struct{}, 1), gate: make(chan struct{})}
	env := apitest.Start(t, apitest.Options{Processor: proc})
	m := env.Onboard()
	ref := hold(t, env, m, "20.00")
	captured := make(chan apitest.Response, 1)
	go func() { captured <- capture(env, m, ref, "20.00") }()
	<-proc.asked
	body, err := json.Marshal(refundBody(env, m, "5.00"))
	if err != nil {
		t.Fatal(err)
	}
	path := "/v5/purchase/" + ref + "/refund"
	res, raw := postKeyTo(t, env, m, path, "rf-1", body)
	if res.StatusCode != http.StatusConflict || !strings.Contains(raw, paylink.CodeOperationInProgress) {
		t.Errorf("refund during the capture: got %d %s, want 409 %s", res.StatusCode, raw, paylink.CodeOperationInProgress)
	}
	close(proc.gate)
	if c := <-captured; c.Status != http.StatusOK || c.Str("purchase.status") != "APPROVED" {
		t.Fatalf("capture: got %d %s, want 200 APPROVED", c.Status, c.Raw)
	}
	res, raw = postKeyTo(t, env, m, path, "rf-1", body)
	if res.StatusCode != http.StatusOK || res.Header.Get("Idempotent-Replayed") != "" {
		t.Errorf("the same refund after the capture: got %d (replayed %q) %s, want 200, not a replay", res.StatusCode, res.Header.Get("Idempotent-Replayed"), raw)
	}
}

// unreachableOnce is the sandbox acquirer that cannot be reached for the
// first capture and the first void it is asked for.
type unreachableOnce struct {
	processor.Sandbox
	captureFailed, voidFailed atomic.Bool
}

var errUnreachable = errors.New("dial acquirer: connection refused")

func (p *unreachableOnce) Capture(ctx context.Context, req paylink.OpRequest) (paylink.OpResult, error) {
	if !p.captureFailed.Swap(true) {
		return paylink.OpResult{}, errUnreachable
	}
	return p.Sandbox.Capture(ctx, req)
}

func (p *unreachableOnce) Void(ctx context.Context, req paylink.OpRequest) (paylink.OpResult, error) {
	if !p.voidFailed.Swap(true) {
		return paylink.OpResult{}, errUnreachable
	}
	return p.Sandbox.Void(ctx, req)
}

// TestHoldOperationRetriedAfterProcessorUnavailable: a capture or cancel
// the acquirer could not be asked for is 503 processor_unavailable with
// the hold unchanged, and the same request again (same transaction
// token, same Idempotency-Key), as the 503 invites, goes through: the
// token is given back with the hold.
func TestHoldOperationRetriedAfterProcessorUnavailable(t *testing.T) {
	env := apitest.Start(t, apitest.Options{Processor: &unreachableOnce{}})
	m := env.Onboard()
	for op, want := range map[string]string{"capture": "APPROVED", "cancel": "PRE_AUTHORISED_REVERSED"} {
		ref := hold(t, env, m, "20.00")
		body := map[string]any{"token": map[string]any{"company_token": m.Creds.CompanyToken, "transaction_token": env.TransactionToken(m)}}
		if op == "capture" {
			body["capture"] = map[string]any{"amount": "20.00", "currency": "AUD"}
		}
		raw, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		path := "/v5/purchase/" + ref + "/" + op
		res, answer := postKeyTo(t, env, m, path, op+"-1", raw)
		if res.StatusCode != http.StatusServiceUnavailable || !strings.Contains(answer, paylink.CodeProcessorUnavailable) {
			t.Fatalf("%s, acquirer unreachable: got %d %s, want 503 %s", op, res.StatusCode, answer, paylink.CodeProcessorUnavailable)
		}
		if got := statusOf(t, env, m, ref); got != "PRE_AUTHORISED" {
			t.Errorf("%s: the hold after the 503 is %s, want PRE_AUTHORISED", op, got)
		}
		res, answer = postKeyTo(t, env, m, path, op+"-1", raw)
		if res.StatusCode != http.StatusOK || !strings.Contains(answer, want) {
			t.Errorf("%s retried unchanged: got %d %s, want 200 %s", op, res.StatusCode, answer, want)
		}
	}
}

// TestCardNumberInMetadataIsRefused: the metadata of a capture, cancel,
// refund, direct debit or direct debit refund is kept with the payment
// and shown again, so a card number in it is 400 naming the field, and
// the call changes nothing, as in any other free-text field; a hash whose
// digits happen to pass for a card is not one.
func TestCardNumberInMetadataIsRefused(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	withCard := func(b map[string]any) map[string]any {
		b["metadata"] = map[string]any{"channel": "web", "merchant_hash": "5555 5555 5555 4444"}
		return b
	}
	held := hold(t, env, m, "20.00")
	paid := env.Post("/v5/purchase", m, env.CardPurchase(m, visa, "20.00")).Str("purchase.purchase_reference")
	debited := debit(t, env, m, testAccount, "20.00")
	calls := map[string]func() apitest.Response{
		"capture": func() apitest.Response { return capture(env, m, held, "20.00", func(b map[string]any) { withCard(b) }) },
		"cancel": func() apitest.Response {
			return env.Post("/v5/purchase/"+held+"/cancel", m, withCard(map[string]any{
				"token": map[string]any{"company_token": m.Creds.CompanyToken, "transaction_token": env.TransactionToken(m)}}))
		},
		"refund": func() apitest.Response {
			return env.Post("/v5/purchase/"+paid+"/refund", m, withCard(refundBody(env, m, "5.00")))
		},
		"direct debit": func() apitest.Response {
			return env.Post("/v5/direct_debit", m, withCard(debitBody(env, m, testAccount, "5.00")))
		},
		"direct debit refund": func() apitest.Response {
			return env.Post("/v5/direct_debit/"+debited+"/refund", m, withCard(refundBody(env, m, "5.00")))
		},
	}
	for name, call := range calls {
		r := call()
		if fields, _ := r.Get("fields").(map[string]any); r.Status != http.StatusBadRequest || fields["metadata.merchant_hash"] == nil {
			t.Errorf("%s with a card number in metadata: got %d %s, want 400 naming metadata.merchant_hash", name, r.Status, r.Raw)
		}
	}
	if got := statusOf(t, env, m, held); got != "PRE_AUTHORISED" {
		t.Errorf("the hold after refused captures and cancels: got %s, want PRE_AUTHORISED", got)
	}
	if tr := stored(t, env, m, paid); tr.Refunded != 0 {
		t.Errorf("the purchase after a refused refund: %d refunded, want none", tr.Refunded)
	}
	// A hex HMAC-SHA256, as spec's merchant_hash is, with a digit run
	// that passes for a Visa number inside it: a hash, not a card.
	hmac := refundBody(env, m, "5.00")
	hmac["metadata"] = map[string]any{"merchant_hash": "60261c07202c8d4829556058863d7d5c5eb5bcb57cc8a6ce6014c4665252b5ab"}
	if r := env.Post("/v5/purchase/"+paid+"/refund", m, hmac); r.Status != http.StatusOK {
		t.Errorf("refund with a hex hash as merchant_hash: got %d %s, want 200", r.Status, r.Raw)
	}
}

// TestCallsByPurchaseReferenceSayAnInvoiceNumberIsNone: capture and
// cancel take the purchase reference alone; named by the payment's
// invoice number (which the status look-up takes) they answer 404
// saying so, where the message offered an invoice number as a name
// (spec conformance sweep).
func TestCallsByPurchaseReferenceSayAnInvoiceNumberIsNone(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	r := env.Post("/v5/purchase", m, env.CardPurchase(m, visa, "9.00", func(b map[string]any) {
		apitest.Set(b, "purchase.should_service_apply_pre_authorisation", true)
		apitest.Set(b, "purchase.invoice_number", "INV-HOLD")
	}))
	if r.Str("purchase.status") != "PRE_AUTHORISED" {
		t.Fatalf("hold: got %d %s", r.Status, r.Raw)
	}
	for name, res := range map[string]apitest.Response{"capture": capture(env, m, "INV-HOLD", "9.00"), "cancel": cancel(env, m, "INV-HOLD")} {
		if res.Status != http.StatusNotFound || !strings.Contains(res.Str("error_message"), "not an invoice number") {
			t.Errorf("%s by invoice number: got %d %s, want 404 saying it takes no invoice number", name, res.Status, res.Raw)
		}
	}
	if got := statusOf(t, env, m, "INV-HOLD"); got != "PRE_AUTHORISED" {
		t.Errorf("the status look-up by invoice number: got %s, want the hold, untouched", got)
	}
	// A direct debit refund by its debit's invoice number says the same
	// (verification sweep: it sent the caller to the card refund).
	d := env.Post("/v5/direct_debit", m, debitBody(env, m, testAccount, "10", func(b map[string]any) {
		apitest.Set(b, "purchase.invoice_number", "INV-DEBIT")
	}))
	if d.Str("purchase.status") != "PENDING" {
		t.Fatalf("direct debit: got %d %s", d.Status, d.Raw)
	}
	if res := env.Post("/v5/direct_debit/INV-DEBIT/refund", m, refundBody(env, m, "1")); res.Status != http.StatusNotFound ||
		!strings.Contains(res.Str("error_message"), "not an invoice number") {
		t.Errorf("direct debit refund by invoice number: got %d %s, want 404 saying it takes no invoice number", res.Status, res.Raw)
	}
}
