package paylink

import (
	"fmt"
	"strings"
	"time"
)

// The ledger is paylink's double-entry journal: every money movement is a
// Posting of balanced lines, written in the same database transaction as
// the state change that caused it, and never updated or deleted.
// docs/ledger.md has the chart of accounts and a worked example.

// LedgerAccount names an account of the chart. Every line also carries
// the merchant and currency it belongs to, so each account exists once
// per merchant and currency.
type LedgerAccount string

// The chart of accounts. Assets are debit-normal, liabilities and
// revenue credit-normal.
const (
	// AccountAcquirerReceivable (asset) is what the card acquirer owes paylink
	// for captured card, wallet and Zip payments not yet settled.
	AccountAcquirerReceivable LedgerAccount = "acquirer_receivable"
	// AccountBankClearing (asset) is what the direct-entry bank owes paylink for
	// submitted direct debits not yet settled.
	AccountBankClearing LedgerAccount = "bank_clearing"
	// AccountDirectDebitUncleared (liability) is what a merchant would be owed
	// for debits submitted but not yet cleared: not the merchant's
	// balance until the bank clears them.
	AccountDirectDebitUncleared LedgerAccount = "direct_debit_uncleared"
	// AccountSettlementCash (asset) is money the acquirer or bank has paid into
	// paylink's account.
	AccountSettlementCash LedgerAccount = "settlement_cash"
	// AccountMerchantPending (liability) is owed to the merchant for captured
	// funds that the acquirer has not settled yet.
	AccountMerchantPending LedgerAccount = "merchant_pending"
	// AccountMerchantAvailable (liability) is owed to the merchant for settled
	// funds not yet paid out.
	AccountMerchantAvailable LedgerAccount = "merchant_available"
	// AccountMerchantPaidOut (contra-asset of AccountSettlementCash) is what left
	// paylink's account to the merchant's bank account.
	AccountMerchantPaidOut LedgerAccount = "merchant_paid_out"
	// AccountFeesReceivable (asset) is billable fees invoiced to the merchant
	// rather than deducted from its payments.
	AccountFeesReceivable LedgerAccount = "fees_receivable"
	// AccountFeeRevenue (revenue) is paylink's fees, before GST.
	AccountFeeRevenue LedgerAccount = "fee_revenue"
	// AccountGSTPayable (liability) is GST charged on fees, owed to the tax
	// office.
	AccountGSTPayable LedgerAccount = "gst_payable"
)

// PostingKind says what caused a posting; it is also the type of the
// balance transaction a posting that moves a merchant's balance shows.
type PostingKind string

// Posting kinds.
const (
	PostingCharge              PostingKind = "charge"                 // card, wallet or Zip payment captured
	PostingRefund              PostingKind = "refund"                 // card refund approved
	PostingDirectDebitSubmit   PostingKind = "direct_debit_submitted" // debit sent to the bank
	PostingDirectDebitClear    PostingKind = "direct_debit"           // debit cleared: the merchant's money
	PostingDirectDebitDishonor PostingKind = "direct_debit_dishonour" // debit dishonoured: reversed
	PostingDirectDebitRefund   PostingKind = "direct_debit_refund"    // cleared debit refunded
	PostingSettlement          PostingKind = "settlement"             // acquirer settled a batch
	PostingPayout              PostingKind = "payout"                 // available balance paid out
)

// LedgerLine is one line of a posting: a positive Amount debits the
// account, a negative one credits it, in minor units of the posting's
// currency.
type LedgerLine struct {
	Account LedgerAccount
	Amount  int64
	// FeeCode is the fee line (spec 2.3) a fee or GST line comes from,
	// "" for other lines; reports break fees down by it.
	FeeCode string
}

// Posting is one balanced journal entry. Key is unique across the
// journal: it names the event that caused the posting, so a retry, a
// recovery replay or a racing instance can never post it twice.
type Posting struct {
	// ID is the posting's id as a balance transaction ("bt_" and
	// time-ordered, so ids sort by creation).
	ID              string
	Key             string
	Kind            PostingKind
	MerchantID      string
	Currency        string
	Reference       string // the purchase reference, the batch id or the payout id
	RefundReference string // a refund's own reference, "" otherwise
	Lines           []LedgerLine
	CreatedAt       time.Time
	// Amount, Fee and Net are the posting as a balance transaction:
	// the gross movement of the merchant's balance (signed), the fees
	// deducted from it (>= 0), and Amount - Fee. All zero for postings
	// that do not move the balance (a hold, a debit not yet cleared, a
	// settlement, which only moves money from pending to available).
	Amount, Fee, Net int64
	// SettlementBatch is the batch that settled a balance transaction,
	// "" while it is pending; set when a posting is read back.
	SettlementBatch string
}

