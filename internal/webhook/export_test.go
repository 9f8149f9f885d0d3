package webhook

import "github.com/paylink/paylink"

// ReceiverKey is the key the rows of merchant mid's company webhook
// deliveries to url are held under (receiverOf), for the tests of
// package webhook_test.
func ReceiverKey(mid, url string) string {
	return TargetReceiverKey(mid, paylink.TargetCompany, url)
}

// TargetReceiverKey is ReceiverKey for deliveries to target (company or
// dynamic).
func TargetReceiverKey(mid, target, url string) string {
	key, _ := receiverOf(&paylink.WebhookJob{Delivery: &paylink.WebhookDelivery{MerchantID: mid, Target: target, URL: url}})
	return key
}
