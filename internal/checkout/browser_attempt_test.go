package checkout_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
	"github.com/paylink/paylink/internal/browsertest"
)

// blockReturns makes the tab fail every request to a hosted page's 3-D
// Secure return address, as if the customer closed the tab after
// answering the challenge, until unblock is called.
func blockReturns(t *testing.T, ctx context.Context) (unblock func()) {
	t.Helper()
	paused := make(chan fetch.RequestID, 16)
	if err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*fetch.EventRequestPaused); ok {
			paused <- e.RequestID
		}
	}); err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			select {
			case id := <-paused:
				chromedp.Call(ctx, fetch.FailRequest, fetch.FailRequestParams{RequestID: id, ErrorReason: network.ErrorReasonBlockedByClient})
			case <-ctx.Done():
				return
			}
		}
	}()
	pattern := []*fetch.RequestPattern{{URLPattern: "*/3ds?purchase_reference=*"}}
	if _, err := chromedp.Call(ctx, fetch.Enable, fetch.EnableParams{Patterns: pattern}); err != nil {
		t.Fatalf("block the return address: %v", err)
	}
	return func() {
		if _, err := chromedp.Call(ctx, fetch.Disable, cdp.Empty{}); err != nil {
			t.Fatalf("unblock the return address: %v", err)
		}
	}
}

// TestBrowserLateThreeDSReturn: a customer answers the challenge in
// Chromium but never comes back to the hosted page; once the attempt's
// lifetime is over the link is paid by someone else, or cancelled; the
// first browser then opens its return address (history, reload) and sees
// a clear page, and nothing is charged a second time: one APPROVED
// transaction and one approval webhook at most for the link.
func TestBrowserLateThreeDSReturn(t *testing.T) {
	chromium.Need(t)
	env := start(t)
	hooks := newHookReceiver(t)
	m := env.Onboard(func(n *paylink.NewMerchant) {
		n.Settings.Webhook.URL, n.Settings.Webhook.Domains = hooks.URL+"/hooks", []string{"127.0.0.1"}
	})
	tests := []struct {
		name      string
		meanwhile func(t *testing.T, r apitest.Response)
		want      string
		status    string // the link's, after the late return
		approvals int
	}{
		{"paid by another customer", func(t *testing.T, r apitest.Response) {
			other := tab(t, true)
			browsertest.Run(t, other, "open link", chromedp.Navigate(r.Str("url")))
			fillCard(t, other, cardOK)
			browsertest.Submit(t, other, "pay")
			browsertest.WantText(t, other, "second customer", "Thank you, this link has been paid")
		}, "This payment link has already been paid by another payment; your card was not charged", "paid", 1},
		{"cancelled by the merchant", func(t *testing.T, r apitest.Response) {
			if c := env.Post("/v5/payment-links/"+r.Str("id")+"/cancel", m, nil); c.Str("status") != "cancelled" {
				t.Fatalf("cancel: got %s, want cancelled", c.Raw)
			}
		}, "This payment link has been cancelled; your card was not charged", "cancelled", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := link(t, env, m, "10.50", nil)
			ctx := tab(t, true)
			browsertest.Run(t, ctx, "open link", chromedp.Navigate(r.Str("url")))
			fillCard(t, ctx, card3DS)
			browsertest.Submit(t, ctx, "pay")
			browsertest.WantText(t, ctx, "challenge", "Your bank asks you to confirm this card payment")
			challengeURL, err := chromedp.Run(ctx, chromedp.Location())
			if err != nil {
				t.Fatal(err)
			}
			ref, _, _ := strings.Cut(challengeURL[strings.Index(challengeURL, paylink.ChallengePath)+len(paylink.ChallengePath):], ".")
			unblock := blockReturns(t, ctx)
			if _, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(`button[value="success"]`))); err == nil {
				t.Fatal("answering the challenge: the return address was reached, want it blocked")
			}
			if d := transaction(t, env, m, ref).Details.ThreeDS; !d.ChallengeDone || d.Result != paylink.ThreeDSAuthenticated {
				t.Fatalf("after answering: got 3-D Secure %+v, want the challenge answered", d)
			}
			env.Clock.Advance(paylink.DefaultAuthenticationTimeout)
			tt.meanwhile(t, r)
			unblock()
			browsertest.Run(t, ctx, "late return", chromedp.Navigate(r.Str("url")+"/3ds?"+url.Values{"purchase_reference": {ref}}.Encode()))
			browsertest.WantText(t, ctx, "late return", tt.want)
			if tr := transaction(t, env, m, ref); tr.Status != paylink.StatusFailed || tr.Details.AuthCode != "" {
				t.Errorf("first attempt: got %s with auth code %q, want FAILED, never authorised", tr.Status, tr.Details.AuthCode)
			}
			st := linkState(t, env, m, r.Str("id"))
			if st.Str("status") != tt.status || st.Str("transaction_reference") == ref {
				t.Errorf("link: got %s, want %s and not paid by the late attempt", st.Raw, tt.status)
			}
			env.WaitWebhooks()
			approvals := 0
			for _, w := range hooks.take() {
				if w["payment_link"] == r.Str("id") && w["status"] == "APPROVED" {
					approvals++
				}
			}
			if approvals != tt.approvals {
				t.Errorf("approval webhooks for the link: got %d, want %d", approvals, tt.approvals)
			}
		})
	}
}

// TestBrowserDoubleClickOnASlowAcquirer: Pay clicked twice, 300 ms apart,
// while the acquirer takes 2 seconds to answer. With JavaScript the
// button is disabled after the first click; without, the second request
// waits for the first attempt's outcome. Either way the page ends on the
// payment received, one attempt made.
func TestBrowserDoubleClickOnASlowAcquirer(t *testing.T) {
	env := start(t)
	m := env.Onboard()
	env.Sandbox.SetDelay(2 * time.Second)
	eachJSMode(t, env, m, func(t *testing.T, ctx context.Context, r apitest.Response, js bool) {
		fillCard(t, ctx, cardOK)
		// Both clicks at the button's place: a query for the button would
		// wait for the page the first click is loading.
		browsertest.Run(t, ctx, "show Pay", chromedp.ScrollIntoView(chromedp.ID("pay")))
		at, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`(r => [r.x + r.width / 2, r.y + r.height / 2])(document.getElementById("pay").getBoundingClientRect())`))
		if err != nil || len(at) != 2 {
			t.Fatalf("where Pay is: got %v (%v)", at, err)
		}
		click := chromedp.MouseClickXY(at[0], at[1])
		if js { // clicked from the page, to read the button before the next page can replace it
			if off, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(b => { b.click(); return b.disabled; })(document.getElementById("pay"))`)); err != nil || !off {
				t.Errorf("Pay after the first click: got disabled %v (%v), want disabled", off, err)
			}
		} else {
			browsertest.Run(t, ctx, "first click", click)
		}
		time.Sleep(300 * time.Millisecond)
		browsertest.Run(t, ctx, "second click", click)
		browsertest.Run(t, ctx, "wait for the next page", chromedp.WaitVisible(chromedp.CSS("#paid, #alert, #errsum")))
		browsertest.WantText(t, ctx, "after two clicks", "Thank you, this link has been paid", "paid with Visa ending 1111")
		if st := linkState(t, env, m, r.Str("id")); st.Str("status") != "paid" || st.Str("attempts") != "1" {
			t.Errorf("got link %s, want paid after 1 attempt", st.Raw)
		}
	})
}
