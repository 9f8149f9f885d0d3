package checkout_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

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
	other := newBrowser(t, env) // its page opened before the attempt: it shows no form meanwhile
	otherCSRF := other.get(hpp).csrf(t)
	firstPay := b.post(hpp, cardForm(csrf, card3DS))
	first := challengeRef(t, firstPay)

	if p := other.post(hpp, cardForm(otherCSRF, cardOK)); p.status != http.StatusConflict || !strings.Contains(p.body, "in progress") {
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

// gatedPage opens a link's page on a site whose acquirer holds the first
// authorisation until gate is closed, with every attempt recorded
// PROCESSING first (--record-processing-first): a slow acquirer. first
// pays with number from the page's browser; it returns when the attempt
// holds the link and the acquirer has it.
func gatedPage(t *testing.T, number string) (env *apitest.Env, m *apitest.Merchant, r apitest.Response, hpp string, b *browser, csrf string, gate chan struct{}, first <-chan page) {
	t.Helper()
	env, proc := gatedSite(t)
	m = env.Onboard()
	r, hpp, b, csrf = openPage(t, env, m)
	firstClick := make(chan page, 1)
	go func() { firstClick <- b.post(hpp, cardForm(csrf, number)) }()
	<-proc.asked
	return env, m, r, hpp, b, csrf, proc.gate, firstClick
}

// gatedSite starts a site whose acquirer holds the first authorisation
// until its gate is closed, with every attempt recorded PROCESSING first
// (--record-processing-first): a slow acquirer.
func gatedSite(t *testing.T) (*apitest.Env, *gatedProcessor) {
	t.Helper()
	proc := &gatedProcessor{asked: make(chan struct{}), gate: make(chan struct{})}
	return apitest.Start(t, apitest.Options{Processor: proc, Config: paylink.Config{RecordProcessingFirst: true}}), proc
}

// TestSecondClickWhileTheFirstIsSlowSaysInProgress: a second click (or a
// reload) while the acquirer has not answered the first within the
// page's wait cannot cancel the first (the acquirer has it) and is no
// second attempt: it says the payment is not confirmed yet and that one
// is in progress, without a form, as the page does to every browser
// meanwhile. Once the first waits for its challenge, its own browser may
// pay again, which cancels it.
func TestSecondClickWhileTheFirstIsSlowSaysInProgress(t *testing.T) {
	env, m, r, hpp, b, csrf, gate, firstClick := gatedPage(t, card3DS)
	second := b.post(hpp, cardForm(csrf, card3DS))
	inProgress := func(who string, p page) {
		t.Helper()
		if p.status != http.StatusOK || !strings.Contains(p.body, "A payment on this link is in progress") || strings.Contains(p.body, `id="payform"`) {
			t.Errorf("%s: got %d, want 200 saying a payment is in progress, without the form:\n%s", who, p.status, p.body)
		}
	}
	inProgress("second click", second)
	if !strings.Contains(second.body, "not confirmed yet") {
		t.Errorf("second click: want it to say the payment is not confirmed yet:\n%s", second.body)
	}
	inProgress("the page in the same browser", b.get(hpp))
	inProgress("the page in another browser", newBrowser(t, env).get(hpp))
	close(gate)
	first := challengeRef(t, <-firstClick)
	if p := b.get(hpp); !strings.Contains(p.body, `id="payform"`) {
		t.Errorf("the page while its own challenge is open: got %d, want the form (paying again cancels the challenge):\n%s", p.status, p.body)
	}
	if paid := b.post(hpp, cardForm(csrf, cardOK)); paid.status != http.StatusSeeOther {
		t.Fatalf("paying again: got %d, want 303", paid.status)
	}
	if tr := transaction(t, env, m, first); tr.Status != paylink.StatusDeclined || tr.Details.ThreeDS.Reason != paylink.ThreeDSCanceled {
		t.Errorf("the first attempt: got %s (%+v), want DECLINED, canceled", tr.Status, tr.Details.ThreeDS)
	}
	if st := linkState(t, env, m, r.Str("id")); st.Str("status") != "paid" || st.Str("transaction_reference") == first || st.Str("attempts") != "2" {
		t.Errorf("got link %s, want paid by the later payment, after 2 attempts", st.Raw)
	}
}

// TestSecondClickShowsTheFirstsOutcome: a second click while the acquirer
// answers the first (a double click on a slow acquirer) waits for the
// first's outcome: a card approved shows the paid page, no second attempt
// made; a first that asks for its challenge is replaced by the second
// click's payment, which leads to its own challenge.
func TestSecondClickShowsTheFirstsOutcome(t *testing.T) {
	t.Run("approved", func(t *testing.T) {
		env, m, r, hpp, b, csrf, gate, firstClick := gatedPage(t, cardOK)
		time.AfterFunc(300*time.Millisecond, func() { close(gate) })
		second := b.post(hpp, cardForm(csrf, cardOK))
		if second.status != http.StatusSeeOther || second.header.Get("Location") != strings.TrimPrefix(hpp, env.Server.URL) {
			t.Errorf("second click: got %d to %q, want 303 to the paid page:\n%s", second.status, second.header.Get("Location"), second.body)
		}
		if p := <-firstClick; p.status != http.StatusSeeOther {
			t.Errorf("first click: got %d, want 303", p.status)
		}
		if st := linkState(t, env, m, r.Str("id")); st.Str("status") != "paid" || st.Str("attempts") != "1" {
			t.Errorf("got link %s, want paid after 1 attempt", st.Raw)
		}
	})
	t.Run("challenge", func(t *testing.T) {
		env, m, r, hpp, b, csrf, gate, firstClick := gatedPage(t, card3DS)
		time.AfterFunc(300*time.Millisecond, func() { close(gate) })
		second := challengeRef(t, b.post(hpp, cardForm(csrf, card3DS)))
		first := challengeRef(t, <-firstClick)
		if tr := transaction(t, env, m, first); tr.Status != paylink.StatusDeclined || tr.Details.ThreeDS.Reason != paylink.ThreeDSCanceled {
			t.Errorf("the first attempt: got %s (%+v), want DECLINED, canceled", tr.Status, tr.Details.ThreeDS)
		}
		if tr := transaction(t, env, m, second); tr.Status != paylink.StatusRequiresAuthentication {
			t.Errorf("the second attempt: got %s, want REQUIRES_AUTHENTICATION", tr.Status)
		}
		if st := linkState(t, env, m, r.Str("id")); st.Str("status") != "unpaid" || st.Str("attempts") != "2" {
			t.Errorf("got link %s, want unpaid after 2 attempts", st.Raw)
		}
	})
}

// TestEveryMethodsSecondClickShowsTheFirstsOutcome: as a card's on the
// hosted page, a second press of a wallet sheet's or Zip's confirm, or of
// the virtual terminal's Pay, while the acquirer answers the same
// browser's first payment waits for that payment's outcome and shows the
// paid page: no second attempt, no "in progress" page. Another browser
// pressing meanwhile is still refused as in progress.
func TestEveryMethodsSecondClickShowsTheFirstsOutcome(t *testing.T) {
	for _, tt := range []struct {
		name, first, second string
		vt                  bool
	}{
		{name: "wallet sheet twice", first: "/wallet/applepay/confirm", second: "/wallet/applepay/confirm"},
		{name: "Zip after a wallet", first: "/wallet/googlepay/confirm", second: "/zip/confirm"},
		{name: "virtual terminal", vt: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			form := func(csrf string) url.Values {
				if tt.vt {
					return cardForm(csrf, cardOK)
				}
				return url.Values{"csrf": {csrf}, "first_name": {"Sam"}, "email": {"sam@example.com"}}
			}
			env, proc := gatedSite(t)
			m := env.Onboard()
			r := link(t, env, m, "10.50", nil)
			u, vt := pageURLs(r)
			if tt.vt {
				u = vt
			}
			b, other := newBrowser(t, env), newBrowser(t, env)
			csrf, otherCSRF := b.get(u).csrf(t), other.get(u).csrf(t)
			first := make(chan page, 1)
			go func() { first <- b.post(u+tt.first, form(csrf)) }()
			<-proc.asked
			release := time.AfterFunc(time.Minute, func() { close(proc.gate) }) // a failing check never leaves the first press hanging
			if p := other.post(u+tt.second, form(otherCSRF)); p.status != http.StatusConflict || !strings.Contains(p.body, "in progress") {
				t.Errorf("another browser meanwhile: got %d, want 409 in progress:\n%s", p.status, p.body)
			}
			release.Reset(300 * time.Millisecond)
			second := b.post(u+tt.second, form(csrf))
			if second.status != http.StatusSeeOther || second.header.Get("Location") != strings.TrimPrefix(u, env.Server.URL) {
				t.Errorf("second press: got %d to %q, want 303 to the paid page:\n%s", second.status, second.header.Get("Location"), second.body)
			}
			if p := <-first; p.status != http.StatusSeeOther {
				t.Errorf("first press: got %d, want 303:\n%s", p.status, p.body)
			}
			st := linkState(t, env, m, r.Str("id"))
			if st.Str("status") != "paid" || st.Str("attempts") != "1" {
				t.Errorf("got link %s, want paid after 1 attempt", st.Raw)
			}
			if tr := transaction(t, env, m, st.Str("transaction_reference")); tr.Details.BrowserHash == nil {
				t.Errorf("the payment keeps no browser hash")
			}
		})
	}
}

