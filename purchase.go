package paylink

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"time"
)

// PurchaseRequest is a card purchase or hold, as decoded by an adapter.
type PurchaseRequest struct {
	CompanyToken     string
	TransactionToken string
	Customer         Customer
	StoreCard        bool
	ThreeDS          bool
	RedirectURL      string
	CardToken        string
	Card             *CardDetails
	InvoiceNumber    string
	Amount           int64
	Currency         string
	ApplySurcharge   bool
	PreAuth          bool
	Metadata         map[string]string

	// Set by paylink's own pages, never by API clients.
	Channel       string
	PaymentType   string
	PaymentLinkID string
	WebhookURL    string // the link's dynamic webhook, delivered besides the company one
	Browser       string // the link page's browser cookie (TransactionDetails.BrowserHash)
}

// MaxInvoiceLength is the longest accepted invoice number (spec: 255).
const MaxInvoiceLength = 255

// checkInvoice is the invoice number rule: CheckText up to
// MaxInvoiceLength; not "." or "..", which a status look-up by invoice
// number (GET /v5/purchase/{invoice}) could never reach: HTTP routers
// resolve them as path segments; no invisible characters that spell
// nothing (invisibleIn: Unicode's default-ignorable characters but those
// writing needs), with which two invoice numbers that read the same are
// different look-ups;
// and not in the shape of a paylink payment or refund reference, which a
// look-up resolves first: a payment whose invoice number is another's
// reference could never be looked up by it.
func checkInvoice(f FieldErrors, field, value string) {
	checkField(f, field, value, MaxInvoiceLength)
	switch {
	case value == "." || value == "..":
		f.Add(field, `must not be "." or ".."`)
	case invisibleIn(value):
		f.Add(field, "must not contain invisible characters that spell nothing (Unicode's default-ignorable characters: "+
			"zero-width spaces, word joiners, soft hyphens, byte order marks, tag characters, Hangul fillers, "+
			"a variation selector that selects no look of the character before it)")
	case paymentReferenceShape(value):
		f.Add(field, "must not have the shape of a paylink reference (pr_, dd_ or rf_ and 25 letters and digits), which a look-up would resolve as that reference")
	}
}

// paymentReferenceShape reports whether s has the shape of a reference
// that Service.reference makes for a payment or refund.
func paymentReferenceShape(s string) bool {
	for _, prefix := range []string{"pr_", "dd_", "rf_"} {
		if rest, ok := strings.CutPrefix(s, prefix); ok && len(rest) == referenceLength &&
			!strings.ContainsFunc(rest, func(r rune) bool { return !isBase62(r) }) {
			return true
		}
	}
	return false
}

// validate checks the rules of a purchase request that need no database.
func (r *PurchaseRequest) validate(now time.Time) error {
	f := FieldErrors{}
	checkMoney(f, "purchase", r.Amount, r.Currency)
	checkInvoice(f, "purchase.invoice_number", r.InvoiceNumber)
	checkCustomer(f, r.Customer)
	switch {
	case r.Card == nil && r.CardToken == "":
		f.Add("card", "send either card.token or the card details (number, expiry_month, expiry_year)")
	case r.Card != nil && r.CardToken != "":
		f.Add("card", "send either card.token or the card details, not both")
	case r.Card != nil:
		checkCard(f, r.Card, now)
	}
	if r.ThreeDS {
		checkRedirectURL(f, r.RedirectURL)
	}
	return f.Err()
}

// checkMoney validates an amount already parsed in the currency, up to
// MaxAmount; its fields are object.amount and object.currency, or amount
// and currency for an object of "" (a link, a surcharge preview).
func checkMoney(f FieldErrors, object string, amount int64, currency string) {
	checkMoneyUpTo(f, object, amount, currency, MaxAmount)
}

// checkMoneyUpTo is checkMoney up to max: MaxTotal for a refund, which
// may be of a payment's whole total (its surcharge or fee included).
func checkMoneyUpTo(f FieldErrors, object string, amount int64, currency string, max int64) {
	prefix := ""
	if object != "" {
		prefix = object + "."
	}
	if _, ok := LookupCurrency(currency); !ok {
		f.Add(prefix+"currency", "must be a supported ISO 4217 currency code such as AUD")
	}
	if amount <= 0 {
		f.Add(prefix+"amount", "must be greater than zero")
	}
	if amount > max {
		f.Add(prefix+"amount", "is too large")
	}
}

