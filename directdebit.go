package paylink

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// DirectDebitCurrency is the only currency of direct debits: they are
// drawn from Australian bank accounts (BSB and account number) through
// BECS, which settles in Australian dollars.
const DirectDebitCurrency = "AUD"

// Account number length limits: Australian account numbers have 5 to 9
// digits (BECS allows 9 characters; banks issue 5 to 9 digits).
const (
	MinAccountNumberLength = 5
	MaxAccountNumberLength = 9
)

// DefaultDirectDebitFee is the direct debit fee of a merchant without its
// own configuration: 0.5% plus AUD 0.30, capped at AUD 5.00.
func DefaultDirectDebitFee() DirectDebitFeeConfig {
	return DirectDebitFeeConfig{Percent: 5000, Fixed: 30, Cap: 500}
}

// FeeFor returns the fee for an amount (minor units): Percent of it
// rounded half-up, plus Fixed, at most Cap (no cap when Cap is 0).
func (c DirectDebitFeeConfig) FeeFor(amount int64) int64 {
	fee := c.Percent.Apply(amount) + c.Fixed
	if c.Cap > 0 && fee > c.Cap {
		fee = c.Cap
	}
	return fee
}

// Validate checks a fee configuration.
func (c DirectDebitFeeConfig) Validate() error {
	switch {
	case c.Percent < 0 || c.Percent > 100*PercentUnit:
		return errors.New("direct debit fee percent must be between 0 and 100")
	case c.Fixed < 0 || c.Fixed > MaxAmount:
		return errors.New("direct debit fixed fee must be between 0 and the largest amount")
	case c.Cap < 0 || c.Cap > MaxAmount:
		return errors.New("direct debit fee cap must be between 0 (no cap) and the largest amount")
	case c.Cap == 0 && c.FeeFor(MaxAmount) > MaxAmount:
		// The fee stays within MaxAmount, so a debit's total (and the
		// refund of all of it) stays within MaxTotal.
		return errors.New("direct debit fee without a cap could be above the largest amount (percent and fixed fee together): set a cap")
	}
	return nil
}

// DirectDebitFee returns the merchant's fee configuration, or the
// default when it has none.
func (m *Merchant) DirectDebitFee() DirectDebitFeeConfig {
	if m.Settings.DirectDebit != nil {
		return *m.Settings.DirectDebit
	}
	return DefaultDirectDebitFee()
}

// DirectDebitFeeQuote is the fee of a direct debit of Amount.
type DirectDebitFeeQuote struct {
	Amount   int64 // the sale amount
	Fee      int64
	Total    int64 // Amount + Fee: what the debit takes when the fee is applied
	Config   DirectDebitFeeConfig
	Currency string
}

// PreviewDirectDebitFee returns exactly the fee that a direct debit of the
// amount with should_service_apply_fee would add.
func (s *Service) PreviewDirectDebitFee(ctx context.Context, m *Merchant, companyToken string, amount int64, currency string) (*DirectDebitFeeQuote, error) {
	if err := s.CheckCompanyToken(ctx, m, companyToken); err != nil {
		return nil, err
	}
	f := FieldErrors{}
	checkDebitMoney(f, "purchase", amount, currency, MaxAmount)
	if err := f.Err(); err != nil {
		return nil, err
	}
	cfg := m.DirectDebitFee()
	fee := cfg.FeeFor(amount)
	return &DirectDebitFeeQuote{Amount: amount, Fee: fee, Total: amount + fee, Config: cfg, Currency: DirectDebitCurrency}, nil
}

// checkDebitMoney validates an amount of a direct debit (max MaxAmount)
// or of its refund (max MaxTotal: the debited total, fee included), in
// AUD.
func checkDebitMoney(f FieldErrors, prefix string, amount int64, currency string, max int64) {
	checkMoneyUpTo(f, prefix, amount, currency, max)
	if _, has := f[prefix+".currency"]; !has && strings.ToUpper(currency) != DirectDebitCurrency {
		f.Add(prefix+".currency", "direct debits are in AUD only (Australian bank accounts)")
	}
}

// NormalizeBSB accepts a BSB as 062-000 or 062000 and returns 062-000.
func NormalizeBSB(raw string) (string, error) {
	s := strings.TrimSpace(raw)
	if len(s) == 7 && s[3] == '-' {
		s = s[:3] + s[4:]
	}
	if len(s) != 6 || !allDigits(s) {
		return "", errors.New("must be 6 digits, as 062-000 or 062000")
	}
	return s[:3] + "-" + s[3:], nil
}

// CheckAccountNumber accepts 5 to 9 digits and nothing else.
func CheckAccountNumber(number string) error {
	if number == "" {
		return errors.New("is required")
	}
	if !allDigits(number) {
		return errors.New("must contain only digits")
	}
	if len(number) < MinAccountNumberLength || len(number) > MaxAccountNumberLength {
		return fmt.Errorf("must have %d to %d digits", MinAccountNumberLength, MaxAccountNumberLength)
	}
	return nil
}

// MaskAccountNumber shows only the last 3 digits of an account number.
func MaskAccountNumber(number string) string {
	if len(number) <= 3 {
		return strings.Repeat("*", len(number))
	}
	return strings.Repeat("*", len(number)-3) + number[len(number)-3:]
}

// checkBankAccount validates a bank account in place (normalising the BSB).
func checkBankAccount(f FieldErrors, a *BankAccount) {
	bsb, err := NormalizeBSB(a.BSB)
	if a.BSB == "" {
		f.Add("bank_account.bsb", "is required")
	} else if err != nil {
		f.Add("bank_account.bsb", err.Error())
	}
	a.BSB = bsb
	if err := CheckAccountNumber(a.Number); err != nil {
		f.Add("bank_account.number", err.Error())
	}
	if strings.TrimSpace(a.HolderName) == "" {
		f.Add("bank_account.holder_name", "is required")
	}
	checkField(f, "bank_account.holder_name", a.HolderName, MaxFieldLength)
}

