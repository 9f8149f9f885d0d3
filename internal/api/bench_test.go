package api

import (
	"syscall"
	"testing"
	"time"

	"github.com/paylink/paylink"
)

// Per-layer benchmarks of the API's own work on the hot routes (issue
// 14): decoding a request body with every read its handler makes, and
// encoding the response. The service and store layers have theirs in
// the root package and internal/sqlstore; handler_bench_test.go runs
// whole handlers.

// ReportCPU adds the process's CPU time per operation (user and system,
// from getrusage) since start, a CPUTime reading: on a shared machine
// it varies far less than ns/op, which counts time spent waiting for a
// core. Exported for the whole-handler benchmarks of package api_test.
func ReportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64((CPUTime()-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// CPUTime is the process's CPU time so far.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// purchaseBody is a surcharged card purchase as a deployed client sends
// it: every key it knows, the unused ones empty.
const purchaseBody = `{
  "token": {"company_token": "ct_01JD3Q8Z5W7X2V4B6N8M0K1J3H", "transaction_token": "tt_01JD3Q9A1B2C3D4E5F6G7H8J9K"},
  "customer": {"id": "", "reference": "CUST-10442", "email": "jo.citizen@example.com", "first_name": "Jo",
    "last_name": "Citizen", "phone": null, "ip_address": "203.0.113.7", "timezone": "Australia/Sydney",
    "user_agent": "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36",
    "accepted_terms_conditions": "true", "store_card_permission": false,
    "should_service_apply_authentication": false, "authentication_redirect_url": ""},
  "card": {"token": "", "number": "4111 1111 1111 1111", "expiry_month": "12", "expiry_year": 29, "cvc": "123",
    "holder_name": "Jo Citizen"},
  "purchase": {"amount": "149.95", "currency": "AUD", "invoice_number": "INV-2026-000142",
    "should_service_apply_surcharge": true, "should_service_apply_pre_authorisation": false}
}`

// tokenBody is a transaction token request.
const tokenBody = `{"company_token": "ct_01JD3Q8Z5W7X2V4B6N8M0K1J3H"}`

func BenchmarkDecodePurchase(b *testing.B) {
	raw := []byte(purchaseBody)
	b.ReportAllocs()
	defer ReportCPU(b, CPUTime())
	for b.Loop() {
		bd, err := parseBody(raw)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := bd.purchaseRequest(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheckPlacement is the walk for flags out of place and dotted
// keys that every purchase takes before its fields are read.
func BenchmarkCheckPlacement(b *testing.B) {
	bd, err := parseBody([]byte(purchaseBody))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	defer ReportCPU(b, CPUTime())
	for b.Loop() {
		bd.checkPlacement(&purchasePlacement)
	}
}

func BenchmarkDecodeTransactionToken(b *testing.B) {
	raw := []byte(tokenBody)
	b.ReportAllocs()
	defer ReportCPU(b, CPUTime())
	for b.Loop() {
		bd, err := parseBody(raw)
		if err != nil {
			b.Fatal(err)
		}
		if bd.need(maxToken, "company_token", "token.company_token") == "" {
			b.Fatal("no company token")
		}
	}
}

// benchTransaction is an approved surcharged card purchase.
func benchTransaction() *paylink.Transaction {
	at := time.Date(2026, 11, 23, 3, 4, 5, 0, time.UTC)
	return &paylink.Transaction{
		Reference: "tx_01JD3QB7M4N5P6Q7R8S9T0V1W2", InvoiceNumber: "INV-2026-000142", Status: paylink.StatusApproved,
		Currency: "AUD", Amount: 14995, Surcharge: 165, Total: 15160, CreatedAt: at, UpdatedAt: at, ProcessedAt: at,
		Details: paylink.TransactionDetails{
			Card: &paylink.CardInfo{Masked: "411111******1111", Brand: "visa", Funding: "credit", Country: "AU",
				ExpiryMonth: 12, ExpiryYear: 2029, HolderName: "Jo Citizen", Fingerprint: "fp_9c1d0e7a5b3f"},
			Customer: paylink.Customer{ID: "", Reference: "CUST-10442", Email: "jo.citizen@example.com"},
			Message:  "Approved",
		},
	}
}

func BenchmarkEncodePurchaseResult(b *testing.B) {
	t := benchTransaction()
	b.ReportAllocs()
	defer ReportCPU(b, CPUTime())
	for b.Loop() {
		encodeJSON(transactionResult(t, false))
	}
}

func BenchmarkEncodeStatus(b *testing.B) {
	st := stateOf(benchTransaction())
	b.ReportAllocs()
	defer ReportCPU(b, CPUTime())
	for b.Loop() {
		encodeJSON(statusResult(st))
	}
}

func BenchmarkEncodeTransactionToken(b *testing.B) {
	b.ReportAllocs()
	defer ReportCPU(b, CPUTime())
	for b.Loop() {
		encodeJSON(tokenResult("tt_01JD3Q9A1B2C3D4E5F6G7H8J9K", "ct_01JD3Q8Z5W7X2V4B6N8M0K1J3H"))
	}
}