// TestTheTerminalNeverVoidsAChallengeInItsBrowser: the virtual terminal
// shares the browser's cookie with the hosted page, so an agent paying
// from a browser where a customer left a challenge open (a counter
// device, staff trying a link) finds the link busy, as any other payment
// does: only the hosted page's own payment replaces the challenge
// (verification sweep: the terminal cancelled it unseen).
func TestTheTerminalNeverVoidsAChallengeInItsBrowser(t *testing.T) {
	env := start(t)
	m := env.Onboard()
	r, hpp, b, csrf := openPage(t, env, m)
	_, vt := pageURLs(r)
	vtCSRF := b.get(vt).csrf(t)
	first := challengeRef(t, b.post(hpp, cardForm(csrf, card3DS)))
	if p := b.post(vt, cardForm(vtCSRF, cardOK)); p.status != http.StatusConflict || !strings.Contains(p.body, "in progress") {
		t.Errorf("the terminal during the customer's challenge: got %d, want 409 in progress:\n%s", p.status, p.body)
	}
	if tr := transaction(t, env, m, first); tr.Status != paylink.StatusRequiresAuthentication {
		t.Errorf("the customer's challenge: got %s, want it still REQUIRES_AUTHENTICATION", tr.Status)
	}
	if st := linkState(t, env, m, r.Str("id")); st.Str("status") != "unpaid" || st.Str("attempts") != "1" {
		t.Errorf("got link %s, want unpaid after 1 attempt", st.Raw)
	}
}