// checkCustomer validates the customer fields the spec requires.
func checkCustomer(f FieldErrors, c Customer) {
	if c.IPAddress == "" {
		f.Add("customer.ip_address", "is required")
	} else if net.ParseIP(c.IPAddress) == nil {
		f.Add("customer.ip_address", "must be an IPv4 or IPv6 address")
	}
	if err := CheckTimezone(c.Timezone); err != nil {
		f.Add("customer.timezone", err.Error())
	}
	checkCustomerFields(f, "customer.", c)
}

// CheckTimezone accepts any IANA zone name, UTC included. Zone names
// start with a capital letter; the host's zoneinfo directory also holds
// files that time.LoadLocation would read and that are not zones of their
// own ("localtime", "posixrules", the "right/" and "posix/" copies), so
// what is accepted does not depend on the machine.
func CheckTimezone(name string) error {
	if name == "" {
		return errors.New("is required")
	}
	if name == "Local" || name[0] < 'A' || name[0] > 'Z' || strings.Contains(name, "..") {
		return errors.New("must be an IANA time zone name such as Australia/Sydney or UTC")
	}
	if _, err := time.LoadLocation(name); err != nil {
		return errors.New("must be an IANA time zone name such as Australia/Sydney or UTC")
	}
	return nil
}

// checkCard validates card details in place (normalising PAN and year);
// its field errors name the request's card object, card.*. A security
// code must have its brand's length (CVCLength).
func checkCard(f FieldErrors, c *CardDetails, now time.Time) {
	brand := checkCardDetails(f, c, now)
	checkCVC(f, c.CVC, CVCLength(brand))
}

// checkQuotedCard is checkCard for a surcharge preview, which authorises
// nothing and whose security code the spec types a number (4.6), which
// loses a code's leading zeros ("045" arrives as 45): the code need only
// be at most 4 digits.
func checkQuotedCard(f FieldErrors, c *CardDetails, now time.Time) {
	checkCardDetails(f, c, now)
	if len(c.CVC) > 4 || !allDigits(c.CVC) {
		f.Add("card.cvc", "must be at most 4 digits")
	}
}

// checkCardDetails checks everything of a card but its security code,
// and returns its brand ("" when its number is refused).
func checkCardDetails(f FieldErrors, c *CardDetails, now time.Time) (brand string) {
	pan, brand, err := ParseCardNumber(c.Number)
	if err != nil {
		f.Add("card.number", err.Error())
	}
	c.Number = pan
	year, err := CheckExpiry(c.ExpiryMonth, c.ExpiryYear, now)
	if err != nil {
		field := "card.expiry_year"
		if c.ExpiryMonth < 1 || c.ExpiryMonth > 12 {
			field = "card.expiry_month"
		}
		f.Add(field, err.Error())
	}
	c.ExpiryYear = year
	checkField(f, "card.holder_name", c.HolderName, MaxFieldLength)
	return brand
}

// checkCVC checks a security code, when one is sent: n digits, its
// card brand's length (CVCLength), or 3 or 4 when n is 0 (the brand not
// known, whose number is refused anyway).
func checkCVC(f FieldErrors, cvc string, n int) {
	switch {
	case cvc == "":
	case n != 0 && (len(cvc) != n || !allDigits(cvc)):
		f.Add("card.cvc", CVCLengthProblem(n))
	case n == 0 && (len(cvc) < 3 || len(cvc) > 4 || !allDigits(cvc)):
		f.Add("card.cvc", "must be 3 or 4 digits")
	}
}

// checkRedirectURL requires an absolute HTTPS address whose host is an
// ASCII name or an IPv4 address: the challenge page sends the customer
// back there through a form, and its Content-Security-Policy's
// form-action, which must name the address's origin, can name no IPv6
// literal, and a browser compares a name in its ASCII form.
func checkRedirectURL(f FieldErrors, raw string) {
	const field = "customer.authentication_redirect_url"
	if raw == "" {
		f.Add(field, "is required when should_service_apply_authentication is true")
		return
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil || u.Scheme != "https" || u.Hostname() == "" || !validPort(u):
		f.Add(field, "must be an absolute https:// address")
	case !asciiHostName(u.Hostname()):
		f.Add(field, "must name its host in ASCII, an internationalised name in its xn-- form, or by an IPv4 address: "+
			"the customer's browser is sent back there from the challenge page, whose security policy can name no other")
	case ContainsCardNumber(raw): // kept with the purchase and shown again
		f.Add(field, errCardNumberInText.Error())
	}
}

