package dashboard_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
	"github.com/paylink/paylink/internal/browsertest"
)

// The payments and direct debits pages in a real browser: find a payment
// with the search box, refund part of it, capture one hold and cancel
// another; axe-core on the list, the payment page and the direct debits
// page. With PAYLINK_SCREENSHOTS=1 it writes the payments screenshots.

// clerkTab is a Chromium tab signed in as a new staff member of m, and
// the service's base URL.
func clerkTab(t *testing.T, env *apitest.Env, m *apitest.Merchant) (context.Context, string) {
	t.Helper()
	addUser(t, env, m, "clerk@example.com", paylink.RoleStaff)
	ctx := chromium.Tab(t)
	signInBrowser(t, ctx, env.Server.URL, "clerk@example.com")
	return ctx, env.Server.URL
}

func TestBrowserPayments(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	ref := purchase(t, env, m, "118.40", false, func(b map[string]any) { apitest.Set(b, "purchase.invoice_number", "INV-1001") })
	purchase(t, env, m, "25.00", false)
	toCapture := purchase(t, env, m, "60.00", true)
	toCancel := purchase(t, env, m, "45.00", true)
	debit := clearedDebit(t, env, m, "80.00")
	ctx, base := clerkTab(t, env, m)

	browsertest.Navigate(t, ctx, base+"/dashboard/payments")
	browsertest.WantText(t, ctx, "payments list", "Payments", ref, toCapture, "AUD 118.40", "Export these payments as CSV")
	auditPage(t, ctx, "payments list")
	shot(t, ctx, "dashboard-payments")

	browsertest.Run(t, ctx, "search", chromedp.SendKeys(chromedp.ID("q"), ref))
	browsertest.Submit(t, ctx, "filter")
	browsertest.WantText(t, ctx, "search result", ref)
	if text := browsertest.Text(t, ctx); strings.Contains(text, toCapture) {
		t.Errorf("search for %s still lists %s", ref, toCapture)
	}
	if _, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(`a[href^="/dashboard/payments/`+ref+`?back="]`))); err != nil {
		t.Fatalf("open the payment: %v", err)
	}
	browsertest.WantText(t, ctx, "payment page", "Payment "+ref, "INV-1001", "visa", "1111", "Timeline", "Fee lines")
	// The list links it with its search as back, so "Back to the
	// list" returns to the search it came from.
	back, err := chromedp.Run(ctx, chromedp.Attributes(chromedp.ID("back")))
	if err != nil || back["href"] != "/dashboard/payments?q="+ref {
		t.Errorf("back link: got %q (%v), want the search it came from", back["href"], err)
	}
	auditPage(t, ctx, "payment page")
	shot(t, ctx, "dashboard-payment")
	browsertest.Run(t, ctx, "refund amount", chromedp.SetValue(chromedp.ID("refund-amount"), "18.40"))
	browsertest.Submit(t, ctx, "refund")
	browsertest.WantText(t, ctx, "refunded", "The refund was made.", "AUD 18.40")
	if got := stored(t, env, m, ref).Refunded; got != 1840 {
		t.Errorf("refunded: got %d, want 1840", got)
	}
	if after, err := chromedp.Run(ctx, chromedp.Attributes(chromedp.ID("back"))); err != nil || after["href"] != back["href"] {
		t.Errorf("back link after the refund: got %q (%v), want %q, the search it came from", after["href"], err, back["href"])
	}

	browsertest.Navigate(t, ctx, base+"/dashboard/payments/"+toCapture)
	browsertest.Run(t, ctx, "capture amount", chromedp.SetValue(chromedp.ID("capture-amount"), "50.00"))
	browsertest.Submit(t, ctx, "capture")
	browsertest.WantText(t, ctx, "captured", "The hold was captured.", "APPROVED")
	browsertest.Navigate(t, ctx, base+"/dashboard/payments/"+toCancel)
	browsertest.Submit(t, ctx, "cancel")
	browsertest.WantText(t, ctx, "cancelled", "The hold was cancelled", "PRE_AUTHORISED_REVERSED")
	if got := stored(t, env, m, toCapture); got.Status != paylink.StatusApproved || got.Amount != 5000 {
		t.Errorf("captured: got %s %d, want APPROVED 5000", got.Status, got.Amount)
	}
	if got := stored(t, env, m, toCancel).Status; got != paylink.StatusPreAuthorisedReversed {
		t.Errorf("cancelled: got %s, want PRE_AUTHORISED_REVERSED", got)
	}

	browsertest.Navigate(t, ctx, base+debitsPath)
	browsertest.WantText(t, ctx, "direct debits", "Direct debits", debit)
	auditPage(t, ctx, "direct debits")
	shot(t, ctx, "dashboard-direct-debits")
	browsertest.Navigate(t, ctx, base+debitsPath+"/"+debit)
	browsertest.WantText(t, ctx, "direct debit", "BSB 062-000", "APPROVED")
	auditPage(t, ctx, "direct debit")

	// A form sent after the session ended: the sign-in page says so and,
	// from Chromium's Referer, returns to the payment page.
	browsertest.Navigate(t, ctx, base+"/dashboard/payments/"+ref)
	env.Clock.Advance(paylink.SessionIdleDefault + time.Minute)
	browsertest.Run(t, ctx, "refund amount", chromedp.SetValue(chromedp.ID("refund-amount"), "1.00"))
	browsertest.Submit(t, ctx, "refund")
	browsertest.WantText(t, ctx, "sign-in after the session ended", "the form you sent was not carried out")
	next, err := chromedp.Run(ctx, chromedp.Attributes(chromedp.CSS(`input[name="next"]`)))
	if err != nil || next["value"] != "/dashboard/payments/"+ref {
		t.Errorf("page to return to: got %q (%v), want the payment page", next["value"], err)
	}
	if got := stored(t, env, m, ref).Refunded; got != 1840 {
		t.Errorf("refunded after the session ended: got %d, want still 1840", got)
	}
}

