package checkout_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
	"github.com/paylink/paylink/internal/browsertest"
)

// card3DS asks the sandbox issuer for a challenge.
const card3DS = "4000000000003220"

// challenged is the end of a challenge flow: the link's state, the
// customer's browser, the hosted page's address and what it showed.
type challenged struct {
	link apitest.Response
	b    *browser
	hpp  string
	page string
}

// challengePay pays a link with the challenge card over plain HTTP and
// answers the challenge with outcome.
func challengePay(t *testing.T, env *apitest.Env, m *apitest.Merchant, outcome string) challenged {
	t.Helper()
	r := link(t, env, m, "10.50", nil)
	hpp, _ := pageURLs(r)
	b := newBrowser(t, env)
	toChallenge := b.post(hpp, cardForm(b.get(hpp).csrf(t), card3DS))
	challengeURL := toChallenge.header.Get("Location")
	if toChallenge.status != http.StatusSeeOther || !strings.Contains(challengeURL, paylink.ChallengePath) {
		t.Fatalf("pay: got %d to %q, want 303 to the challenge page", toChallenge.status, challengeURL)
	}
	if st := linkState(t, env, m, r.Str("id")); st.Str("status") != "unpaid" {
		t.Errorf("during the challenge: got link %s, want unpaid", st.Raw)
	}
	challenge := b.get(challengeURL)
	for _, want := range []string{"Acme Coffee", "10.63", "400000******3220"} {
		if challenge.status != http.StatusOK || !strings.Contains(challenge.body, want) {
			t.Fatalf("challenge page: got %d, want it to show %q", challenge.status, want)
		}
	}
	back := b.post(challengeURL, url.Values{"outcome": {outcome}})
	returnURL := back.header.Get("Location")
	if back.status != http.StatusSeeOther || !strings.HasPrefix(returnURL, env.Server.URL+paylink.LinkReturnPath+r.Str("id")+"?purchase_reference=pr_") {
		t.Fatalf("answer: got %d to %q, want 303 to the link's return address", back.status, returnURL)
	}
	ret := b.get(returnURL)
	pageURL := ret.header.Get("Location")
	if ret.status != http.StatusSeeOther || !strings.HasPrefix(pageURL, hpp+"/3ds?purchase_reference=pr_") {
		t.Fatalf("return: got %d to %q, want 303 back to the hosted page", ret.status, pageURL)
	}
	result := b.get(pageURL)
	return challenged{link: linkState(t, env, m, r.Str("id")), b: b, hpp: hpp, page: result.body + b.get(hpp).body}
}

// TestThreeDSReturnNamesNoPageToken: the return address stored with a
// hosted page's 3-D Secure attempt (and given to the issuer) names the
// link by id, never by its page token, and leads only this link's
// recent attempt on to the page.
func TestThreeDSReturnNamesNoPageToken(t *testing.T) {
	env := start(t)
	m := env.Onboard()
	r, other := link(t, env, m, "10.50", nil), link(t, env, m, "10.50", nil)
	hpp, _ := pageURLs(r)
	b := newBrowser(t, env)
	toChallenge := b.post(hpp, cardForm(b.get(hpp).csrf(t), card3DS))
	ref, _, _ := strings.Cut(strings.TrimPrefix(toChallenge.header.Get("Location"), env.Server.URL+paylink.ChallengePath), ".")
	tr := transaction(t, env, m, ref)
	details, err := json.Marshal(tr.Details)
	if err != nil {
		t.Fatal(err)
	}
	token := strings.TrimPrefix(hpp, env.Server.URL+"/pay/")
	if strings.Contains(string(details), token) || tr.Details.ThreeDS == nil ||
		tr.Details.ThreeDS.RedirectURL != env.Server.URL+paylink.LinkReturnPath+r.Str("id") {
		t.Fatalf("stored details %s hold the page token or another return address", details)
	}
	back := env.Server.URL + paylink.LinkReturnPath + r.Str("id") + "?purchase_reference=" + ref
	tests := []struct {
		name, url string
		status    int
		location  string
	}{
		{"this link's attempt", back, http.StatusSeeOther, hpp + "/3ds?purchase_reference=" + ref},
		{"another link's id", env.Server.URL + paylink.LinkReturnPath + other.Str("id") + "?purchase_reference=" + ref, http.StatusNotFound, ""},
		{"an unknown reference", env.Server.URL + paylink.LinkReturnPath + r.Str("id") + "?purchase_reference=pr_nope", http.StatusNotFound, ""},
		{"no reference", env.Server.URL + paylink.LinkReturnPath + r.Str("id"), http.StatusNotFound, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if p := b.get(tt.url); p.status != tt.status || p.header.Get("Location") != tt.location {
				t.Errorf("got %d to %q, want %d to %q", p.status, p.header.Get("Location"), tt.status, tt.location)
			}
		})
	}
	// An attempt stored before attempts had their own end (an upgrade
	// from then) ends with its challenge, as attemptDeadline reads it.
	if _, err := env.WriterDB(t).Exec(`UPDATE transactions SET details = json_remove(details, '$.threeds.attempt_expires_at') WHERE reference = ?`, ref); err != nil {
		t.Fatal(err)
	}
	if d := transaction(t, env, m, ref).Details.ThreeDS; d.AttemptExpiresAt != 0 || d.ChallengeExpiresAt == 0 {
		t.Fatalf("the legacy attempt: got %+v", d)
	}
	if p := b.get(back); p.status != http.StatusSeeOther || p.header.Get("Location") != hpp+"/3ds?purchase_reference="+ref {
		t.Errorf("an attempt stored without its end: got %d to %q, want it led on to the page", p.status, p.header.Get("Location"))
	}
	env.Clock.Advance(paylink.DefaultAuthenticationTimeout + time.Hour)
	if p := b.get(back); p.status != http.StatusNotFound || !strings.Contains(p.body, "open the payment link again") {
		t.Errorf("an hour after the attempt ended: got %d, want 404 saying to open the link again", p.status)
	}
}

