package client_test

import (
	"context"
	"errors"
	"log"
	"net/http"
	"os"
	"time"

	"github.com/paylink/paylink/client"
)

// A purchase under an Idempotency-Key: retried with the same key after a
// timeout or a 503, it is the same request and never charges twice.
func ExampleClient_Purchase() {
	c := client.New("https://pay.example.com", os.Getenv("PAYLINK_API_KEY"), os.Getenv("PAYLINK_COMPANY_TOKEN"))
	req := client.PurchaseRequest{
		Customer: client.Customer{IPAddress: "203.0.113.7", Timezone: "Australia/Sydney"},
		Card:     &client.Card{Number: "4111111111111111", ExpiryMonth: "12", ExpiryYear: "29", CVC: "123"},
		Purchase: client.PurchaseDetails{Amount: "10.50", Currency: "AUD", InvoiceNumber: "ORDER-1001"},
	}
	key := client.IdempotencyKey("order-1001-payment")
	res, err := c.Purchase(context.Background(), req, key)
	if errors.Is(err, client.ErrReplaceIdempotencyKey) {
		// The key's token expired before any attempt reached paylink:
		// look the order up (PurchaseStatus) before paying under a new key.
		log.Fatal(err)
	}
	if err != nil {
		log.Fatal(err) // a request-level failure; retry with the same key when it is a 503
	}
	switch res.Purchase.Status {
	case client.StatusApproved:
		log.Printf("paid: %s", res.Purchase.PurchaseReference)
	case client.StatusDeclined, client.StatusFailed:
		log.Printf("not paid: %s", res.ResponseMessage)
	default: // PENDING, UNKNOWN, or a status added later: not paid yet
		log.Printf("%s: look it up later", res.Purchase.Status)
	}
}

// A webhook receiver: verify, answer 200 at once, then act.
func ExampleWebhookVerifier_ReadWebhook() {
	// During a rotation's overlap, list the new secret and the previous one.
	v, err := client.NewWebhookVerifier([]string{os.Getenv("PAYLINK_WEBHOOK_SECRET")}, client.DefaultWebhookTolerance)
	if err != nil {
		log.Fatal(err)
	}
	http.HandleFunc("/paylink/webhooks", func(w http.ResponseWriter, r *http.Request) {
		wh, err := v.ReadWebhook(r, time.Now())
		if err != nil {
			// ErrWebhookBadSignature, ErrWebhookTooOld, ...: not paylink's, or a replay.
			http.Error(w, "bad webhook", http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusOK)
		// Deduplicate on wh.ID; webhooks are not ordered, so keep the
		// furthest status of a payment (APPROVED, DECLINED, FAILED are final).
		if wh.Status == client.StatusApproved {
			log.Printf("paid: %s %s %s", wh.TransactionReference, wh.Amount, wh.Currency)
		}
	})
	log.Fatal(http.ListenAndServe(":8080", nil))
}
