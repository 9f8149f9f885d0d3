package client_test

import (
	"context"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/paylink/paylink/client"
	"github.com/paylink/paylink/internal/apitest"
)

// buyer is the customer of the lifecycle tests.
var buyer = client.Customer{IPAddress: "203.0.113.7", Timezone: "Australia/Sydney"}

// holdOf places a pre-authorisation of amount AUD and returns its reference.
func holdOf(t *testing.T, c *client.Client, env *apitest.Env, amount string) string {
	t.Helper()
	res, err := c.Purchase(context.Background(), client.PurchaseRequest{
		Customer: buyer,
		Card:     &client.Card{Number: "4111111111111111", ExpiryMonth: "12", ExpiryYear: year(env), CVC: "123"},
		Purchase: client.PurchaseDetails{Amount: amount, Currency: "AUD", ApplyPreAuthorisation: true},
	})
	if err != nil || res.Purchase.Status != "PRE_AUTHORISED" {
		t.Fatalf("hold: got %+v, %v; want PRE_AUTHORISED", res, err)
	}
	return res.Purchase.PurchaseReference
}

func TestClientCaptureAndCancel(t *testing.T) {
	c, env := newClient(t)
	ctx := context.Background()

	held := holdOf(t, c, env, "20.00")
	captured, err := c.Capture(ctx, held, client.CaptureRequest{
		Capture:  client.CaptureDetails{Amount: "15.00", Currency: "AUD"},
		Metadata: map[string]string{"channel": "pos"},
	}, client.IdempotencyKey("capture-1"))
	if err != nil || captured.Purchase.Status != "APPROVED" || captured.Purchase.TotalAmount == nil ||
		captured.Purchase.TotalAmount.String() != "15" || !captured.Purchase.PreAuthorised ||
		captured.Purchase.PreAuthorisedAmount != client.Amount("20.00") {
		t.Fatalf("capture: got %+v, %v; want APPROVED, total 15", captured, err)
	}
	if _, err := c.Capture(ctx, held, client.CaptureRequest{Capture: client.CaptureDetails{Amount: "1", Currency: "AUD"}}); !client.IsCode(err, "already_captured") {
		t.Errorf("second capture: got %v, want already_captured", err)
	}

	other := holdOf(t, c, env, "30.00")
	cancelled, err := c.Cancel(ctx, other, client.CancelRequest{})
	if err != nil || cancelled.Purchase.Status != "PRE_AUTHORISED_REVERSED" {
		t.Fatalf("cancel: got %+v, %v; want PRE_AUTHORISED_REVERSED", cancelled, err)
	}
	if _, err := c.Capture(ctx, other, client.CaptureRequest{Capture: client.CaptureDetails{Amount: "1", Currency: "AUD"}}); !client.IsCode(err, "hold_released") {
		t.Errorf("capture after cancel: got %v, want hold_released", err)
	}
	if _, err := c.Cancel(ctx, "pr_unknown", client.CancelRequest{}); !client.IsCode(err, "not_found") {
		t.Errorf("cancel unknown: got %v, want not_found", err)
	}
}

func TestClientRefundAndStatus(t *testing.T) {
	c, env := newClient(t)
	ctx := context.Background()
	paid, err := c.Purchase(ctx, client.PurchaseRequest{
		Customer: buyer,
		Card:     &client.Card{Number: "4111111111111111", ExpiryMonth: "12", ExpiryYear: year(env), HolderName: "Jo Citizen"},
		Purchase: client.PurchaseDetails{Amount: "10.00", Currency: "AUD"},
	})
	if err != nil || paid.Purchase.Status != "APPROVED" {
		t.Fatalf("purchase: got %+v, %v", paid, err)
	}
	ref := paid.Purchase.PurchaseReference
	refund, err := c.Refund(ctx, ref, client.RefundRequest{
		Customer: buyer,
		Refund:   client.RefundDetails{Amount: "3.50", Currency: "AUD", InvoiceNumber: "RF-1"},
	}, client.IdempotencyKey("refund-1"))
	if err != nil || refund.Refund.Status != "APPROVED" || refund.Refund.Amount.String() != "3.5" ||
		refund.Refund.InvoiceNumber != "RF-1" || refund.Card == nil || refund.Card.HolderName != "Jo Citizen" {
		t.Fatalf("refund: got %+v, %v; want APPROVED 3.5", refund, err)
	}
	for _, lookup := range []string{refund.Refund.RefundReference, "RF-1", ref} {
		st, err := c.RefundStatus(ctx, lookup)
		if err != nil || st.Status != "APPROVED" || st.RefundReference != refund.Refund.RefundReference ||
			st.PurchaseReference != ref || st.Amount.String() != "3.5" {
			t.Errorf("refund status %q: got %+v, %v", lookup, st, err)
		}
	}
	if _, err := c.Refund(ctx, ref, client.RefundRequest{Customer: buyer,
		Refund: client.RefundDetails{Amount: "6.51", Currency: "AUD"}}); !client.IsCode(err, "amount_exceeds_refundable") {
		t.Errorf("refund above the rest: got %v, want amount_exceeds_refundable", err)
	}
	if _, err := c.RefundStatus(ctx, "rf_unknown"); !client.IsCode(err, "not_found") {
		t.Errorf("unknown refund: got %v, want not_found", err)
	}
}

