package checkout_test

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
	"github.com/paylink/paylink/internal/browsertest"
)

// jsModes runs a browser flow with JavaScript on and off.
var jsModes = []struct {
	name string
	js   bool
}{{"javascript", true}, {"no javascript", false}}

// TestBrowserCardDeclineThenApprove: open a link, see the pre-filled
// details and the amount, type a card, see the surcharge and total update
// (with JavaScript), pay a declined card, then a good one, see success;
// a tab opened before the payment then cannot pay again.
func TestBrowserCardDeclineThenApprove(t *testing.T) {
	chromium.Need(t)
	env := start(t)
	m := env.Onboard()
	for _, mode := range jsModes {
		t.Run(mode.name, func(t *testing.T) {
			r := link(t, env, m, "10.50", nil)
			ctx, other := tab(t, mode.js), tab(t, mode.js)
			browsertest.Run(t, ctx, "open link", chromedp.Navigate(r.Str("url")))
			browsertest.Run(t, other, "open link in a second tab", chromedp.Navigate(r.Str("url")))
			first, err := chromedp.Run(ctx, chromedp.Value(chromedp.ID("first_name")))
			if err != nil || first != "Jo" {
				t.Fatalf("pre-filled first name: got %q (%v), want Jo", first, err)
			}
			browsertest.WantText(t, ctx, "open", "Pay Acme Coffee", "ORDER-42", "AUD 10.50", "Apple Pay", "Google Pay", "Zip")
			if mode.js {
				audit(t, ctx, "the hosted page")
			}
			fillCard(t, ctx, cardDecline)
			if mode.js {
				waitTotal(t, ctx, "AUD 10.63")
				browsertest.WantText(t, ctx, "surcharge", "AUD 0.13 (1.2%, Visa)")
				screenshot(t, ctx, "hosted-page", 375)
				screenshot(t, ctx, "hosted-page", 1280)
				fitsPhone(t, ctx)
			}
			browsertest.Submit(t, ctx, "pay")
			browsertest.WantText(t, ctx, "decline", "Payment not completed", "declined by your bank", "No money was taken")
			fillCard(t, ctx, cardOK)
			browsertest.Submit(t, ctx, "pay")
			browsertest.WantText(t, ctx, "success", "Thank you, this link has been paid", "AUD 10.63 paid with Visa ending 1111")
			ref, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("paid-ref")))
			if err != nil || !strings.HasPrefix(ref, "pr_") {
				t.Fatalf("transaction reference: got %q (%v), want pr_...", ref, err)
			}
			fillCard(t, other, cardOK)
			browsertest.Submit(t, other, "pay")
			browsertest.WantText(t, other, "second payment", "already been paid", ref)
		})
	}
}

// TestBrowserWalletsAndZip pays with each simulated method.
func TestBrowserWalletsAndZip(t *testing.T) {
	chromium.Need(t)
	env := start(t)
	m := env.Onboard()
	tests := []struct {
		name, button, paid string
		js                 bool
	}{
		{"Apple Pay", `form[action$="/wallet/applepay"] button`, "AUD 10.63 paid with Apple Pay", true},
		{"Google Pay", `form[action$="/wallet/googlepay"] button`, "AUD 10.63 paid with Google Pay", false},
		{"Zip", `form[action$="/zip"] button`, "AUD 10.50 paid with Zip", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := link(t, env, m, "10.50", nil)
			ctx := tab(t, tt.js)
			browsertest.Run(t, ctx, "open link", chromedp.Navigate(r.Str("url")))
			browsertest.SubmitCSS(t, ctx, tt.button)
			browsertest.WantText(t, ctx, "sheet", tt.name+" (sandbox)", "Pay Acme Coffee")
			if tt.js {
				audit(t, ctx, "the "+tt.name+" sheet")
				screenshot(t, ctx, "sheet-"+strings.ToLower(strings.ReplaceAll(tt.name, " ", "")), 375)
			}
			browsertest.Submit(t, ctx, "sheet-pay")
			browsertest.WantText(t, ctx, "success", "Thank you, this link has been paid", tt.paid)
		})
	}
}

// TestBrowserEnterPaysWithTheCard: pressing Enter in a card field pays
// with the card typed, not with the first wallet's button (the form's
// default button, before each wallet had a form of its own), with and
// without JavaScript.
func TestBrowserEnterPaysWithTheCard(t *testing.T) {
	env := start(t)
	eachJSMode(t, env, env.Onboard(), func(t *testing.T, ctx context.Context, _ apitest.Response, _ bool) {
		fillCard(t, ctx, cardOK)
		if _, err := chromedp.RunResponse(ctx, chromedp.SendKeys(chromedp.ID("card_cvc"), kb.Enter)); err != nil {
			t.Fatalf("press Enter in the security code: %v", err)
		}
		browsertest.WantText(t, ctx, "after Enter", "Thank you, this link has been paid", "paid with Visa ending 1111")
	})
}

