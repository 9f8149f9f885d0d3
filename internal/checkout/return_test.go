package checkout_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
	"github.com/paylink/paylink/internal/processor"
)

// openPage creates a link of AUD 10.50 and opens its hosted page in a new
// browser: the link, the page's address, the browser and its form token.
func openPage(t *testing.T, env *apitest.Env, m *apitest.Merchant) (apitest.Response, string, *browser, string) {
	t.Helper()
	r := link(t, env, m, "10.50", nil)
	hpp, _ := pageURLs(r)
	b := newBrowser(t, env)
	return r, hpp, b, b.get(hpp).csrf(t)
}

// challengeRef is the purchase reference in a challenge page's address.
func challengeRef(t *testing.T, p page) string {
	t.Helper()
	to := p.header.Get("Location")
	_, capability, ok := strings.Cut(to, paylink.ChallengePath)
	ref, _, _ := strings.Cut(capability, ".")
	if p.status != http.StatusSeeOther || !ok || !strings.HasPrefix(ref, "pr_") {
		t.Fatalf("pay: got %d to %q, want 303 to a challenge page", p.status, to)
	}
	return ref
}

// TestReturnInAnotherBrowserGivesNoPageToken: the return address and the
// purchase reference the issuer adds to it are both in the merchant's
// webhook. Only the browser that started the attempt is led from them to
// the link's page; any other load completes the attempt and shows its
// outcome, without the page's token or the customer's details.
func TestReturnInAnotherBrowserGivesNoPageToken(t *testing.T) {
	env := start(t)
	m := env.Onboard()
	r := link(t, env, m, "10.50", nil)
	hpp, _ := pageURLs(r)
	token := strings.TrimPrefix(hpp, env.Server.URL+"/pay/")
	customer := newBrowser(t, env)
	toChallenge := customer.post(hpp, cardForm(customer.get(hpp).csrf(t), card3DS))
	ref := challengeRef(t, toChallenge)
	back := env.Server.URL + paylink.LinkReturnPath + r.Str("id") + "?" + url.Values{"purchase_reference": {ref}}.Encode()

	stranger := newBrowser(t, env)
	wantNoPage := func(when string, p page, say string) {
		t.Helper()
		if p.status != http.StatusOK || p.header.Get("Location") != "" || !strings.Contains(p.body, say) {
			t.Errorf("%s: got %d to %q, want 200 saying %q:\n%s", when, p.status, p.header.Get("Location"), say, p.body)
		}
		for _, secret := range []string{token, "jo@example.com", "Citizen"} {
			if strings.Contains(p.body, secret) {
				t.Errorf("%s: the page shows %q to another browser", when, secret)
			}
		}
	}
	wantNoPage("before the challenge is answered", stranger.get(back), "has not finished checking")
	if tr := transaction(t, env, m, ref); tr.Status != paylink.StatusRequiresAuthentication {
		t.Fatalf("after another browser's early return: got %s, want still REQUIRES_AUTHENTICATION", tr.Status)
	}

	answered := customer.post(toChallenge.header.Get("Location"), url.Values{"outcome": {"success"}})
	if answered.status != http.StatusSeeOther || !strings.HasPrefix(answered.header.Get("Location"), back) {
		t.Fatalf("answer: got %d to %q, want 303 to %s", answered.status, answered.header.Get("Location"), back)
	}
	wantNoPage("after the answer", stranger.get(back), "was approved")
	if tr := transaction(t, env, m, ref); tr.Status != paylink.StatusApproved {
		t.Errorf("after another browser's return: got %s, want the answered attempt completed, APPROVED", tr.Status)
	}
	if p := customer.get(back); p.status != http.StatusSeeOther || p.header.Get("Location") != hpp+"/3ds?purchase_reference="+ref {
		t.Errorf("the customer's own browser: got %d to %q, want 303 to its page", p.status, p.header.Get("Location"))
	}
}

// TestPayingAgainCancelsTheBrowsersOwnAttempt: a customer who presses
// Back from the challenge page, or clicks Pay twice, pays again from the
// browser whose 3-D Secure attempt holds the link. That attempt, which has
// taken no money, is cancelled and the new one goes ahead; another
// browser still finds the link busy.
func TestPayingAgainCancelsTheBrowsersOwnAttempt(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { payAgainFromTheSameBrowser(t, start(t)) })
	t.Run("postgres", func(t *testing.T) { payAgainFromTheSameBrowser(t, startPostgres(t)) })
}