func TestThreeDSChallengeThroughTheHostedPage(t *testing.T) {
	env := start(t)
	m := env.Onboard()
	c := challengePay(t, env, m, "success")
	ref := c.link.Str("transaction_reference")
	if c.link.Str("status") != "paid" || !strings.Contains(c.page, ref) {
		t.Fatalf("after authentication: got link %s, want paid and its reference on the page", c.link.Raw)
	}
	tr := transaction(t, env, m, ref)
	if tr.Status != paylink.StatusApproved || tr.Details.ThreeDS == nil || tr.Details.ThreeDS.Result != "authenticated" ||
		tr.Details.ThreeDS.ChallengeIndicator != "challenge" || tr.Channel != paylink.ChannelHPP {
		t.Errorf("got %s with 3-D Secure %+v, want APPROVED, authenticated through a challenge", tr.Status, tr.Details.ThreeDS)
	}
}

func TestThreeDSFailureLetsTheCustomerRetry(t *testing.T) {
	env := start(t)
	m := env.Onboard()
	c := challengePay(t, env, m, "failure")
	if c.link.Str("status") != "unpaid" || !strings.Contains(c.page, "Payment not completed") {
		t.Fatalf("after failed authentication: got link %s, want unpaid with a failure message", c.link.Raw)
	}
	if p := c.b.post(c.hpp, cardForm(c.b.get(c.hpp).csrf(t), cardOK)); p.status != http.StatusSeeOther {
		t.Errorf("retry with another card: got %d, want 303", p.status)
	}
	if st := linkState(t, env, m, c.link.Str("id")); st.Str("status") != "paid" {
		t.Errorf("after the retry: got link %s, want paid", st.Raw)
	}
}

// TestBrowserThreeDSChallenge pays with the challenge card in Chromium,
// audits the challenge page, authenticates and sees success.
func TestBrowserThreeDSChallenge(t *testing.T) {
	env := start(t)
	m := env.Onboard()
	eachJSMode(t, env, m, func(t *testing.T, ctx context.Context, r apitest.Response, js bool) {
		fillCard(t, ctx, card3DS)
		browsertest.Submit(t, ctx, "pay")
		browsertest.WantText(t, ctx, "challenge", "Your bank asks you to confirm this card payment", "Acme Coffee")
		if js {
			audit(t, ctx, "the 3-D Secure challenge page")
		}
		browsertest.SubmitCSS(t, ctx, `button[value="success"]`)
		browsertest.WantText(t, ctx, "success", "Thank you, this link has been paid")
		if st := linkState(t, env, m, r.Str("id")); st.Str("status") != "paid" {
			t.Errorf("got link %s, want paid", st.Raw)
		}
	})
}