var (
	formAction  = regexp.MustCompile(`<form method="post" action="([^"]*)">`)
	hiddenInput = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`)
)

// answerChallenge does what the customer's browser does on the challenge
// page: GET it, then post outcome with the form's hidden fields to the
// form's action. It returns the redirect, which it does not follow.
func answerChallenge(t *testing.T, pageURL, outcome string) *http.Response {
	t.Helper()
	browser := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := browser.Get(pageURL)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	m := formAction.FindSubmatch(page)
	if res.StatusCode != http.StatusOK || m == nil {
		t.Fatalf("challenge page: got %d without a form:\n%s", res.StatusCode, page)
	}
	base, _ := url.Parse(pageURL)
	action, err := base.Parse(html.UnescapeString(string(m[1])))
	if err != nil {
		t.Fatal(err)
	}
	form := url.Values{"outcome": {outcome}}
	for _, h := range hiddenInput.FindAllSubmatch(page, -1) {
		form.Set(html.UnescapeString(string(h[1])), html.UnescapeString(string(h[2])))
	}
	res, err = browser.Post(action.String(), "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res
}

func TestClientThreeDSChallenge(t *testing.T) {
	c, env := newClient(t)
	ctx := context.Background()
	const back = "https://shop.example.com/3ds/back"
	res, err := c.Purchase(ctx, client.PurchaseRequest{
		Customer: client.Customer{IPAddress: "203.0.113.7", Timezone: "UTC",
			ShouldServiceApplyAuth: true, AuthenticationRedirectURL: back},
		Card:     &client.Card{Number: "4000000000003220", ExpiryMonth: "12", ExpiryYear: year(env), CVC: "123"},
		Purchase: client.PurchaseDetails{Amount: "12.34", Currency: "AUD"},
	})
	if err != nil || res.Purchase.Status != "REQUIRES_AUTHENTICATION" || res.Customer.AuthenticationRedirectURL == nil ||
		res.Purchase.TotalAmount != nil {
		t.Fatalf("purchase: got %+v, %v; want REQUIRES_AUTHENTICATION with a challenge page", res, err)
	}
	ref := res.Purchase.PurchaseReference
	if _, err := c.ThreeDSRedirect(ctx, ref); !client.IsCode(err, "authentication_pending") {
		t.Errorf("before the challenge: got %v, want authentication_pending", err)
	}

	answer := answerChallenge(t, *res.Customer.AuthenticationRedirectURL, "success")
	if loc := answer.Header.Get("Location"); answer.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, back) ||
		!strings.Contains(loc, "purchase_reference="+ref) {
		t.Fatalf("challenge answer: got %d to %q, want 303 to %s with the purchase reference", answer.StatusCode, loc, back)
	}

	done, err := c.ThreeDSRedirect(ctx, ref)
	if err != nil || done.Purchase.Status != "APPROVED" || done.ResponseCode != "success" ||
		done.Purchase.TotalAmount == nil || done.Purchase.TotalAmount.String() != "12.34" ||
		done.Purchase.PreAuthorisedAmount != client.Amount("0") { // a number in this answer
		t.Fatalf("3dsredirect: got %+v, %v; want APPROVED 12.34", done, err)
	}
	if _, err := c.ThreeDSRedirect(ctx, ref); !client.IsCode(err, "authentication_already_completed") {
		t.Errorf("second 3dsredirect: got %v, want authentication_already_completed", err)
	}
}
