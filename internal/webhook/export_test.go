package webhook

import "github.com/paylink/paylink"

// ReceiverKey is the key the rows of merchant mid's deliveries to url
// are held under (receiverOf), for the tests of package webhook_test.
func ReceiverKey(mid, url string) string {
	key, _ := receiverOf(&paylink.WebhookJob{Delivery: &paylink.WebhookDelivery{MerchantID: mid, URL: url}})
	return key
}