// TestBrowserBackAfterAnActionShowsNow: Back after a refund shows the
// payment as it is now. Chromium keeps the payment page in its
// back/forward cache despite Cache-Control: no-store and, without the
// dashboard's script, Back restored it as it was before the refund
// (refunded AUD 0.00, the same document, its pageshow persisted); the
// script reloads such a page.
func TestBrowserBackAfterAnActionShowsNow(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	ref := purchase(t, env, m, "25.00", false)
	ctx, base := clerkTab(t, env, m)
	browsertest.Navigate(t, ctx, base+"/dashboard/payments/"+ref)
	browsertest.Run(t, ctx, "mark the page", chromedp.Evaluate[chromedp.Void](`window.leftBeforeTheRefund = true; undefined`))
	browsertest.Run(t, ctx, "refund amount", chromedp.SetValue(chromedp.ID("refund-amount"), "5.00"))
	browsertest.Submit(t, ctx, "refund")
	browsertest.WantText(t, ctx, "refunded", "The refund was made.")

	browsertest.Run(t, ctx, "back", chromedp.Evaluate[chromedp.Void](`history.back(); undefined`))
	const shown = `({url: location.pathname + location.search, old: window.leftBeforeTheRefund === true,
		refunded: (document.getElementById("refunded") || {}).textContent})`
	var state map[string]any
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		s, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]any](shown))
		if err != nil { // the document is being replaced: read the new one
			continue
		}
		if state = s; state["url"] == "/dashboard/payments/"+ref && state["old"] == false && state["refunded"] == "AUD 5.00" {
			return
		}
	}
	t.Errorf("after Back: got %v, want the payment page loaded again (not the document left before the refund) showing AUD 5.00 refunded", state)
}