// DirectDebitRequest is a debit from an Australian bank account, as
// decoded by an adapter.
type DirectDebitRequest struct {
	CompanyToken     string
	TransactionToken string
	Account          BankAccount
	Customer         Customer
	InvoiceNumber    string
	Amount           int64
	Currency         string
	ApplyFee         bool
	PreAuth          bool
	Metadata         map[string]string
}

// validate checks the rules of a direct debit that need no database.
func (r *DirectDebitRequest) validate() error {
	f := FieldErrors{}
	checkDebitMoney(f, "purchase", r.Amount, r.Currency, MaxAmount)
	checkInvoice(f, "purchase.invoice_number", r.InvoiceNumber)
	checkCustomer(f, r.Customer)
	checkBankAccount(f, &r.Account)
	checkMetadata(f, r.Metadata)
	if r.PreAuth {
		f.Add("purchase.should_service_apply_pre_authorisation",
			"a direct debit cannot be pre-authorised: send false or leave it out")
	}
	return f.Err()
}

// DirectDebit lodges a debit from a bank account. The debit is returned
// PENDING once the bank has accepted it (FAILED if it could not be
// lodged); the clearing job later moves it to APPROVED or DECLINED.
func (s *Service) DirectDebit(ctx context.Context, m *Merchant, req DirectDebitRequest) (*Transaction, error) {
	if err := s.CheckCompanyToken(ctx, m, req.CompanyToken); err != nil {
		return nil, err
	}
	if err := req.validate(); err != nil {
		return nil, err
	}
	if s.bank == nil {
		return nil, Errorf(KindInvalid, CodeNotSupported, "direct debit is not enabled on this service")
	}
	t, err := s.newDirectDebit(m, &req)
	if err != nil {
		return nil, Internal("direct debit", err)
	}
	if t.Secret, err = s.vault.Seal([]byte(req.Account.Number), debitBinding(t)); err != nil {
		return nil, Internal("seal account number", err)
	}
	err = s.updateSpending(ctx, m, req.TransactionToken, t.Reference, func(tx Tx) error {
		if err := s.consumeToken(tx, m, req.TransactionToken, t.Reference); err != nil {
			return err
		}
		return tx.CreateTransaction(t)
	})
	if err != nil {
		return nil, asServiceError("direct debit", err)
	}
	return s.submitDebit(ctx, t, req.Account)
}

// newDirectDebit builds the PROCESSING transaction of a direct debit.
func (s *Service) newDirectDebit(m *Merchant, req *DirectDebitRequest) (*Transaction, error) {
	ref, err := s.reference("dd_")
	if err != nil {
		return nil, err
	}
	ddFee := m.DirectDebitFee().FeeFor(req.Amount)
	var fee int64
	if req.ApplyFee {
		fee = ddFee
	}
	now := s.now()
	return &Transaction{
		Reference: ref, MerchantID: m.ID, InvoiceNumber: req.InvoiceNumber,
		PaymentType: PaymentTypeBankAccount, Channel: ChannelAPI, Status: StatusProcessing,
		Currency: DirectDebitCurrency, Amount: req.Amount, Fee: fee, Total: req.Amount + fee,
		CreatedAt: now, UpdatedAt: now,
		Details: TransactionDetails{
			Customer: req.Customer, Metadata: req.Metadata, DirectDebitFee: ddFee,
			BankAccount: &BankAccountInfo{Masked: MaskAccountNumber(req.Account.Number),
				BSB: req.Account.BSB, HolderName: req.Account.HolderName},
		},
	}, nil
}

// debitBinding is what a direct debit's sealed account number is bound
// to (SecretBinding).
func debitBinding(t *Transaction) string {
	return SecretBinding(SecretDirectDebit, t.MerchantID, t.Reference)
}

// debitOf is the bank's view of a direct debit transaction.
func debitOf(t *Transaction, number string) BankDebit {
	a := t.Details.BankAccount
	cur, _ := LookupCurrency(DirectDebitCurrency)
	return BankDebit{
		Reference: t.Reference,
		Account:   BankAccount{BSB: a.BSB, Number: number, HolderName: a.HolderName},
		Amount:    Money{Amount: t.Total, Currency: cur},
	}
}

// submitDebit lodges a PROCESSING debit with the bank, outside any
// database transaction, and records PENDING (or FAILED) with a
// compare-and-set.
func (s *Service) submitDebit(ctx context.Context, t *Transaction, a BankAccount) (*Transaction, error) {
	ctx, call, cancel := s.callContext(ctx, t.UpdatedAt)
	defer cancel()
	sub, err := ask(call, s.bank.SubmitDebit, debitOf(t, a.Number))
	if answerLost(call, err) {
		return s.awaitInquiry(ctx, t, "debit", err), nil
	}
	now := s.now()
	t.UpdatedAt, t.ProcessedAt = now, now
	if err != nil {
		s.log.ErrorContext(ctx, "bank error on debit submission", "reference", t.Reference, "err", err)
		t.Status = StatusFailed
		t.Details.Message = "The direct debit could not be lodged with the bank; no money was taken, please try again"
	} else {
		t.Status = StatusPending
		t.Details.AcquirerTransID = sub.TraceID
		t.Details.Message = "The direct debit was submitted and is pending clearing"
	}
	return s.recordOutcome(ctx, t, "debit")
}
