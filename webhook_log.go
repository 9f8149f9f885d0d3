package paylink

import (
	"context"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The merchant's webhook delivery log (the dashboard's developers page):
// its deliveries, newest first, each with every attempt's status code,
// latency and response excerpt, and a resend scoped to the merchant.

// ResponseExcerptBytes bounds the part of a receiver's response body the
// delivery log keeps: enough for an error message, too little to store a
// receiver's page. The request paylink sent, with its signature, is never
// logged.
const ResponseExcerptBytes = 512

// ResponseExcerptRead is how much of a receiver's body is read for its
// excerpt: past the bound by more than the longest card number written
// with separators takes (19 digits of 3 bytes, 3 separators of 3 bytes
// between each two: 219 bytes), so that ResponseExcerpt sees whole any
// number the cut would split, and masks it.
const ResponseExcerptRead = ResponseExcerptBytes + 256

// Page sizes of the delivery log.
const (
	DefaultWebhookPage = 50
	MaxWebhookPage     = 200
)

// ResponseExcerpt makes a stored excerpt of a response body: at most
// ResponseExcerptBytes of valid UTF-8, cut at a character boundary, with
// control characters other than newline and tab shown as U+FFFD and card
// numbers masked (a receiver's error may quote the order it failed on;
// the body is masked before the cut, so a number across the cut is not
// left in clear: give it ResponseExcerptRead bytes of a longer body). A
// body of ResponseExcerptRead bytes or more may itself have been cut in
// the middle of a number, too short to be found: the digits and
// separators it ends with are left out.
func ResponseExcerpt(body []byte) string {
	s := strings.ToValidUTF8(string(body), "\uFFFD")
	if len(body) >= ResponseExcerptRead { // and a character the read cut, now U+FFFD
		s = strings.TrimRightFunc(strings.TrimSuffix(s, "\uFFFD"), inCardNumber)
	}
	s = MaskCardNumbers(s)
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) && r != '\n' && r != '\t' {
			return '\uFFFD'
		}
		return r
	}, s)
	if len(s) <= ResponseExcerptBytes {
		return s
	}
	n := ResponseExcerptBytes
	for n > 0 && !utf8.RuneStart(s[n]) {
		n-- // the cut would split a character: cut before it
	}
	return s[:n]
}

// inCardNumber reports whether r can be part of a card number as the
// card-number rules read it (foldForCards): a digit, a separator, an
// invisible formatting character.
func inCardNumber(r rune) bool {
	if r < utf8.RuneSelf {
		return isDigit(byte(r)) || strings.ContainsRune(joinChars, r)
	}
	return foldRune(r) >= 0
}

// WebhookLogFilter selects a page of a merchant's delivery log.
type WebhookLogFilter struct {
	FailedOnly bool   // only deliveries whose last attempt failed for good
	Cursor     string // Next of the previous page; "" for the newest
	Limit      int    // 1 to MaxWebhookPage; 0 for DefaultWebhookPage
}

// WebhookLogEntry is a delivery with its attempts, oldest first.
type WebhookLogEntry struct {
	Delivery *WebhookDelivery
	Attempts []*WebhookAttempt
}

// WebhookLogPage is one page of the delivery log.
type WebhookLogPage struct {
	Entries []WebhookLogEntry
	Next    string // cursor of the following page, "" on the last one
}

// WebhookLog returns a page of m's webhook deliveries, newest first,
// with their attempts. A bad cursor or limit is an invalid request.
func (s *Service) WebhookLog(ctx context.Context, m *Merchant, f WebhookLogFilter) (*WebhookLogPage, error) {
	fe := FieldErrors{}
	wf := WebhookFilter{MerchantID: m.ID, FailedOnly: f.FailedOnly, Limit: pageSize(f.Limit, DefaultWebhookPage, MaxWebhookPage, fe)}
	if f.Cursor != "" {
		var err error
		if wf.BeforeCreated, wf.BeforeID, err = decodeCursor(f.Cursor); err != nil {
			fe.Add("cursor", "is not a cursor of this list")
		}
	}
	if err := fe.Err(); err != nil {
		return nil, err
	}
	limit := wf.Limit
	wf.Limit++
	page := &WebhookLogPage{}
	err := s.store.Snapshot(ctx, func(tx Tx) error { // deliveries and their attempts, of one moment
		ds, err := tx.ListWebhookDeliveries(wf)
		if err != nil {
			return err
		}
		if len(ds) > limit {
			ds = ds[:limit]
			page.Next = encodeCursor(ds[limit-1].CreatedAt, ds[limit-1].ID)
		}
		attempts, err := deliveryAttempts(tx, ds)
		if err != nil {
			return err
		}
		for _, d := range ds {
			page.Entries = append(page.Entries, WebhookLogEntry{Delivery: d, Attempts: attempts[d.ID]})
		}
		return nil
	})
	if err != nil {
		return nil, Internal("webhook log", err)
	}
	return page, nil
}

// ResendMerchantWebhook queues m's delivered or failed delivery id again
// and audits it; another merchant's delivery is not found, and one that
// is pending already is a conflict.
func (s *Service) ResendMerchantWebhook(ctx context.Context, m *Merchant, id string) error {
	if err := checkStaff(ctx, m.ID, PermWebhooks); err != nil {
		return err
	}
	return s.resendWebhook(ctx, m.ID, id)
}
