package paylink

import (
	"context"
	"encoding/base64"
	"encoding/csv"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// The dashboard's payment list: a merchant's transactions, newest first,
// keyset-paginated, filtered and searched, and its CSV export. The store
// keeps the searched fields in indexed columns (docs/operations.md,
// "Indexes of the dashboard").

// Page sizes of the payment list.
const (
	DefaultPaymentPage = 50
	MaxPaymentPage     = 500
)

// maxSearchLength bounds the search text: the longest thing it can match
// is an invoice number or an email address.
const maxSearchLength = 255

// PaymentFilter selects a merchant's payments for the list and its CSV
// export. The zero value lists every payment, newest first.
type PaymentFilter struct {
	// Statuses keeps payments in any of these public statuses (PENDING
	// includes payments being processed); none keeps every status.
	Statuses []Status
	// Methods keeps payments of any of these payment types
	// (PaymentTypeCard, PaymentTypeBankAccount, ...); none keeps all.
	Methods []string
	// From and To keep payments created at or after From and before To;
	// a zero time leaves that side open.
	From, To time.Time
	// Currency keeps payments in that currency; it is required with an
	// amount bound, which is in its minor units.
	Currency string
	// MinTotal and MaxTotal bound the total charged, inclusive; 0 leaves
	// that side open.
	MinTotal, MaxTotal int64
	// Q finds payments whose reference or invoice number is exactly Q,
	// whose customer email is Q in any case, or, when Q is four digits,
	// whose card ends in Q.
	Q string
	// Cursor is the Next of the previous page; "" starts at the newest.
	Cursor string
	// Limit is the page size, 1 to MaxPaymentPage; 0 for DefaultPaymentPage.
	Limit int
}

// PaymentPage is one page of the payment list.
type PaymentPage struct {
	Payments []*Transaction
	// Next is the cursor of the following page, "" on the last one.
	Next string
}

// PaymentQuery is a validated PaymentFilter as a store runs it.
type PaymentQuery struct {
	MerchantID         string
	Statuses           []Status // stored statuses, PROCESSING added to PENDING
	Methods            []string
	From, To           time.Time
	Currency           string
	MinTotal, MaxTotal int64
	// Search matches the reference exactly and the invoice number as
	// typed or in capitals (invoice numbers are mostly capitals; "inv-7"
	// finds INV-7), SearchEmail the customer email column, SearchLast4 the card's last
	// four digits; all "" when there is no search, SearchLast4 "" unless
	// the search is four digits.
	Search, SearchEmail, SearchLast4 string
	// Before is the keyset position: only rows older than this created
	// time and reference (zero time: from the newest).
	BeforeCreated   time.Time
	BeforeReference string
	Limit           int
}

// PaymentTypes are the payment methods a filter may name, in the order a
// list offers them.
func PaymentTypes() []string {
	return []string{PaymentTypeCard, PaymentTypeApplePay, PaymentTypeGooglePay, PaymentTypeBankAccount, PaymentTypeZip}
}

// FilterStatuses are the statuses a filter may name (PENDING also finds
// PROCESSING, as Status.Public shows it), in the order a list offers
// them: a direct debit's alone when debits is set, since a debit is never
// held nor authenticated. UNKNOWN is the state to review: an answer that
// recovery could not learn.
func FilterStatuses(debits bool) []Status {
	if debits {
		return []Status{StatusPending, StatusApproved, StatusDeclined, StatusFailed, StatusUnknown}
	}
	return []Status{StatusApproved, StatusDeclined, StatusFailed, StatusRequiresAuthentication,
		StatusPreAuthorised, StatusPreAuthorisedReversed, StatusPending, StatusUnknown}
}

// SearchEmail is how a customer email is stored for search: trimmed and
// in lower case, so that a search matches it in any case.
func SearchEmail(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// CardLast4 is the last four digits of the transaction's card, "" when
// it was not paid by card.
func (t *Transaction) CardLast4() string {
	if t.Details.Card == nil || len(t.Details.Card.Masked) < 4 {
		return ""
	}
	return t.Details.Card.Masked[len(t.Details.Card.Masked)-4:]
}

// query validates f and resolves it for the store; every problem is a
// field error of an invalid request.
func (f PaymentFilter) query(merchantID string) (PaymentQuery, error) {
	q := PaymentQuery{MerchantID: merchantID, From: f.From.UTC(), To: f.To.UTC(), MinTotal: f.MinTotal, MaxTotal: f.MaxTotal, Limit: f.Limit}
	fe := FieldErrors{}
	statuses := FilterStatuses(false)
	for _, st := range f.Statuses {
		switch {
		case !slices.Contains(statuses, st):
			fe.Add("status", fmt.Sprintf("unknown status %q", st))
		case st == StatusPending:
			q.Statuses = append(q.Statuses, StatusPending, StatusProcessing)
		default:
			q.Statuses = append(q.Statuses, st)
		}
	}
	for _, m := range f.Methods {
		if !slices.Contains(PaymentTypes(), m) {
			fe.Add("method", fmt.Sprintf("unknown payment method %q", m))
		}
		q.Methods = append(q.Methods, m)
	}
	if !f.From.IsZero() && !f.To.IsZero() && !f.From.Before(f.To) {
		fe.Add("to", "must be after from")
	}
	f.checkAmounts(&q, fe)
	f.checkSearch(&q, fe)
	q.Limit = pageSize(f.Limit, DefaultPaymentPage, MaxPaymentPage, fe)
	if f.Cursor != "" {
		var err error
		if q.BeforeCreated, q.BeforeReference, err = decodeCursor(f.Cursor); err != nil {
			fe.Add("cursor", "is not a cursor of this list")
		}
	}
	return q, fe.Err()
}

// pageSize resolves a requested page size: def for 0, and a problem of
// the limit field outside 1..maxSize.
func pageSize(limit, def, maxSize int, fe FieldErrors) int {
	switch {
	case limit == 0:
		return def
	case limit < 0 || limit > maxSize:
		fe.Add("limit", fmt.Sprintf("must be between 1 and %d", maxSize))
	}
	return limit
}

// checkAmounts validates the currency and amount bounds into q.
func (f PaymentFilter) checkAmounts(q *PaymentQuery, fe FieldErrors) {
	if f.Currency != "" {
		cur, ok := LookupCurrency(f.Currency)
		if !ok {
			fe.Add("currency", fmt.Sprintf("unknown currency %q", f.Currency))
		}
		q.Currency = cur.Code
	}
	switch {
	case f.MinTotal < 0 || f.MaxTotal < 0:
		fe.Add("amount", "bounds must not be negative")
	case f.MaxTotal > 0 && f.MaxTotal < f.MinTotal:
		fe.Add("max_amount", "must not be below the lower bound")
	case (f.MinTotal > 0 || f.MaxTotal > 0) && f.Currency == "":
		fe.Add("currency", "is required with an amount bound")
	}
}

// checkSearch validates the search text into q.
func (f PaymentFilter) checkSearch(q *PaymentQuery, fe FieldErrors) {
	s := strings.TrimSpace(f.Q)
	if s == "" {
		return
	}
	if len(s) > maxSearchLength || strings.ContainsFunc(s, unicode.IsControl) {
		fe.Add("q", fmt.Sprintf("must be at most %d characters without control characters", maxSearchLength))
		return
	}
	q.Search, q.SearchEmail = s, SearchEmail(s)
	if len(s) == 4 && strings.Trim(s, "0123456789") == "" {
		q.SearchLast4 = s
	}
}

// ParsePaymentFilter reads a filter from a query string, as the
// dashboard's payments page and its CSV link send it: status and method
// (repeated or comma-separated), from and to (days YYYY-MM-DD, UTC, both
// included), currency, min_amount and max_amount (decimals of the
// currency), q, cursor and limit. Empty parameters are absent.
func ParsePaymentFilter(v url.Values) (PaymentFilter, error) {
	var f PaymentFilter
	fe := FieldErrors{}
	for _, s := range listParam(v, "status") {
		f.Statuses = append(f.Statuses, Status(strings.ToUpper(s)))
	}
	types := PaymentTypes()
	for _, s := range listParam(v, "method") {
		i := slices.IndexFunc(types, func(t string) bool { return strings.EqualFold(t, s) })
		if i < 0 {
			fe.Add("method", fmt.Sprintf("unknown payment method %q", s))
			continue
		}
		f.Methods = append(f.Methods, types[i])
	}
	f.From = parseDayParam(v, "from", 0, fe)
	f.To = parseDayParam(v, "to", 1, fe)
	f.Currency = strings.ToUpper(strings.TrimSpace(v.Get("currency")))
	cur, ok := LookupCurrency(f.Currency)
	for name, dst := range map[string]*int64{"min_amount": &f.MinTotal, "max_amount": &f.MaxTotal} {
		raw := strings.TrimSpace(v.Get(name))
		if raw == "" {
			continue
		}
		switch {
		case !ok && f.Currency == "":
			fe.Add("currency", "is required with an amount bound")
			continue
		case !ok:
			fe.Add("currency", "must be a supported ISO 4217 code such as AUD with an amount bound")
			continue
		}
		n, err := ParseAmount(raw, cur)
		if err != nil || n < 0 {
			fe.Add(name, fmt.Sprintf("must be a non-negative amount of %s", cur.Code))
		}
		*dst = n
	}
	f.Q, f.Cursor = v.Get("q"), v.Get("cursor")
	if ContainsCardNumber(f.Q) {
		fe.Add("q", "search by the card's last 4 digits: a whole card number is never searched for or kept")
	}
	if raw := strings.TrimSpace(v.Get("limit")); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 {
			fe.Add("limit", fmt.Sprintf("must be between 1 and %d", MaxPaymentPage))
		}
		f.Limit = n
	}
	return f, fe.Err()
}

// listParam collects a repeated or comma-separated parameter.
func listParam(v url.Values, name string) []string {
	var out []string
	for _, raw := range v[name] {
		for _, s := range strings.Split(raw, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// parseDayParam reads a day parameter as the UTC midnight addDays after it.
func parseDayParam(v url.Values, name string, addDays int, fe FieldErrors) time.Time {
	raw := strings.TrimSpace(v.Get(name))
	if raw == "" {
		return time.Time{}
	}
	d, err := time.Parse(time.DateOnly, raw)
	if err != nil {
		fe.Add(name, "must be a day as YYYY-MM-DD")
		return time.Time{}
	}
	return d.AddDate(0, 0, addDays)
}

// encodeCursor is an opaque keyset position: a row's created time and id.
func encodeCursor(created time.Time, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(created.UnixMicro(), 10) + "." + id))
}

// decodeCursor reads a position encodeCursor made.
func decodeCursor(c string) (time.Time, string, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return time.Time{}, "", fmt.Errorf("cursor: %w", err)
	}
	at, id, ok := strings.Cut(string(b), ".")
	micros, err := strconv.ParseInt(at, 10, 64)
	if !ok || err != nil || id == "" || micros <= 0 || CheckText(id, MaxInvoiceLength) != nil {
		return time.Time{}, "", fmt.Errorf("cursor: malformed")
	}
	return time.UnixMicro(micros).UTC(), id, nil
}

// ListPayments returns one page of m's payments matching f, newest first.
// A filter that does not validate is an invalid request naming its fields.
func (s *Service) ListPayments(ctx context.Context, m *Merchant, f PaymentFilter) (*PaymentPage, error) {
	q, err := f.query(m.ID)
	if err != nil {
		return nil, err
	}
	return s.paymentPage(ctx, q)
}

// paymentPage runs q, reading one row more than a page to know whether a
// next page exists.
func (s *Service) paymentPage(ctx context.Context, q PaymentQuery) (*PaymentPage, error) {
	limit := q.Limit
	q.Limit++
	var rows []*Transaction
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		rows, err = tx.SearchTransactions(q)
		return err
	})
	if err != nil {
		return nil, Internal("list payments", err)
	}
	page := &PaymentPage{Payments: rows}
	if len(rows) > limit {
		page.Payments = rows[:limit]
		last := rows[limit-1]
		page.Next = encodeCursor(last.CreatedAt, last.Reference)
	}
	return page, nil
}