// AccountBalance is the sum of an account's lines for one merchant and
// currency: debits less credits, so credit-normal accounts (what the
// merchant is owed) are negative.
type AccountBalance struct {
	Account  LedgerAccount
	Currency string
	Amount   int64
}

// Balanced reports whether the posting has lines and its debits equal
// its credits. Service.post refuses any other posting, so this is where
// the rule that a posting has lines lives; stores do not check it.
func (p *Posting) Balanced() bool {
	var sum int64
	for _, l := range p.Lines {
		sum += l.Amount
	}
	return sum == 0 && len(p.Lines) > 0
}

// MovesBalance reports whether the posting changes the merchant's
// pending or available balance, which makes it a balance transaction.
func (p *Posting) MovesBalance() bool {
	for _, l := range p.Lines {
		if l.Account == AccountMerchantPending || l.Account == AccountMerchantAvailable {
			return p.Kind != PostingSettlement
		}
	}
	return false
}

// FeeMinor rounds a fee line to minor units of cur: half up
// (mulDivRoundHalfUp), one line at a time. This is the ledger's one
// rounding of fees; the net of a posting is
// the gross less the rounded fees, so a posting always balances.
func FeeMinor(micros int64, cur Currency) int64 {
	return mulDivRoundHalfUp(micros, 1, microsPerMinor(cur))
}

// TransactionPosting is the posting for a transaction's move from one
// status to another, or nil when the move takes or gives no money (a
// hold, a cancelled or expired hold, a decline, a 3-D Secure step, a
// claim). p is the merchant's pricing, for the fee lines.
func TransactionPosting(t *Transaction, from Status, p Pricing) (*Posting, error) {
	cur, ok := LookupCurrency(t.Currency)
	if !ok {
		return nil, fmt.Errorf("posting %s: unknown currency %q", t.Reference, t.Currency)
	}
	if t.PaymentType == PaymentTypeBankAccount {
		return debitPosting(t, from, p, cur), nil
	}
	if t.Status != StatusApproved || from == StatusApproved {
		return nil, nil
	}
	return chargePosting(t, p, cur, PostingCharge, AccountAcquirerReceivable), nil
}

// debitPosting posts a direct debit: submitted (into the uncleared
// account), cleared (the merchant's money, less its fee) or dishonoured
// after submission (the submission reversed).
func debitPosting(t *Transaction, from Status, p Pricing, cur Currency) *Posting {
	switch {
	case t.Status == StatusPending && from != StatusPending:
		return newPosting(t, PostingDirectDebitSubmit, "",
			LedgerLine{Account: AccountBankClearing, Amount: t.Total},
			LedgerLine{Account: AccountDirectDebitUncleared, Amount: -t.Total})
	case t.Status == StatusApproved && from == StatusPending:
		return chargePosting(t, p, cur, PostingDirectDebitClear, AccountDirectDebitUncleared)
	case t.Status == StatusDeclined && from == StatusPending:
		return newPosting(t, PostingDirectDebitDishonor, "",
			LedgerLine{Account: AccountDirectDebitUncleared, Amount: t.Total},
			LedgerLine{Account: AccountBankClearing, Amount: -t.Total})
	}
	return nil
}

// chargePosting moves a captured total from the debited account into the
// merchant's pending balance, less the deducted fees, which go to fee
// revenue and GST; billable fees are charged to the merchant's fees
// receivable instead and leave its balance alone.
func chargePosting(t *Transaction, p Pricing, cur Currency, kind PostingKind, from LedgerAccount) *Posting {
	fees := p.FeeLines(t)
	fee := DeductedFee(fees, cur)
	lines := []LedgerLine{{Account: from, Amount: t.Total}}
	for _, f := range fees {
		minor := FeeMinor(f.Micros, cur)
		if minor == 0 {
			continue
		}
		if f.Settlement == SettlementBillable {
			lines = append(lines, LedgerLine{Account: AccountFeesReceivable, Amount: minor, FeeCode: f.Code})
		}
		lines = append(lines, LedgerLine{Account: feeAccount(f.Code), Amount: -minor, FeeCode: f.Code})
	}
	lines = append(lines, LedgerLine{Account: AccountMerchantPending, Amount: -(t.Total - fee)})
	post := newPosting(t, kind, "", lines...)
	post.Amount, post.Fee, post.Net = t.Total, fee, t.Total-fee
	return post
}

// DeductedFee is what the ledger deducts from a payment's total for its
// fee lines: each DEDUCTED line rounded by FeeMinor, summed. The net the
// merchant is owed is the total less this.
func DeductedFee(lines []FeeLine, cur Currency) int64 {
	return feeOf(lines, cur, SettlementDeducted)
}

// BilledFee is the fee lines invoiced separately (BILLABLE), each rounded
// by FeeMinor, summed: what the merchant pays besides the deducted fee.
func BilledFee(lines []FeeLine, cur Currency) int64 {
	return feeOf(lines, cur, SettlementBillable)
}

