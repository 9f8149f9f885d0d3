package checkout_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
)

// lostAnswer opens a new link's page in a new browser and pays it by card
// with the sandbox silent, so that its answer is lost (a processor
// timeout of 50 ms), and returns the page the payment answered.
func lostAnswer(t *testing.T) (env *apitest.Env, hpp string, b *browser, csrf string, p page) {
	t.Helper()
	env = apitest.Start(t, apitest.Options{Config: paylink.Config{ProcessorTimeout: 50 * time.Millisecond}})
	hpp, _ = pageURLs(link(t, env, env.Onboard(), "10.50", nil))
	b = newBrowser(t, env)
	csrf = b.get(hpp).csrf(t)
	env.Sandbox.SetSilent(true)
	return env, hpp, b, csrf, b.post(hpp, cardForm(csrf, cardOK))
}

// A payment whose processor answer is lost is not shown as failed ("no
// money was taken" would be a guess): the customer is told it is not
// confirmed yet and not to pay again.
func TestLostProcessorAnswerIsNotShownAsAFailure(t *testing.T) {
	_, _, _, _, p := lostAnswer(t)
	if p.status != 200 || !strings.Contains(p.body, "Payment not confirmed yet") || strings.Contains(p.body, "No money was taken") {
		t.Errorf("page after a lost answer: got %d, want 200 saying the payment is not confirmed (and not that no money was taken):\n%s", p.status, p.body)
	}
}

// TestTheSameBrowserIsToldOfADoubtOnce: a browser whose own payment's
// answer was lost, back past the authentication timeout before recovery
// has asked, is told the payment awaits confirmation whether it reloads
// or presses Pay again, and told not to pay again once (the last
// verification sweep: its second Pay said the form would come back, and
// an UNKNOWN payment's said "do not pay again" twice).
func TestTheSameBrowserIsToldOfADoubtOnce(t *testing.T) {
	env, hpp, b, csrf, p := lostAnswer(t)
	if !strings.Contains(p.body, "Payment not confirmed yet") {
		t.Fatalf("the attempt: got %d, want its answer lost\n%s", p.status, p.body)
	}
	env.Clock.Advance(env.Service.Config().AuthenticationTimeout + time.Second)
	for name, p := range map[string]page{"reload": b.get(hpp), "Pay again": b.post(hpp, cardForm(csrf, cardOK))} {
		if !strings.Contains(p.body, "awaiting confirmation") || strings.Contains(p.body, "form is then shown again") ||
			strings.Count(p.body, "Do not pay again") != 1 {
			t.Errorf("%s: got %d\n%s\nwant the payment awaiting confirmation, told once not to pay again", name, p.status, p.body)
		}
	}
}