func payAgainFromTheSameBrowser(t *testing.T, env *apitest.Env) {
	m := env.Onboard()
	r, hpp, b, csrf := openPage(t, env, m)
	firstPay := b.post(hpp, cardForm(csrf, card3DS))
	first := challengeRef(t, firstPay)

	other := newBrowser(t, env)
	if p := other.post(hpp, cardForm(other.get(hpp).csrf(t), cardOK)); p.status != http.StatusConflict || !strings.Contains(p.body, "in progress") {
		t.Errorf("another browser during the attempt: got %d, want 409 in progress", p.status)
	}
	if tr := transaction(t, env, m, first); tr.Status != paylink.StatusRequiresAuthentication {
		t.Fatalf("another browser's payment touched the attempt: got %s", tr.Status)
	}

	// Two clicks at once on Pay with the challenge card, then Back and a
	// plain card: each new attempt cancels the one before it.
	var wg sync.WaitGroup
	clicks := make([]page, 2)
	for i := range clicks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			clicks[i] = b.post(hpp, cardForm(csrf, card3DS))
		}()
	}
	wg.Wait()
	refs := []string{first, challengeRef(t, clicks[0]), challengeRef(t, clicks[1])}
	paid := b.post(hpp, cardForm(csrf, cardOK))
	if paid.status != http.StatusSeeOther || paid.header.Get("Location") != strings.TrimPrefix(hpp, env.Server.URL) {
		t.Fatalf("paying again: got %d to %q, want 303 to the paid page", paid.status, paid.header.Get("Location"))
	}
	st := linkState(t, env, m, r.Str("id"))
	if st.Str("status") != "paid" {
		t.Fatalf("got link %s, want paid", st.Raw)
	}
	for _, ref := range refs {
		tr := transaction(t, env, m, ref)
		if tr.Status != paylink.StatusDeclined || tr.Details.ThreeDS.Reason != paylink.ThreeDSCanceled || tr.Details.AuthCode != "" {
			t.Errorf("attempt %s: got %s (%+v), want DECLINED, canceled, not authorised", ref, tr.Status, tr.Details.ThreeDS)
		}
		if ref == st.Str("transaction_reference") {
			t.Errorf("the link is paid by the cancelled attempt %s", ref)
		}
	}
	if p := b.get(firstPay.header.Get("Location")); !strings.Contains(p.body, "replaced by a newer one") {
		t.Errorf("the cancelled attempt's challenge page: got %d, want it to say the payment was replaced:\n%s", p.status, p.body)
	}
}

// TestWalletOrZipCancelsTheBrowsersOwnAttempt: a customer whose 3-D Secure
// challenge is open goes back and pays with Apple Pay, Google Pay or Zip
// instead: the sheet opens and the payment goes ahead, cancelling the
// card attempt, as paying by card again does.
func TestWalletOrZipCancelsTheBrowsersOwnAttempt(t *testing.T) {
	env := start(t)
	m := env.Onboard()
	for _, path := range []string{"/wallet/applepay", "/wallet/googlepay", "/zip"} {
		t.Run(path, func(t *testing.T) {
			r, hpp, b, csrf := openPage(t, env, m)
			first := challengeRef(t, b.post(hpp, cardForm(csrf, card3DS)))
			f := url.Values{"csrf": {csrf}, "first_name": {"Sam"}}
			if sheet := b.post(hpp+path, f); sheet.status != http.StatusOK {
				t.Fatalf("sheet during the open attempt: got %d, want 200", sheet.status)
			}
			if done := b.post(hpp+path+"/confirm", f); done.status != http.StatusSeeOther {
				t.Fatalf("confirm: got %d, want 303", done.status)
			}
			if st := linkState(t, env, m, r.Str("id")); st.Str("status") != "paid" || st.Str("transaction_reference") == first {
				t.Errorf("got link %s, want paid by the new payment", st.Raw)
			}
			if tr := transaction(t, env, m, first); tr.Status != paylink.StatusDeclined || tr.Details.ThreeDS.Reason != paylink.ThreeDSCanceled {
				t.Errorf("the card attempt: got %s (%+v), want DECLINED, canceled", tr.Status, tr.Details.ThreeDS)
			}
		})
	}
}

// gatedProcessor is the sandbox acquirer whose first authorisation waits
// for its gate: an acquirer slow to answer with the challenge.
type gatedProcessor struct {
	processor.Sandbox
	asked, gate chan struct{}
	once        sync.Once
}

func (p *gatedProcessor) Authorize(ctx context.Context, req paylink.AuthRequest) (paylink.AuthResult, error) {
	p.once.Do(func() {
		close(p.asked)
		<-p.gate
	})
	return p.Sandbox.Authorize(ctx, req)
}

// TestSecondClickWhileTheFirstStartsSaysToWait: with the attempt recorded
// PROCESSING before the acquirer is asked (--record-processing-first), a
// second click that arrives while the first is being set up cannot cancel
// it (the acquirer has it); it is told to wait and press Pay again, and
// that later payment cancels the first, which by then awaits its
// challenge.
func TestSecondClickWhileTheFirstStartsSaysToWait(t *testing.T) {
	proc := &gatedProcessor{asked: make(chan struct{}), gate: make(chan struct{})}
	env := apitest.Start(t, apitest.Options{Processor: proc, Config: paylink.Config{RecordProcessingFirst: true}})
	m := env.Onboard()
	r, hpp, b, csrf := openPage(t, env, m)
	firstClick := make(chan page, 1)
	go func() { firstClick <- b.post(hpp, cardForm(csrf, card3DS)) }()
	<-proc.asked
	second := b.post(hpp, cardForm(csrf, card3DS))
	close(proc.gate)
	if second.status != http.StatusConflict || !strings.Contains(second.body, "still being set up") {
		t.Errorf("second click: got %d, want 409 telling the customer to wait and pay again", second.status)
	}
	first := challengeRef(t, <-firstClick)
	if paid := b.post(hpp, cardForm(csrf, cardOK)); paid.status != http.StatusSeeOther {
		t.Fatalf("paying again: got %d, want 303", paid.status)
	}
	if tr := transaction(t, env, m, first); tr.Status != paylink.StatusDeclined || tr.Details.ThreeDS.Reason != paylink.ThreeDSCanceled {
		t.Errorf("the first attempt: got %s (%+v), want DECLINED, canceled", tr.Status, tr.Details.ThreeDS)
	}
	if st := linkState(t, env, m, r.Str("id")); st.Str("status") != "paid" || st.Str("transaction_reference") == first {
		t.Errorf("got link %s, want paid by the later payment", st.Raw)
	}
}
