package client_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/paylink/paylink/client"
)

// TestClientPaymentLinks creates, looks up and cancels a link.
func TestClientPaymentLinks(t *testing.T) {
	c, env := newClient(t)
	ctx := context.Background()
	expires := env.Clock.Now().Add(48 * time.Hour).UTC().Truncate(time.Second)

	link, err := c.CreatePaymentLink(ctx, client.PaymentLinkRequest{
		Amount: "49.50", Currency: "AUD", MerchantReference: "ORDER-1001",
		Customer:  &client.LinkCustomer{FirstName: "Jo", LastName: "Citizen", Email: "jo@example.com", Reference: "CUST-17"},
		ExpiresAt: expires,
	}, client.IdempotencyKey("link-1"))
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if link.Status != "unpaid" || !strings.HasPrefix(link.ID, "lnk_") || link.Amount.String() != "49.5" ||
		link.MerchantReference != "ORDER-1001" || !strings.HasPrefix(link.URL, env.Server.URL+"/pay/") ||
		!strings.HasPrefix(link.VirtualTerminalURL, env.Server.URL+"/vt/") || link.WebhookURL != nil ||
		link.TransactionReference != nil || link.PaidAt != nil || link.ExpiresAt == nil || !link.ExpiresAt.Equal(expires) {
		t.Fatalf("create: got %+v, want an unpaid link of 49.5 expiring %s", link, expires)
	}

	again, err := c.PaymentLink(ctx, link.ID)
	if err != nil || again.ID != link.ID || again.URL != link.URL || again.Status != "unpaid" || !again.CreatedAt.Equal(link.CreatedAt) {
		t.Fatalf("look-up: got %+v, %v; want %+v", again, err, link)
	}

	for i := range 2 { // cancelling a cancelled link changes nothing
		cancelled, err := c.CancelPaymentLink(ctx, link.ID)
		if err != nil || cancelled.Status != "cancelled" {
			t.Fatalf("cancel %d: got %+v, %v; want cancelled", i+1, cancelled, err)
		}
	}

	stranger := env.Onboard()
	other := client.New(env.Server.URL, stranger.Creds.APIKey, stranger.Creds.CompanyToken)
	if _, err := other.PaymentLink(ctx, link.ID); !client.IsCode(err, "not_found") {
		t.Errorf("another merchant's link: got %v, want not_found", err)
	}
	if _, err := c.CreatePaymentLink(ctx, client.PaymentLinkRequest{Amount: "0", Currency: "AUD", MerchantReference: "X"}); !client.IsCode(err, "invalid_request") {
		t.Errorf("zero amount: got %v, want invalid_request", err)
	}
}