// feeOf sums the lines of one settlement type, each rounded by FeeMinor.
func feeOf(lines []FeeLine, cur Currency, settlement string) int64 {
	var fee int64
	for _, l := range lines {
		if l.Settlement == settlement {
			fee += FeeMinor(l.Micros, cur)
		}
	}
	return fee
}

// feeAccount is where a fee line is credited: tax lines (AMEX_FEE_TAX)
// are GST, the rest revenue.
func feeAccount(code string) LedgerAccount {
	if strings.HasSuffix(code, "_TAX") {
		return AccountGSTPayable
	}
	return AccountFeeRevenue
}

// RefundPosting is the posting for an approved refund r of t: the
// refunded amount leaves the merchant's pending balance and is owed back
// by the acquirer (or the bank, for a direct debit). Fees are not
// returned, as at most gateways. Nil for a refund that is not approved.
func RefundPosting(t *Transaction, r *Refund) *Posting {
	if r.Status != StatusApproved {
		return nil
	}
	kind, account := PostingRefund, AccountAcquirerReceivable
	if t.PaymentType == PaymentTypeBankAccount {
		kind, account = PostingDirectDebitRefund, AccountBankClearing
	}
	post := newPosting(t, kind, r.Reference,
		LedgerLine{Account: AccountMerchantPending, Amount: r.Amount},
		LedgerLine{Account: account, Amount: -r.Amount})
	post.Key = string(kind) + ":" + r.Reference
	post.Amount, post.Net = -r.Amount, -r.Amount
	return post
}

// newPosting starts a posting of t's merchant and currency, keyed by kind
// and t's reference.
func newPosting(t *Transaction, kind PostingKind, refundRef string, lines ...LedgerLine) *Posting {
	return &Posting{Key: string(kind) + ":" + t.Reference, Kind: kind, MerchantID: t.MerchantID, Currency: t.Currency,
		Reference: t.Reference, RefundReference: refundRef, Lines: lines}
}

// SettlementPosting is the posting of one settlement batch: the acquirer
// and the bank pay paylink for the covered postings (cash in, receivables
// cleared), and their net moves from the merchant's pending balance to
// its available balance. covered are the balance transactions the batch
// settles, all of merchantID and currency.
func SettlementPosting(batchID, merchantID, currency string, covered []*Posting) (*Posting, error) {
	var acquirer, bank, net int64
	for _, c := range covered {
		if c.MerchantID != merchantID || c.Currency != currency {
			return nil, fmt.Errorf("settlement %s: posting %s is not of %s %s", batchID, c.Key, merchantID, currency)
		}
		switch c.Kind {
		case PostingCharge, PostingRefund:
			acquirer += c.Amount
		case PostingDirectDebitClear, PostingDirectDebitRefund:
			bank += c.Amount
		default:
			return nil, fmt.Errorf("settlement %s: posting %s (%s) is not settled by an acquirer", batchID, c.Key, c.Kind)
		}
		net += c.Net
	}
	p := &Posting{Key: string(PostingSettlement) + ":" + batchID, Kind: PostingSettlement, MerchantID: merchantID,
		Currency: currency, Reference: batchID}
	p.Lines = appendNonZero(p.Lines,
		LedgerLine{Account: AccountSettlementCash, Amount: acquirer + bank},
		LedgerLine{Account: AccountAcquirerReceivable, Amount: -acquirer},
		LedgerLine{Account: AccountBankClearing, Amount: -bank})
	// The pending-to-available pair is there even at zero: a day whose
	// payments net to nothing (a sale refunded in full, with billable or
	// rounded-away fees) still settles, and its batch has a posting.
	p.Lines = append(p.Lines,
		LedgerLine{Account: AccountMerchantPending, Amount: net},
		LedgerLine{Account: AccountMerchantAvailable, Amount: -net})
	return p, nil
}

// PayoutPosting is the posting of a payout of amount from the merchant's
// available balance to its bank account.
func PayoutPosting(payoutID, merchantID, currency string, amount int64) *Posting {
	return &Posting{Key: string(PostingPayout) + ":" + payoutID, Kind: PostingPayout, MerchantID: merchantID,
		Currency: currency, Reference: payoutID, Amount: -amount, Net: -amount,
		Lines: []LedgerLine{{Account: AccountMerchantAvailable, Amount: amount}, {Account: AccountMerchantPaidOut, Amount: -amount}}}
}

// appendNonZero appends the lines whose amount is not zero.
func appendNonZero(lines []LedgerLine, add ...LedgerLine) []LedgerLine {
	for _, l := range add {
		if l.Amount != 0 {
			lines = append(lines, l)
		}
	}
	return lines
}