// asciiHostName reports whether host is a name in ASCII or an IPv4
// address as a browser writes it: dot-separated labels of 1 to 63
// letters, digits and hyphens, none starting or ending with a hyphen, a
// final dot allowed; a host whose last label is a number (all digits, or
// 0x and hex digits) is an IPv4 address to a browser, which rewrites
// 127.1 or 0x7f.0.0.1 as 127.0.0.1 and refuses shop.123, so it must be
// one in dotted decimal already.
func asciiHostName(host string) bool {
	labels := strings.Split(strings.TrimSuffix(host, "."), ".")
	if last := strings.ToLower(labels[len(labels)-1]); allDigits(last) || strings.HasPrefix(last, "0x") {
		a, err := netip.ParseAddr(host)
		return err == nil && a.Is4()
	}
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' ||
			strings.Trim(l, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-") != "" {
			return false
		}
	}
	return true
}

// Purchase charges (or, with PreAuth, holds) a card. Declines and
// processing failures are results, not errors: the transaction is stored
// and returned with status DECLINED or FAILED.
func (s *Service) Purchase(ctx context.Context, m *Merchant, req PurchaseRequest) (*Transaction, error) {
	if err := s.CheckCompanyToken(ctx, m, req.CompanyToken); err != nil {
		return nil, err
	}
	if err := req.validate(s.now()); err != nil {
		return nil, err
	}
	return s.purchase(ctx, m, req, func(tx Tx, ref string) error { return s.consumeToken(tx, m, req.TransactionToken, ref) })
}

// purchase runs a validated purchase. authorise runs first inside the
// first database transaction, with the reference the transaction will
// have: for the API it consumes the transaction token; paylink's own
// pages claim a payment-link attempt for that transaction instead. The
// transaction is created PROCESSING in that database transaction, the
// processor is asked outside any, and the answer is recorded in a second
// (or all in one: purchaseInOne).
func (s *Service) purchase(ctx context.Context, m *Merchant, req PurchaseRequest, authorise func(tx Tx, ref string) error) (*Transaction, error) {
	inOne := s.asksInTransaction()
	newCard, err := s.describeCard(m, req.Card, req.StoreCard, req.Customer.ID)
	if err != nil {
		return nil, err
	}
	// A one-off card asked in process is sealed only if it is kept
	// (keepOneOffCard): most never are.
	if newCard != nil && (newCard.MultiUse || !inOne) {
		if err := s.sealCard(newCard, req.Card.Number); err != nil {
			return nil, err
		}
	}
	ref, err := s.reference("pr_")
	if err != nil {
		return nil, Internal("purchase reference", err)
	}
	if inOne {
		return s.purchaseInOne(ctx, m, req, ref, newCard, authorise)
	}
	var t *Transaction
	var card *Card
	err = s.updateSpending(ctx, m, req.TransactionToken, ref, func(tx Tx) error {
		if err := authorise(tx, ref); err != nil {
			return err
		}
		var err error
		if card, err = s.cardForPurchase(tx, m, req.CardToken, newCard); err != nil {
			return err
		}
		t = s.newCardTransaction(m, &req, card, ref)
		return tx.CreateTransaction(t)
	})
	if err != nil {
		return nil, asServiceError("purchase", err)
	}
	return s.authorize(ctx, t, card, req.Card, AuthRequest{Hold: req.PreAuth, ThreeDS: req.ThreeDS})
}

// asServiceError passes *Error through and wraps anything else as
// internal. An unreachable database stays recognisable (AsError answers
// it 503) even where the store error is inside one of our own errors. A
// transaction token found spent (ErrTokenSpent, from consumeToken or from
// Update itself on PostgreSQL) is the one answer errTokenUsed.
func asServiceError(op string, err error) error {
	if errors.Is(err, ErrTokenSpent) {
		return errTokenUsed
	}
	var e *Error
	if errors.As(err, &e) && !errors.Is(err, ErrUnavailable) {
		return e
	}
	return Internal(op, err)
}

// prepareCard validates nothing (validate did) but does the CPU work of
// vaulting a new card outside any database transaction.
func (s *Service) prepareCard(m *Merchant, d *CardDetails, multiUse bool, customerID string) (*Card, error) {
	c, err := s.describeCard(m, d, multiUse, customerID)
	if c == nil || err != nil {
		return c, err
	}
	return c, s.sealCard(c, d.Number)
}

