package dashboard_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
	"github.com/paylink/paylink/internal/browsertest"
)

// TestBrowserLinksDevelopersBalances creates a payment link in the
// dashboard and pays it on the hosted page, rolls an API key, resends a
// failed webhook and opens the balances page, with axe-core on each
// page; once the roll's overlap has passed the old key is refused.
func TestBrowserLinksDevelopersBalances(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard(hook(t, http.StatusInternalServerError))
	addUser(t, env, m, "owner@example.com", paylink.RoleAdmin)
	bought := purchase(t, env, m, "25.00", false)
	env.WaitWebhooks()
	base := env.Server.URL
	ctx := chromium.Tab(t)
	signInBrowser(t, ctx, base, "owner@example.com")

	browsertest.Navigate(t, ctx, base+"/dashboard/links")
	auditPage(t, ctx, "links")
	browsertest.Run(t, ctx, "fill the link form",
		chromedp.SendKeys(chromedp.ID("amount"), "42.00"),
		chromedp.SendKeys(chromedp.ID("merchantReference"), "INV-1001"),
		chromedp.SendKeys(chromedp.ID("first-name"), "Jo"),
		chromedp.SendKeys(chromedp.ID("email"), "jo@example.com"))
	browsertest.Submit(t, ctx, "create-link")
	browsertest.WantText(t, ctx, "link created", "Payment link created", "AUD 42.00", "INV-1001", "unpaid")
	auditPage(t, ctx, "link")
	payURL, err := chromedp.Run(ctx, chromedp.Value(chromedp.ID("url")))
	if err != nil || !strings.Contains(payURL, "/pay/") {
		t.Fatalf("payment page address: got %q (%v)", payURL, err)
	}
	if vt, err := chromedp.Run(ctx, chromedp.Value(chromedp.ID("virtual-terminal-url"))); err != nil || !strings.Contains(vt, "/vt/") {
		t.Fatalf("virtual terminal address: got %q (%v)", vt, err)
	}

	customer := chromium.Tab(t)
	browsertest.Navigate(t, customer, payURL)
	browsertest.Run(t, customer, "fill card",
		chromedp.SendKeys(chromedp.ID("card_holder"), "Jo Citizen"),
		chromedp.SendKeys(chromedp.ID("card_number"), "4111111111111111"),
		chromedp.SendKeys(chromedp.ID("card_expiry"), "1239"),
		chromedp.SendKeys(chromedp.ID("card_cvc"), "123"))
	browsertest.Submit(t, customer, "pay")
	browsertest.WantText(t, customer, "paid", "Thank you, this link has been paid")

	browsertest.Navigate(t, ctx, base+"/dashboard/links")
	browsertest.WantText(t, ctx, "links list", "INV-1001", "paid (pr_")
	shot(t, ctx, "dashboard-links")
	browsertest.Run(t, ctx, "open the payment that paid the link",
		chromedp.Click(chromedp.CSS(`td a[href^="/dashboard/payments/pr_"]`)),
		chromedp.WaitVisible(chromedp.ID("summary-h")))
	browsertest.WantText(t, ctx, "the link's payment", "INV-1001", "APPROVED")

	browsertest.Navigate(t, ctx, base+"/dashboard/developers")
	browsertest.WantText(t, ctx, "developers", "API keys", m.APIKeyID(), "Delivery log", "HTTP 500")
	auditPage(t, ctx, "developers")
	shot(t, ctx, "dashboard-developers")
	browsertest.Submit(t, ctx, "roll-key")
	browsertest.WantText(t, ctx, "key rolled", "New API key", "shown only once")
	key, err := chromedp.Run(ctx, chromedp.Value(chromedp.ID("new-key")))
	if err != nil || key == "" {
		t.Fatalf("new key: got %q (%v)", key, err)
	}
	if got := apiStatus(env, m, key); got != http.StatusOK {
		t.Errorf("the new key: got %d, want 200", got)
	}
	auditPage(t, ctx, "developers after a roll")

	log, err := env.Service.WebhookLog(context.Background(), m.Merchant, paylink.WebhookLogFilter{FailedOnly: true})
	if err != nil || len(log.Entries) == 0 {
		t.Fatalf("failed deliveries: got %v (%v), want some", log, err)
	}
	browsertest.Navigate(t, ctx, base+"/dashboard/developers?failed=1")
	browsertest.Submit(t, ctx, "resend-"+log.Entries[len(log.Entries)-1].Delivery.ID)
	browsertest.WantText(t, ctx, "resent", "Webhook queued again")

	day := env.Clock.Now().UTC().Format(time.DateOnly)
	_, err = env.Service.Reconcile(context.Background(), "acquirer-"+day+".csv", []paylink.AcquirerRecord{
		{Date: day, Reference: bought, Type: paylink.RecordCapture, Currency: "AUD", Amount: 2400}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.Service.Settle(context.Background(), env.Clock.Now().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	browsertest.Navigate(t, ctx, base+"/dashboard/balances")
	browsertest.WantText(t, ctx, "balances", "Balances", "Payouts", "po_", "CSV of "+day, "Reconciliation variances", bought)
	auditPage(t, ctx, "balances")
	shot(t, ctx, "dashboard-balances")

	// The key was rolled with the form's default overlap, 24 hours: the
	// old key works until then, and not after.
	if got := apiStatus(env, m, m.Creds.APIKey); got != http.StatusOK {
		t.Errorf("the old key within the overlap: got %d, want 200", got)
	}
	env.Clock.Advance(24*time.Hour + time.Second)
	if got := apiStatus(env, m, m.Creds.APIKey); got != http.StatusUnauthorized {
		t.Errorf("the old key after the overlap: got %d, want 401", got)
	}
	if got := apiStatus(env, m, key); got != http.StatusOK {
		t.Errorf("the new key after the overlap: got %d, want 200", got)
	}
}