// browserZone is the time zone the browser is given, so that the zone the
// script reads when the form is sent differs from the server's default.
const browserZone = "Australia/Perth"

// TestBrowserVirtualTerminal takes a phone payment: no wallets, with the
// customer reference and invoice number.
func TestBrowserVirtualTerminal(t *testing.T) {
	chromium.Need(t)
	env := start(t)
	m := env.Onboard()
	for _, mode := range jsModes {
		t.Run(mode.name, func(t *testing.T) {
			r := link(t, env, m, "10.50", nil)
			ctx := tab(t, mode.js)
			if _, err := chromedp.Call(ctx, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: browserZone}); err != nil {
				t.Fatalf("set the browser's time zone: %v", err)
			}
			browsertest.Run(t, ctx, "open terminal", chromedp.Navigate(r.Str("virtual_terminal_url")))
			page := browsertest.Text(t, ctx)
			if strings.Contains(page, "Apple Pay") || strings.Contains(page, "Google Pay") || strings.Contains(page, "Zip") {
				t.Fatalf("virtual terminal offers wallets or Zip: %q", page)
			}
			if mode.js {
				audit(t, ctx, "the virtual terminal")
				screenshot(t, ctx, "virtual-terminal", 1280)
			}
			ref, _ := chromedp.Run(ctx, chromedp.Value(chromedp.ID("customer_reference")))
			if ref != "CUST-7" {
				t.Errorf("customer reference: got %q, want the link's CUST-7 pre-filled", ref)
			}
			browsertest.Run(t, ctx, "order fields", chromedp.Clear(chromedp.ID("customer_reference")),
				chromedp.SendKeys(chromedp.ID("customer_reference"), "PHONE-1"),
				chromedp.SendKeys(chromedp.ID("invoice_number"), "INV-9"))
			fillCard(t, ctx, cardOK)
			browsertest.Submit(t, ctx, "pay")
			browsertest.WantText(t, ctx, "success", "Thank you, this link has been paid")
			st := linkState(t, env, m, r.Str("id"))
			tr := transaction(t, env, m, st.Str("transaction_reference"))
			if tr.Channel != paylink.ChannelVT || tr.InvoiceNumber != "INV-9" || tr.Details.Customer.Reference != "PHONE-1" {
				t.Errorf("got channel %s invoice %q reference %q, want VT INV-9 PHONE-1", tr.Channel, tr.InvoiceNumber, tr.Details.Customer.Reference)
			}
			want := "UTC"
			if mode.js {
				want = browserZone
			}
			if tz := tr.Details.Customer.Timezone; tz != want {
				t.Errorf("timezone: got %q, want %q (the browser's zone with JavaScript, UTC without)", tz, want)
			}
		})
	}
}