// TestAbandonedChallengeSaysSo: a challenge the customer never answered,
// declined by the expiry job, shows on the page as not completed in time,
// saying once that no money was taken.
func TestAbandonedChallengeSaysSo(t *testing.T) {
	env := start(t)
	m := env.Onboard()
	r := link(t, env, m, "10.50", nil)
	hpp, _ := pageURLs(r)
	b := newBrowser(t, env)
	toChallenge := b.post(hpp, cardForm(b.get(hpp).csrf(t), card3DS))
	ref, _, _ := strings.Cut(strings.TrimPrefix(toChallenge.header.Get("Location"), env.Server.URL+paylink.ChallengePath), ".")
	env.Clock.Advance(paylink.ChallengeTTL + time.Second)
	if n, err := env.Service.ExpireChallenges(context.Background()); err != nil || n != 1 {
		t.Fatalf("expiry job: ended %d, %v; want 1", n, err)
	}
	p := b.get(hpp + "/3ds?" + url.Values{"purchase_reference": {ref}}.Encode())
	if !strings.Contains(p.body, "3-D Secure authentication with the card issuer was not completed in time") {
		t.Errorf("return page: got %d %s, want it to say the authentication was not completed in time", p.status, p.body)
	}
	if n := strings.Count(strings.ToLower(p.body), "no money was taken"); n != 1 {
		t.Errorf("return page says %d times that no money was taken, want once", n)
	}
}

// TestReturnAfterTheJobEndedTheAttempt: the expiry job failed the
// answered attempt and another customer then paid the link; the first
// customer's return address shows why their payment did not complete and
// the link's payment, not the card form.
func TestReturnAfterTheJobEndedTheAttempt(t *testing.T) {
	env := start(t)
	m := env.Onboard()
	pageURL, _, first := answeredLinkAttempt(t, env, m)
	env.Clock.Advance(paylink.DefaultAuthenticationTimeout)
	if n, err := env.Service.ExpireChallenges(context.Background()); err != nil || n != 1 {
		t.Fatalf("expiry job: ended %d, %v; want 1", n, err)
	}
	second, err := payLinkWith(t, env, pageURL, cardOK)
	if err != nil || second.Status != paylink.StatusApproved {
		t.Fatalf("second attempt: got %+v, %v; want APPROVED", second, err)
	}
	p := newBrowser(t, env).get(pageURL + "/3ds?" + url.Values{"purchase_reference": {first.Reference}}.Encode())
	for _, want := range []string{"Payment not completed", "your card was not charged", "Thank you, this link has been paid", second.Reference} {
		if p.status != http.StatusOK || !strings.Contains(p.body, want) {
			t.Errorf("return page: got %d, want it to show %q", p.status, want)
		}
	}
	if strings.Contains(p.body, `id="card_number"`) || strings.Contains(p.body, "try again") {
		t.Errorf("return page offers to pay a paid link: %s", p.body)
	}
}

// TestReturnsAtOnceAllShowThePayment: the customer's browser loads the
// 3-D Secure return address several times at once (a double click, a
// restored tab). One load completes the payment; every other shows its
// outcome too, never "not confirmed yet" or an error.
func TestReturnsAtOnceAllShowThePayment(t *testing.T) {
	env := start(t)
	m := env.Onboard()
	pageURL, linkID, first := answeredLinkAttempt(t, env, m)
	returnURL := pageURL + "/3ds?" + url.Values{"purchase_reference": {first.Reference}}.Encode()
	c := newBrowser(t, env).c
	const loads = 10
	got := make(chan string, loads)
	for range loads {
		go func() {
			res, err := c.Get(returnURL)
			if err != nil {
				got <- err.Error()
				return
			}
			defer res.Body.Close()
			body, _ := io.ReadAll(res.Body)
			got <- fmt.Sprintf("%d %s %s", res.StatusCode, res.Header.Get("Location"), body)
		}()
	}
	for range loads {
		if answer := <-got; !strings.HasPrefix(answer, fmt.Sprintf("303 %s ", strings.TrimPrefix(pageURL, env.Server.URL))) {
			t.Errorf("a load of the return address got %.300s, want 303 to the paid link", answer)
		}
	}
	if st := linkState(t, env, m, linkID); st.Str("status") != "paid" || st.Str("transaction_reference") != first.Reference {
		t.Errorf("got link %s, want paid by %s", st.Raw, first.Reference)
	}
}