// cardBinding is what c's sealed number is bound to (SecretBinding).
func cardBinding(c *Card) string { return SecretBinding(SecretCard, c.MerchantID, c.Token) }

// sealCard seals card number into c, to be stored.
func (s *Service) sealCard(c *Card, number string) error {
	sealed, err := s.vault.Seal([]byte(number), cardBinding(c))
	if err != nil {
		return Internal("seal card", err)
	}
	c.Sealed = sealed
	return nil
}

// describeCard makes the Card of new card details, its number not yet
// sealed (sealCard); nil without details.
func (s *Service) describeCard(m *Merchant, d *CardDetails, multiUse bool, customerID string) (*Card, error) {
	if d == nil {
		return nil, nil
	}
	tok, err := s.cardToken()
	if err != nil {
		return nil, Internal("card token", err)
	}
	if multiUse && customerID == "" {
		if customerID, err = s.reference("cus_"); err != nil {
			return nil, Internal("customer id", err)
		}
	}
	fingerprint, fingerprintKeyID := s.vault.Fingerprint(m.ID, d.Number)
	return &Card{
		Token: tok, MerchantID: m.ID, MultiUse: multiUse, CustomerID: customerID,
		Info: DescribeCard(*d, fingerprint, m.Country), FingerprintKeyID: fingerprintKeyID, CreatedAt: s.now(),
	}, nil
}

// cardForPurchase stores a new card, or checks and (for single-use tokens)
// spends an existing one, inside tx.
func (s *Service) cardForPurchase(tx Tx, m *Merchant, token string, newCard *Card) (*Card, error) {
	if newCard != nil {
		if !newCard.MultiUse {
			newCard.UsedAt = newCard.CreatedAt // vaulted only for this transaction
		}
		return newCard, tx.CreateCard(newCard)
	}
	c, err := s.usableCard(tx, m, token)
	if err != nil {
		return nil, err
	}
	if !c.MultiUse {
		if err := tx.MarkCardUsed(c.Token, s.now()); errors.Is(err, ErrConflict) {
			return nil, spentOrInvalidated(tx, m, token)
		} else if err != nil {
			return nil, err
		}
	}
	return c, nil
}

// spentOrInvalidated says why a single-use token read as usable could not
// be spent: another purchase spent it, or an invalidation committed in
// between (PostgreSQL's read committed shows it only to the next read).
func spentOrInvalidated(tx Tx, m *Merchant, token string) error {
	c, err := tx.Card(m.ID, token)
	switch {
	case err != nil:
		return err
	case !c.InvalidatedAt.IsZero():
		return errCardInvalidated
	}
	return errCardTokenUsed
}

var errCardTokenUsed = Errorf(KindConflict, CodeCardTokenUsed, "this single-use card token has already been used: tokenise the card again")

// usableCard loads a card token of m that is not invalidated or spent.
func (s *Service) usableCard(tx Tx, m *Merchant, token string) (*Card, error) {
	c, err := s.merchantCard(tx, m, token)
	if err != nil {
		return nil, err
	}
	if !c.InvalidatedAt.IsZero() {
		return nil, errCardInvalidated
	}
	if !c.MultiUse && !c.UsedAt.IsZero() {
		return nil, errCardTokenUsed
	}
	return c, nil
}