// TestBrowserLiveValidation shows errors as the customer types, announced
// through the fields' live regions, and keeps focus on the first problem
// in reading order.
func TestBrowserLiveValidation(t *testing.T) {
	chromium.Need(t)
	env := start(t)
	m := env.Onboard()
	r := link(t, env, m, "10.50", nil)
	ctx := tab(t, true)
	browsertest.Run(t, ctx, "open", chromedp.Navigate(r.Str("url")),
		chromedp.SendKeys(chromedp.ID("card_holder"), "Jo Citizen"),
		chromedp.SendKeys(chromedp.ID("card_number"), "4111111111111112"),
		chromedp.SendKeys(chromedp.ID("card_expiry"), "1"))
	browsertest.Run(t, ctx, "submit", chromedp.Click(chromedp.ID("pay")))
	msg, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("card_number-err")))
	if err != nil || msg != "This card number is not valid." {
		t.Errorf("card number error: got %q (%v), want the Luhn error", msg, err)
	}
	brand, _ := chromedp.Run(ctx, chromedp.Text(chromedp.ID("brand")))
	focused, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.activeElement.id`))
	if brand != "Visa" || focused != "card_number" {
		t.Errorf("got brand %q and focus on %q, want Visa and card_number", brand, focused)
	}
	// An empty name on card is announced like the other card fields (a
	// message in its live region, tied to the input by aria-describedby),
	// and focus goes to the first problem in reading order: the name,
	// before a bad card number.
	holder := `(() => { const h = document.getElementById("card_holder");
		return [document.activeElement.id, h.getAttribute("aria-invalid"), h.getAttribute("aria-describedby"),
			(document.getElementById(h.getAttribute("aria-describedby")) || {}).textContent].join("|"); })()`
	for _, number := range []string{cardOK, "4111111111111112"} {
		browsertest.Run(t, ctx, "no name", chromedp.Navigate(r.Str("url")),
			chromedp.SendKeys(chromedp.ID("card_number"), number),
			chromedp.SendKeys(chromedp.ID("card_expiry"), "1239"),
			chromedp.SendKeys(chromedp.ID("card_cvc"), "123"),
			chromedp.Click(chromedp.ID("pay")))
		want := "card_holder|true|card_holder-err|Enter the name on the card."
		if got, err := chromedp.Run(ctx, chromedp.Evaluate[string](holder)); err != nil || got != want {
			t.Errorf("card %s, no name: got focus|aria-invalid|aria-describedby|message %q (%v), want %q", number, got, err, want)
		}
	}
	if st := linkState(t, env, m, r.Str("id")); st.Str("attempts") != "0" {
		t.Errorf("got %s attempts, want 0: the form must not be sent", st.Str("attempts"))
	}
}

// TestBrowserLongNamesFitAPhone: a merchant reference of 108 characters
// and a trading name of 128, neither with a space, wrap instead of making
// each page scroll sideways on a phone: the hosted page, its decline, the
// wallet sheet, Zip's page, the virtual terminal and the paid page.
func TestBrowserLongNamesFitAPhone(t *testing.T) {
	chromium.Need(t)
	env := start(t)
	trading := strings.Repeat("W", 128)
	m := env.Onboard(func(n *paylink.NewMerchant) { n.TradingName = trading })
	r := link(t, env, m, "10.50", map[string]any{"merchantReference": "ORDER-" + strings.Repeat("0123456789", 10) + "AB"})
	pages := []struct {
		name string
		open func(t *testing.T, ctx context.Context)
	}{
		{"hosted page", func(*testing.T, context.Context) {}},
		{"decline", func(t *testing.T, ctx context.Context) {
			fillCard(t, ctx, cardDecline)
			browsertest.Submit(t, ctx, "pay")
			browsertest.WantText(t, ctx, "decline", "Payment not completed")
		}},
		{"wallet sheet", func(t *testing.T, ctx context.Context) {
			browsertest.SubmitCSS(t, ctx, `form[action$="/wallet/applepay"] button`)
		}},
		{"Zip", func(t *testing.T, ctx context.Context) { browsertest.SubmitCSS(t, ctx, `form[action$="/zip"] button`) }},
		{"virtual terminal", func(t *testing.T, ctx context.Context) { browsertest.Navigate(t, ctx, r.Str("virtual_terminal_url")) }},
		{"paid", func(t *testing.T, ctx context.Context) {
			paid := link(t, env, m, "10.50", map[string]any{"merchantReference": "ORDER-" + strings.Repeat("0123456789", 10) + "AB"})
			browsertest.Navigate(t, ctx, paid.Str("url"))
			fillCard(t, ctx, cardOK)
			browsertest.Submit(t, ctx, "pay")
			browsertest.WantText(t, ctx, "paid", "Thank you")
		}},
	}
	for _, p := range pages {
		t.Run(p.name, func(t *testing.T) {
			ctx := tab(t, true)
			browsertest.Navigate(t, ctx, r.Str("url"))
			p.open(t, ctx)
			browsertest.WantText(t, ctx, "the page", "0123456789AB", trading)
			fitsPhone(t, ctx)
		})
	}
}

// TestBrowserStaleSurchargeIsCleared: an Amex number quotes its surcharge;
// edited into an incomplete Visa number, the brand reads Visa and the
// summary and the Pay button drop the Amex quote.
func TestBrowserStaleSurchargeIsCleared(t *testing.T) {
	chromium.Need(t)
	env := start(t)
	m := env.Onboard()
	r := link(t, env, m, "10.00", nil)
	ctx := tab(t, true)
	browsertest.Navigate(t, ctx, r.Str("url"))
	browsertest.Run(t, ctx, "type an Amex number", chromedp.SendKeys(chromedp.ID("card_number"), "378282246310005"))
	waitTotal(t, ctx, "AUD 10.25")
	browsertest.Run(t, ctx, "edit it into a Visa number", chromedp.Evaluate[chromedp.Void](`document.getElementById("card_number").value = ""`),
		chromedp.SendKeys(chromedp.ID("card_number"), "41111111"))
	page, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`["brand", "surcharge", "total", "pay-total"].map(id => document.getElementById(id).textContent)`))
	want := []string{"Visa", "Shown when you enter your card", "AUD 10.00", "AUD 10.00 + card surcharge"}
	if err != nil || strings.Join(page, "|") != strings.Join(want, "|") {
		t.Errorf("after the edit: got brand, surcharge, total and Pay %q (%v), want %q", page, err, want)
	}
}