// TestARefundAfterTheSessionEndedIsNotSaidMade: a refund made, then a
// second one sent after the session ended: it is not made, and after
// signing in again the payment page, reached from the refund page's
// Referer, which still carried ?done=refunded, does not say "The refund
// was made." (dashboard sweep: it did, of a refund never made).
func TestARefundAfterTheSessionEndedIsNotSaidMade(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	ref := purchase(t, env, m, "25.00", false)
	ctx, base := clerkTab(t, env, m)
	browsertest.Navigate(t, ctx, base+"/dashboard/payments/"+ref)
	browsertest.Run(t, ctx, "amount", chromedp.SetValue(chromedp.ID("refund-amount"), "5.00"))
	browsertest.Submit(t, ctx, "refund")
	browsertest.WantText(t, ctx, "first refund", "The refund was made.")
	env.Clock.Advance(paylink.SessionIdleDefault + time.Minute)
	browsertest.Run(t, ctx, "amount", chromedp.SetValue(chromedp.ID("refund-amount"), "5.00"))
	browsertest.Submit(t, ctx, "refund")
	browsertest.WantText(t, ctx, "sign-in", "the form you sent was not carried out")
	browsertest.Run(t, ctx, "sign in where the form was sent from",
		chromedp.SendKeys(chromedp.ID("email"), "clerk@example.com"),
		chromedp.SendKeys(chromedp.ID("password"), password))
	browsertest.Submit(t, ctx, "sign-in")
	browsertest.WantText(t, ctx, "the payment page", ref)
	if got := stored(t, env, m, ref).Refunded; got != 500 {
		t.Fatalf("refunded %d, want 500 (the second refund was not sent)", got)
	}
	if text := browsertest.Text(t, ctx); strings.Contains(text, "The refund was made.") {
		t.Errorf("after signing in again the page says the refund was made, though the second one was not")
	}
}