// newCardTransaction builds the PROCESSING transaction ref of a purchase.
func (s *Service) newCardTransaction(m *Merchant, req *PurchaseRequest, card *Card, ref string) *Transaction {
	region := RegionClass(card.Info.Country, m.Country)
	d := TransactionDetails{
		Card: &card.Info, RegionClass: region, CardMultiUse: card.MultiUse,
		ReturnCardToken: card.MultiUse, Customer: req.Customer, Metadata: req.Metadata,
		ApplySurcharge: req.ApplySurcharge, WebhookURL: req.WebhookURL,
	}
	if card.MultiUse && d.Customer.ID == "" {
		d.Customer.ID = card.CustomerID
	}
	if req.Browser != "" {
		d.BrowserHash = HashSecret(req.Browser)
	}
	if req.ThreeDS {
		d.ThreeDS = &ThreeDS{Requested: true, RedirectURL: req.RedirectURL, BrowserHash: d.BrowserHash}
	}
	var surcharge int64
	if req.ApplySurcharge {
		d.SurchargeRate, surcharge = m.Settings.Surcharge.Quote(card.Info, m.Country, req.Amount)
	}
	now := s.now()
	t := &Transaction{
		Reference: ref, MerchantID: m.ID, InvoiceNumber: req.InvoiceNumber,
		PaymentType: orDefault(req.PaymentType, PaymentTypeCard), Channel: orDefault(req.Channel, ChannelAPI),
		Status: StatusProcessing, Currency: req.Currency, Amount: req.Amount, Surcharge: surcharge,
		Total: req.Amount + surcharge, PreAuth: req.PreAuth, CardToken: card.Token,
		PaymentLinkID: req.PaymentLinkID, CreatedAt: now, UpdatedAt: now, Details: d,
	}
	if req.PreAuth {
		t.PreAuthAmount = t.Total
	}
	return t
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// authorize asks the processor about a PROCESSING transaction, outside
// any database transaction, then records the answer with a
// compare-and-set. details is the card as the client sent it (nil for a
// token, whose PAN is opened from the vault).
func (s *Service) authorize(ctx context.Context, t *Transaction, card *Card, details *CardDetails, ar AuthRequest) (*Transaction, error) {
	ar, err := s.authRequest(t, card, details, ar)
	if err != nil {
		return nil, err
	}
	ctx, call, cancel := s.callContext(ctx, t.UpdatedAt)
	defer cancel()
	res, err := ask(call, s.processor.Authorize, ar)
	if answerLost(call, err) {
		return s.awaitInquiry(ctx, t, "authorize", err), nil
	}
	if err := s.applyAnswer(ctx, t, res, err, ar.Hold); err != nil {
		return nil, err
	}
	return s.recordOutcome(ctx, t, "authorize")
}

// authRequest completes ar with t's reference, card and total.
func (s *Service) authRequest(t *Transaction, card *Card, details *CardDetails, ar AuthRequest) (AuthRequest, error) {
	cd, err := s.cardDetails(card, details)
	if err != nil {
		return ar, err
	}
	cur, _ := LookupCurrency(t.Currency)
	ar.Reference, ar.Card, ar.Amount = t.Reference, cd, Money{Amount: t.Total, Currency: cur}
	return ar, nil
}

// applyAnswer applies the processor's answer (or its error: FAILED, no
// money taken) to t, with a 3-D Secure challenge when it asks for one.
func (s *Service) applyAnswer(ctx context.Context, t *Transaction, res AuthResult, perr error, hold bool) error {
	if perr != nil {
		s.log.ErrorContext(ctx, "processor error", "reference", t.Reference, "err", perr)
		res = AuthResult{Outcome: OutcomeFailed, Message: "the payment processor could not be reached; no money was taken, please try again"}
	}
	s.applyAuth(t, res, hold)
	if t.Status == StatusRequiresAuthentication {
		if err := s.issueChallenge(t); err != nil {
			return Internal("issue 3-D Secure challenge", err)
		}
	}
	return nil
}

// recordOutcome saves t, moved on from PROCESSING by a processor's
// answer, with its outcome (audit event, webhooks) in one database
// transaction. A conflict means recovery recorded the processor's answer
// first: see lateTransaction.
func (s *Service) recordOutcome(ctx context.Context, t *Transaction, op string) (*Transaction, error) {
	err := s.store.Update(ctx, func(tx Tx) error {
		m := newOutcomeMerchant(tx, t)
		if err := s.write(tx, t, StatusProcessing, m); err != nil {
			return err
		}
		if err := s.auditHoldOp(ctx, tx, t, op, holdOpAmount(t, op), nil); err != nil {
			return err
		}
		return s.outcome(tx, t, m, outcomeStep(op, StatusProcessing, t.Status))
	})
	if errors.Is(err, ErrConflict) {
		return s.lateTransaction(ctx, t, op)
	}
	if err != nil && !s.recorded(ctx, t, err) {
		return s.unrecordedOutcome(ctx, t, op, err)
	}
	return t, nil
}

// unrecordedOutcome answers a processor's answer that could not be
// written for an unreachable database: the transaction stays PROCESSING,
// and the recovery job asks the processor and records its answer, so the
// client gets t in progress (PENDING: look it up), never a 503 inviting it
// to pay again when the acquirer may have approved. Any other error is
// internal.
func (s *Service) unrecordedOutcome(ctx context.Context, t *Transaction, op string, err error) (*Transaction, error) {
	if !errors.Is(err, ErrUnavailable) {
		return nil, Internal("record "+op, err)
	}
	s.log.WarnContext(ctx, "the processor's answer could not be recorded: the recovery job will ask the processor", "op", op, "reference", t.Reference, "err", err)
	t.Status, t.ProcessedAt = StatusProcessing, time.Time{}
	t.Details.AuthCode, t.Details.Decline, t.Details.Message = "", nil, msgAnswerUnrecorded
	t.AuthenticationURL = "" // a challenge issued with the answer was not stored: its page does not exist
	return t, nil
}

// msgAnswerUnrecorded is the message of a transaction whose processor
// answer could not be written.
const msgAnswerUnrecorded = "The payment processor answered, but paylink could not record its answer yet. paylink asks the processor within a few minutes and records the outcome (check the status, or wait for the webhook). Do not retry until then."

// recorded reports whether t, written with a compare-and-set on its
// version by a transaction that ended in err, was recorded all the same:
// an unreachable database may have committed a transaction whose answer
// was lost (a connection cut during COMMIT; the store has waited for the
// server to finish with it). The stored transaction then has t's version
// and status; it has neither if the write rolled back.
func (s *Service) recorded(ctx context.Context, t *Transaction, err error) bool {
	if !errors.Is(err, ErrUnavailable) {
		return false
	}
	var stored *Transaction
	if rerr := s.store.View(ctx, func(tx Tx) error {
		var err error
		stored, err = tx.Transaction(t.MerchantID, t.Reference)
		return err
	}); rerr != nil || stored.Version != t.Version || stored.Status != t.Status {
		return false
	}
	s.log.WarnContext(ctx, "the database's answer to a commit was lost, and the transaction had committed", "reference", t.Reference, "err", err)
	return true
}

// cardDetails returns the card to send to the processor.
func (s *Service) cardDetails(card *Card, details *CardDetails) (CardDetails, error) {
	if details != nil {
		return *details, nil
	}
	if card.Sealed.KeyID == "" {
		return CardDetails{}, Errorf(KindConflict, CodeCardTokenUsed, "this card can no longer be charged; its number was erased")
	}
	pan, err := s.vault.Open(card.Sealed, cardBinding(card))
	if err != nil {
		return CardDetails{}, Internal("open card", err)
	}
	return CardDetails{Number: string(pan), ExpiryMonth: card.Info.ExpiryMonth,
		ExpiryYear: card.Info.ExpiryYear, HolderName: card.Info.HolderName}, nil
}

// applyAuth moves t to the status the processor's answer implies.
func (s *Service) applyAuth(t *Transaction, res AuthResult, hold bool) {
	now := s.now()
	t.UpdatedAt = now
	d := &t.Details
	d.AVSResult, d.AcquirerTransID = res.AVSResult, res.AcquirerTransID
	if d.CVVResult == "" || res.CVVResult != "unchecked" {
		// An authorisation after a 3-D Secure challenge has no CVC (it is
		// never stored): keep the first authorisation's CVV result.
		d.CVVResult = res.CVVResult
	}
	if res.ThreeDS != nil {
		d.ThreeDS = mergeThreeDS(d.ThreeDS, res.ThreeDS)
	}
	switch res.Outcome {
	case OutcomeApproved:
		t.Status, t.ProcessedAt, d.AuthCode = StatusApproved, now, res.AuthCode
		if hold {
			t.Status = StatusPreAuthorised
		}
		d.Message = "Transaction processed successfully"
	case OutcomeDeclined:
		t.Status, t.ProcessedAt, d.Decline = StatusDeclined, now, res.Decline
		d.Message = res.Message
	case OutcomeChallenge:
		t.Status = StatusRequiresAuthentication
		d.Message = "The card issuer requires the customer to authenticate: redirect them to customer.authentication_redirect_url"
	default:
		t.Status, t.ProcessedAt, d.Decline = StatusFailed, now, res.Decline
		d.Message = orDefault(res.Message, "The payment could not be processed; no money was taken")
	}
}

// mergeThreeDS keeps the request's 3DS fields and adds the processor's.
func mergeThreeDS(have, got *ThreeDS) *ThreeDS {
	if have == nil {
		return got
	}
	merged := *got
	merged.Requested, merged.RedirectURL = have.Requested, have.RedirectURL
	merged.ChallengeHash, merged.ChallengeExpiresAt = have.ChallengeHash, have.ChallengeExpiresAt
	merged.AttemptExpiresAt, merged.BrowserHash = have.AttemptExpiresAt, have.BrowserHash
	return &merged
}
