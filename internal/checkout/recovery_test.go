package checkout_test

import (
	"strings"
	"testing"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
)

// A payment whose processor answer is lost is not shown as failed ("no
// money was taken" would be a guess): the customer is told it is not
// confirmed yet and not to pay again.
func TestLostProcessorAnswerIsNotShownAsAFailure(t *testing.T) {
	env := apitest.Start(t, apitest.Options{Config: paylink.Config{ProcessorTimeout: 50 * time.Millisecond}})
	m := env.Onboard()
	hpp, _ := pageURLs(link(t, env, m, "10.50", nil))
	b := newBrowser(t, env)
	csrf := b.get(hpp).csrf(t)
	env.Sandbox.SetSilent(true)
	p := b.post(hpp, cardForm(csrf, cardOK))
	if p.status != 200 || !strings.Contains(p.body, "Payment not confirmed yet") || strings.Contains(p.body, "No money was taken") {
		t.Errorf("page after a lost answer: got %d, want 200 saying the payment is not confirmed (and not that no money was taken):\n%s", p.status, p.body)
	}
}