// A link whose payment is in doubt (its processor answer lost, recovery's
// inquiries unanswered too: UNKNOWN) stays held past the authentication
// timeout: another customer cannot pay it and the merchant cannot cancel
// it, since the first payment may have taken the money. Once recovery
// learns the payment was approved, the link is paid by that one payment.
// Before, the claim ran out after the timeout: the link could be paid a
// second time, or cancelled and then found approved. Meanwhile its page
// says the payment awaits confirmation.
func TestALinkWithAPaymentInDoubtStaysHeld(t *testing.T) {
	env := apitest.Start(t, apitest.Options{Config: paylink.Config{ProcessorTimeout: 50 * time.Millisecond}})
	m := env.Onboard()
	r := link(t, env, m, "10.50", nil)
	hpp, _ := pageURLs(r)
	id := r.Str("id")
	first, second := newBrowser(t, env), newBrowser(t, env)
	csrf, secondCSRF := first.get(hpp).csrf(t), second.get(hpp).csrf(t) // pages opened before the attempt
	env.Sandbox.SetSilent(true)
	if p := first.post(hpp, cardForm(csrf, cardOK)); !strings.Contains(p.body, "Payment not confirmed yet") {
		t.Fatalf("the first attempt: got %d, want its answer lost\n%s", p.status, p.body)
	}
	env.Clock.Advance(paylink.ProcessingTimeout + time.Minute)
	if _, err := env.Service.RecoverInterrupted(context.Background()); err != nil { // the inquiry goes unanswered too
		t.Fatal(err)
	}
	env.Clock.Advance(env.Service.Config().AuthenticationTimeout)
	env.Sandbox.SetSilent(false) // answering again; recovery has not asked since

	if p := second.post(hpp, cardForm(secondCSRF, cardOK)); p.status == http.StatusSeeOther {
		t.Errorf("another customer's payment: got %d to %s, want it refused", p.status, p.header.Get("Location"))
	}
	if c := env.Post("/v5/payment-links/"+id+"/cancel", m, map[string]any{}); c.Status != http.StatusConflict || c.Str("response_code") != "payment_link_in_progress" {
		t.Errorf("cancel: got %d %s, want 409 payment_link_in_progress", c.Status, c.Raw)
	}
	// The page says the payment awaits confirmation, not that the form
	// comes back within the timeout, which it does not (the crash sweep).
	if p := newBrowser(t, env).get(hpp); !strings.Contains(p.body, "awaiting confirmation") || strings.Contains(p.body, "form is then shown again") {
		t.Errorf("the page of a link held in doubt: got %d\n%s\nwant it awaiting confirmation", p.status, p.body)
	}

	env.Clock.Advance(time.Minute)
	if _, err := env.Service.RecoverInterrupted(context.Background()); err != nil {
		t.Fatal(err)
	}
	look := env.Post("/v5/payment-links/"+id, m, map[string]any{})
	if look.Str("status") != "paid" {
		t.Errorf("the link once recovery learnt the payment was approved: got %s, want paid", look.Raw)
	}
	var approved int
	if err := env.Store.DB().QueryRow(`SELECT COUNT(*) FROM transactions WHERE payment_link_id = $1 AND status = 'APPROVED'`, id).Scan(&approved); err != nil || approved != 1 {
		t.Errorf("approved payments of the link: got %d, %v; want 1", approved, err)
	}
}

// A link held by a payment in doubt is released by an operator's answer
// that the acquirer never received it (paylink review resolve): another
// customer can then pay it, once.
func TestAnOperatorsAnswerReleasesAHeldLink(t *testing.T) {
	env := apitest.Start(t, apitest.Options{Config: paylink.Config{ProcessorTimeout: 50 * time.Millisecond}})
	m := env.Onboard()
	r := link(t, env, m, "10.50", nil)
	hpp, _ := pageURLs(r)
	first := newBrowser(t, env)
	csrf := first.get(hpp).csrf(t)
	env.Sandbox.SetSilent(true)
	first.post(hpp, cardForm(csrf, cardOK))
	env.Clock.Advance(paylink.ProcessingTimeout + time.Minute)
	if _, err := env.Service.RecoverInterrupted(context.Background()); err != nil { // unanswered: UNKNOWN
		t.Fatal(err)
	}
	var ref string
	if err := env.Store.DB().QueryRow(`SELECT reference FROM transactions WHERE payment_link_id = $1`, r.Str("id")).Scan(&ref); err != nil {
		t.Fatal(err)
	}
	got, err := env.Service.ResolveReview(context.Background(), paylink.Resolution{MerchantID: m.ID, Reference: ref,
		Answer: paylink.AnswerNotReceived, Note: "the acquirer has no record of it"})
	if err != nil || got != paylink.StatusFailed {
		t.Fatalf("resolve: got %s, %v; want FAILED", got, err)
	}
	env.Sandbox.SetSilent(false)
	second := newBrowser(t, env)
	if p := second.post(hpp, cardForm(second.get(hpp).csrf(t), cardOK)); p.status != http.StatusSeeOther {
		t.Errorf("another customer's payment once the link is released: got %d, want 303\n%s", p.status, p.body)
	}
	if look := env.Post("/v5/payment-links/"+r.Str("id"), m, map[string]any{}); look.Str("status") != "paid" {
		t.Errorf("the link: got %s, want paid", look.Raw)
	}
}
