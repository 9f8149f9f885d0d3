package main

import (
	"bytes"
	"fmt"
	"strconv"
	"time"
)

// requests builds the HTTP/1.1 requests of every scenario for one
// merchant. Those carrying a token or a reference are appended into a
// caller's buffer from parts built once, so a client allocates nothing
// per request.
type requests struct {
	header  string // Host and Authorization lines
	company string
	// purchase body around its transaction token
	purchaseHead, purchaseTail string
}

func newRequests(host, apiKey, companyToken string) *requests {
	expiry := fmt.Sprintf("%02d", (time.Now().Year()+3)%100)
	return &requests{
		header:       "Host: " + host + "\r\nAuthorization: Bearer " + apiKey + "\r\n",
		company:      companyToken,
		purchaseHead: `{"token":{"company_token":"` + companyToken + `","transaction_token":"`,
		purchaseTail: `"},"customer":{"ip_address":"203.0.113.7","timezone":"UTC"},` +
			`"card":{"number":"4111111111111111","expiry_month":"12","expiry_year":"` + expiry + `","cvc":"123"},` +
			`"purchase":{"amount":"10.00","currency":"AUD","should_service_apply_surcharge":true}}`,
	}
}

// post appends the request line and headers of a POST of a JSON body of
// n bytes to dst; the caller appends the body.
func (q *requests) post(dst []byte, path string, n int) []byte {
	dst = append(dst, "POST "...)
	dst = append(dst, path...)
	dst = append(dst, " HTTP/1.1\r\n"...)
	dst = append(dst, q.header...)
	dst = append(dst, "Content-Type: application/json\r\nContent-Length: "...)
	dst = strconv.AppendInt(dst, int64(n), 10)
	return append(dst, "\r\n\r\n"...)
}

// get appends a GET of path+ref to dst.
func (q *requests) get(dst []byte, path string, ref []byte) []byte {
	dst = append(dst, "GET "...)
	dst = append(dst, path...)
	dst = append(dst, ref...)
	dst = append(dst, " HTTP/1.1\r\n"...)
	dst = append(dst, q.header...)
	return append(dst, "\r\n"...)
}

// token is the transaction token request.
func (q *requests) token() []byte {
	body := `{"company_token":"` + q.company + `"}`
	return append(q.post(nil, "/v5/transaction_token", len(body)), body...)
}

// purchase appends a surcharged card purchase spending transaction token
// tt, as a merchant integration sends it.
func (q *requests) purchase(dst []byte, tt []byte) []byte {
	dst = q.post(dst, "/v5/purchase", len(q.purchaseHead)+len(tt)+len(q.purchaseTail))
	dst = append(dst, q.purchaseHead...)
	dst = append(dst, tt...)
	return append(dst, q.purchaseTail...)
}

// status appends the status look-up of a purchase reference.
func (q *requests) status(dst []byte, ref []byte) []byte {
	return q.get(dst, "/v5/purchase/", ref)
}

// link is the creation of the payment link whose hosted page the page
// scenario reads.
func (q *requests) link() []byte {
	body := `{"amount":"49.50","currency":"AUD","merchantReference":"LOAD-1"}`
	return append(q.post(nil, "/v5/payment-links", len(body)), body...)
}

// field returns the value of the first JSON string member name in body
// ("name":"value", as paylink writes it: no spaces), or nil. A byte scan
// is enough for the few tokens and references the client reads, and
// keeps JSON decoding out of the generator's CPU.
func field(body []byte, name string) []byte {
	key := `"` + name + `":"`
	i := bytes.Index(body, []byte(key))
	if i < 0 {
		return nil
	}
	v := body[i+len(key):]
	j := bytes.IndexByte(v, '"')
	if j < 0 {
		return nil
	}
	return v[:j]
}