// paymentsCSVHeader is the header row of the payments export. total is
// what the payment was for, whatever its status; taken is the money it
// took (see Transaction.Taken) and taken_net_of_refunds what is left of
// it after refunds, so that the sums of the last two columns are money
// taken, never a decline or a hold.
var paymentsCSVHeader = []string{"reference", "created_utc", "status", "method", "channel", "currency",
	"amount", "surcharge", "total", "refunded", "invoice_number", "customer_email", "card_brand", "card_last4",
	"taken", "taken_net_of_refunds"}

// WritePaymentsCSV writes every payment of m matching f (its Cursor and
// Limit are ignored) as CSV, newest first, reading and flushing a page
// at a time so that an export of any size holds one page in memory.
// The filter is validated before anything is written. Text a merchant's
// customers chose is written so that a spreadsheet does not run it as a
// formula.
func (s *Service) WritePaymentsCSV(ctx context.Context, w io.Writer, m *Merchant, f PaymentFilter) error {
	f.Cursor, f.Limit = "", MaxPaymentPage
	q, err := f.query(m.ID)
	if err != nil {
		return err
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(paymentsCSVHeader); err != nil {
		return fmt.Errorf("write payments csv: %w", err)
	}
	for {
		page, err := s.paymentPage(ctx, q)
		if err != nil {
			return err
		}
		for _, t := range page.Payments {
			if err := cw.Write(paymentRecord(t)); err != nil {
				return fmt.Errorf("write payments csv: %w", err)
			}
		}
		cw.Flush()
		if err := cw.Error(); err != nil {
			return fmt.Errorf("write payments csv: %w", err)
		}
		if page.Next == "" {
			return nil
		}
		q.BeforeCreated, q.BeforeReference, _ = decodeCursor(page.Next)
	}
}

// paymentRecord is one CSV row; amounts are decimals of the currency.
func paymentRecord(t *Transaction) []string {
	money := func(minor int64) string { return FormatIn(minor, t.Currency) }
	brand := ""
	if t.Details.Card != nil {
		brand = t.Details.Card.Brand
	}
	return []string{t.Reference, t.CreatedAt.Format(time.RFC3339), string(t.Status.Public()), t.PaymentType, t.Channel, t.Currency,
		money(t.Amount), money(t.PayerSurcharge()), money(t.Total), money(t.Refunded),
		csvText(t.InvoiceNumber), csvText(t.Details.Customer.Email), brand, t.CardLast4(),
		money(t.Taken()), money(t.Refundable())}
}

// csvText defuses text a spreadsheet would read as a formula (OWASP's
// CSV injection advice): a quote goes before a formula character (=, +,
// -, @, tab, carriage return) wherever a cell may begin, at the start and
// after a ';' or ',' (spaces and an opening '"' between skipped: a quote
// opens a quoted cell, whose text still begins it), since a spreadsheet in a
// locale that splits on ';' starts a cell there: ";=1+1" is written
// ";'=1+1", not "';=1+1", whose second cell would still be a formula.
func csvText(s string) string {
	var b strings.Builder
	cellStart := true
	for i := range len(s) {
		c := s[i]
		if cellStart && strings.IndexByte("=+-@\t\r", c) >= 0 {
			b.WriteByte('\'')
		}
		b.WriteByte(c)
		cellStart = c == ';' || c == ',' || cellStart && (c == ' ' || c == '"')
	}
	return b.String()
}