// TestPagesFitANarrowScreen: every dashboard page an admin opens, with
// data in its tables, fits a 320 px wide screen (WCAG's reflow width)
// without scrolling sideways; wide tables scroll inside their own region,
// which the keyboard reaches (axe at that width) (dashboard sweep: home,
// payment, developers, team, link and balances pages scrolled as a
// whole, by up to 320 px; an empty payments or direct-debits list's
// region could not be reached by keyboard; the accessibility sweep: a
// paid link's page, its payment reference, at 320 px).
func TestPagesFitANarrowScreen(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	ref := purchase(t, env, m, "118.40", false)
	purchase(t, env, m, "60.00", true)
	link := env.Post("/v5/payment-links", m, map[string]any{"amount": "10.50", "currency": "AUD", "merchantReference": "NARROW-1"})
	paid := payLink(t, env, env.Post("/v5/payment-links", m, map[string]any{"amount": "7.00", "currency": "AUD", "merchantReference": "NARROW-2"}))
	if _, err := env.Service.Settle(context.Background(), env.Clock.Now().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	addUser(t, env, m, "admin@example.com", paylink.RoleAdmin)
	ctx := chromium.Tab(t)
	signInBrowser(t, ctx, env.Server.URL, "admin@example.com")
	browsertest.Run(t, ctx, "320 px viewport", chromedp.EmulateViewport(320, 740))
	for _, path := range []string{"/dashboard/", "/dashboard/payments", "/dashboard/payments/" + ref, "/dashboard/links",
		"/dashboard/links/" + link.Str("id"), "/dashboard/links/" + paid, "/dashboard/balances", "/dashboard/developers", "/dashboard/team",
		"/dashboard/audit", "/dashboard/account",
		// Empty lists: their table scrolls with no link in it to reach by
		// keyboard (axe: scrollable-region-focusable, dashboard sweep).
		"/dashboard/payments?q=nobody@example.com", "/dashboard/direct-debits?q=nobody@example.com"} {
		browsertest.Navigate(t, ctx, env.Server.URL+path)
		width, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth`))
		if err != nil || width > 320 {
			t.Errorf("%s at a 320 px viewport: %d px wide (%v), want at most 320", path, width, err)
		}
		auditPage(t, ctx, "320 px "+path) // a region that scrolls is reached by keyboard
	}
}

// payLink pays the link an API answer created, with a card on its page,
// and returns the link's id.
func payLink(t *testing.T, env *apitest.Env, link apitest.Response) string {
	t.Helper()
	ctx := context.Background()
	page, err := url.Parse(link.Str("url"))
	if err != nil {
		t.Fatal(err)
	}
	ls, err := env.Service.OpenLink(ctx, path.Base(page.Path))
	if err != nil {
		t.Fatal(err)
	}
	card := &paylink.CardDetails{Number: "4111111111111111", ExpiryMonth: 12, ExpiryYear: 2039, CVC: "123", HolderName: "Jo Citizen"}
	if tr, err := env.Service.PayLink(ctx, ls, paylink.LinkPayment{PaymentType: paylink.PaymentTypeCard,
		Customer: paylink.Customer{IPAddress: "203.0.113.7"}, Card: card}); err != nil || tr.Status != paylink.StatusApproved {
		t.Fatalf("pay the link: got %v, %v; want APPROVED", tr, err)
	}
	return link.Str("id")
}

// TestLongValuesFitANarrowScreen: the longest values a payment or link
// may carry (a 255-character invoice number, 128-character email, names,
// card holder and references, none with a space to break at) do not make
// a page scroll sideways at 375 px, nor at 1280 px, and short values
// stay on one line (dashboard sweep: a 44-character invoice number and an
// 85-character email made the payment page 831 px wide, a 63-character
// merchantReference the link page 686 px).
func TestLongValuesFitANarrowScreen(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	long := func(prefix string, n int) string { return prefix + strings.Repeat("x", n-len(prefix)) }
	purchase(t, env, m, "9999999999.99", false) // a balance of eleven digits on the home page
	ref := purchase(t, env, m, "9999999999.99", false, func(b map[string]any) {
		apitest.Set(b, "purchase.invoice_number", long("INV-", paylink.MaxInvoiceLength))
		apitest.Set(b, "customer.email", long("jo.", paylink.MaxFieldLength-len("@example.com"))+"@example.com")
		apitest.Set(b, "customer.first_name", long("Jo", paylink.MaxFieldLength))
		apitest.Set(b, "customer.last_name", long("Citizen", paylink.MaxFieldLength))
		apitest.Set(b, "customer.customer_reference", long("C-", paylink.MaxFieldLength))
		apitest.Set(b, "card.holder_name", long("Jo", paylink.MaxFieldLength))
	})
	link := env.Post("/v5/payment-links", m, map[string]any{"amount": "10.50", "currency": "AUD",
		"merchantReference": long("REF-", paylink.MaxFieldLength)})
	if link.Status != http.StatusOK && link.Status != http.StatusCreated {
		t.Fatalf("link: %d %s", link.Status, link.Raw)
	}
	ctx, base := clerkTab(t, env, m)
	for _, width := range []int{375, 1280} {
		browsertest.Run(t, ctx, fmt.Sprintf("%d px viewport", width), chromedp.EmulateViewport(int64(width), 800))
		for _, path := range []string{"/dashboard/payments/" + ref, "/dashboard/links/" + link.Str("id"),
			"/dashboard/payments", "/dashboard/links", "/dashboard"} {
			browsertest.Navigate(t, ctx, base+path)
			got, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth`))
			if err != nil || got > width {
				t.Errorf("%s at a %d px viewport: %d px wide (%v), want at most %d", path, width, got, err, width)
			}
			// Amounts and states are not broken up for room (a
			// verification sweep found "AUD 3638887.9" and "5" in the
			// balance table when every cell could break anywhere).
			split, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](splitWords))
			if err != nil || len(split) > 0 {
				t.Errorf("%s at a %d px viewport: words broken across lines %q (%v), want none", path, width, split, err)
			}
		}
	}
}

// splitWords lists the words of the page's amounts and states that are
// broken across lines.
const splitWords = `Array.from(document.querySelectorAll('td.num, dd.num, #status, #link-state')).flatMap(e => {
	const out = [], walk = document.createTreeWalker(e, NodeFilter.SHOW_TEXT);
	for (let n = walk.nextNode(); n; n = walk.nextNode()) {
		let off = 0;
		for (const word of n.data.split(' ')) {
			if (word.length > 1) {
				const r = document.createRange(); r.setStart(n, off); r.setEnd(n, off + word.length);
				if (new Set(Array.from(r.getClientRects()).map(x => Math.round(x.top))).size > 1) out.push(word);
			}
			off += word.length + 1;
		}
	}
	return out;
})`
