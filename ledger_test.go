package paylink

import (
	"math/rand/v2"
	"testing"
)

func card(brand string) *TransactionDetails {
	return &TransactionDetails{Card: &CardInfo{Brand: brand, Funding: "credit", Country: "AU"}}
}

func txn(ref, typ string, status Status, total int64, d *TransactionDetails) *Transaction {
	t := &Transaction{Reference: ref, MerchantID: "m1", Currency: "AUD", PaymentType: typ, Status: status,
		Amount: total, Total: total}
	if d != nil {
		t.Details = *d
	}
	return t
}

// lines indexes a posting's lines by account (fee lines summed).
func lines(p *Posting) map[LedgerAccount]int64 {
	out := map[LedgerAccount]int64{}
	for _, l := range p.Lines {
		out[l.Account] += l.Amount
	}
	return out
}

func TestTransactionPosting(t *testing.T) {
	billable := DefaultPricing()
	billable.Billable = []string{FeeServiceBlended}
	surcharged := txn("p1", PaymentTypeCard, StatusApproved, 1066, card(BrandVisa))
	surcharged.Amount, surcharged.Surcharge = 1050, 16
	dd := func(status Status) *Transaction {
		t := txn("d1", PaymentTypeBankAccount, status, 1000, nil)
		t.Details.DirectDebitFee = 80
		return t
	}
	tests := []struct {
		name    string
		t       *Transaction
		from    Status
		pricing Pricing
		kind    PostingKind // "" for no posting
		want    map[LedgerAccount]int64
		fee     int64
	}{
		// 1.75% of 10.66 = 0.18655, + 0.30 = 0.48655, rounded half up to 0.49.
		{"surcharged visa purchase", surcharged, StatusProcessing, DefaultPricing(), PostingCharge,
			map[LedgerAccount]int64{AccountAcquirerReceivable: 1066, AccountFeeRevenue: -49, AccountMerchantPending: -1017}, 49},
		// 2.9% of 100.00 + 0.30 = 3.20, GST 10% of it 0.32.
		{"amex with GST", txn("p2", PaymentTypeCard, StatusApproved, 10000, card(BrandAmex)), StatusProcessing, DefaultPricing(), PostingCharge,
			map[LedgerAccount]int64{AccountAcquirerReceivable: 10000, AccountFeeRevenue: -320, AccountGSTPayable: -32, AccountMerchantPending: -9648}, 352},
		{"billable fee leaves the balance whole", txn("p3", PaymentTypeCard, StatusApproved, 1000, card(BrandVisa)), StatusProcessing, billable, PostingCharge,
			map[LedgerAccount]int64{AccountAcquirerReceivable: 1000, AccountFeesReceivable: 48, AccountFeeRevenue: -48, AccountMerchantPending: -1000}, 0},
		{"wallet payment", txn("p4", PaymentTypeApplePay, StatusApproved, 1000, nil), StatusProcessing, DefaultPricing(), PostingCharge,
			map[LedgerAccount]int64{AccountAcquirerReceivable: 1000, AccountFeeRevenue: -48, AccountMerchantPending: -952}, 48},
		{"hold: no money yet", txn("h1", PaymentTypeCard, StatusPreAuthorised, 1000, card(BrandVisa)), StatusProcessing, DefaultPricing(), "", nil, 0},
		{"hold claimed for capture", txn("h1", PaymentTypeCard, StatusProcessing, 1000, card(BrandVisa)), StatusPreAuthorised, DefaultPricing(), "", nil, 0},
		{"partial capture", txn("h1", PaymentTypeCard, StatusApproved, 600, card(BrandVisa)), StatusProcessing, DefaultPricing(), PostingCharge,
			map[LedgerAccount]int64{AccountAcquirerReceivable: 600, AccountFeeRevenue: -41, AccountMerchantPending: -559}, 41},
		{"cancelled hold", txn("h1", PaymentTypeCard, StatusPreAuthorisedReversed, 1000, card(BrandVisa)), StatusProcessing, DefaultPricing(), "", nil, 0},
		{"decline", txn("p5", PaymentTypeCard, StatusDeclined, 1000, card(BrandVisa)), StatusProcessing, DefaultPricing(), "", nil, 0},
		{"challenge", txn("p6", PaymentTypeCard, StatusRequiresAuthentication, 1000, card(BrandVisa)), StatusProcessing, DefaultPricing(), "", nil, 0},
		{"debit submitted", dd(StatusPending), StatusProcessing, DefaultPricing(), PostingDirectDebitSubmit,
			map[LedgerAccount]int64{AccountBankClearing: 1000, AccountDirectDebitUncleared: -1000}, 0},
		{"debit cleared", dd(StatusApproved), StatusPending, DefaultPricing(), PostingDirectDebitClear,
			map[LedgerAccount]int64{AccountDirectDebitUncleared: 1000, AccountFeeRevenue: -80, AccountMerchantPending: -920}, 80},
		{"debit dishonoured", dd(StatusDeclined), StatusPending, DefaultPricing(), PostingDirectDebitDishonor,
			map[LedgerAccount]int64{AccountDirectDebitUncleared: 1000, AccountBankClearing: -1000}, 0},
		{"debit refused at submission", dd(StatusDeclined), StatusProcessing, DefaultPricing(), "", nil, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := TransactionPosting(tc.t, tc.from, tc.pricing)
			if err != nil {
				t.Fatal(err)
			}
			if tc.kind == "" {
				if p != nil {
					t.Fatalf("got posting %+v, want none", p)
				}
				return
			}
			if p == nil || p.Kind != tc.kind {
				t.Fatalf("got %+v, want a %s posting", p, tc.kind)
			}
			if !p.Balanced() {
				t.Errorf("posting %+v does not balance", p.Lines)
			}
			if got := lines(p); !equalLines(got, tc.want) {
				t.Errorf("lines: got %v, want %v", got, tc.want)
			}
			if p.Fee != tc.fee || p.Net != p.Amount-p.Fee {
				t.Errorf("amount/fee/net: got %d/%d/%d, want fee %d", p.Amount, p.Fee, p.Net, tc.fee)
			}
			if p.Key != string(tc.kind)+":"+tc.t.Reference {
				t.Errorf("key: got %q", p.Key)
			}
		})
	}
}

func equalLines(a, b map[LedgerAccount]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestRefundPosting(t *testing.T) {
	purchase := txn("p1", PaymentTypeCard, StatusApproved, 1066, card(BrandVisa))
	debit := txn("d1", PaymentTypeBankAccount, StatusApproved, 1000, nil)
	tests := []struct {
		name    string
		t       *Transaction
		status  Status
		kind    PostingKind
		account LedgerAccount
	}{
		{"card refund", purchase, StatusApproved, PostingRefund, AccountAcquirerReceivable},
		{"direct debit refund", debit, StatusApproved, PostingDirectDebitRefund, AccountBankClearing},
		{"failed refund", purchase, StatusFailed, "", ""},
		{"refund in flight", purchase, StatusProcessing, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &Refund{Reference: "rf1", MerchantID: "m1", TransactionReference: tc.t.Reference, Status: tc.status, Currency: "AUD", Amount: 300}
			p := RefundPosting(tc.t, r)
			if tc.kind == "" {
				if p != nil {
					t.Fatalf("got %+v, want none", p)
				}
				return
			}
			want := map[LedgerAccount]int64{AccountMerchantPending: 300, tc.account: -300}
			if got := lines(p); p.Kind != tc.kind || !equalLines(got, want) || !p.Balanced() {
				t.Fatalf("got %s %v, want %s %v", p.Kind, got, tc.kind, want)
			}
			if p.Key != string(tc.kind)+":rf1" || p.Reference != tc.t.Reference || p.RefundReference != "rf1" {
				t.Errorf("key/references: got %q %q %q", p.Key, p.Reference, p.RefundReference)
			}
			if p.Amount != -300 || p.Fee != 0 || p.Net != -300 || !p.MovesBalance() {
				t.Errorf("balance transaction: got %d/%d/%d", p.Amount, p.Fee, p.Net)
			}
		})
	}
}

func TestSettlementAndPayout(t *testing.T) {
	charge, _ := TransactionPosting(txn("p1", PaymentTypeCard, StatusApproved, 1066, card(BrandVisa)), StatusProcessing, DefaultPricing())
	refund := RefundPosting(txn("p1", PaymentTypeCard, StatusApproved, 1066, nil), &Refund{Reference: "rf1", Status: StatusApproved, Amount: 500})
	refund.MerchantID = "m1"
	debit := txn("d1", PaymentTypeBankAccount, StatusApproved, 1000, nil)
	debit.Details.DirectDebitFee = 80
	cleared, _ := TransactionPosting(debit, StatusPending, DefaultPricing())
	s, err := SettlementPosting("b1", "m1", "AUD", []*Posting{charge, refund, cleared})
	if err != nil {
		t.Fatal(err)
	}
	want := map[LedgerAccount]int64{AccountSettlementCash: 1566, AccountAcquirerReceivable: -566, AccountBankClearing: -1000,
		AccountMerchantPending: 1017 - 500 + 920, AccountMerchantAvailable: -(1017 - 500 + 920)}
	if got := lines(s); !equalLines(got, want) || !s.Balanced() || s.MovesBalance() {
		t.Errorf("settlement: got %v, want %v", got, want)
	}
	if _, err := SettlementPosting("b2", "m2", "AUD", []*Posting{charge}); err == nil {
		t.Error("settling another merchant's posting: got no error")
	}
	sub, _ := TransactionPosting(txn("d2", PaymentTypeBankAccount, StatusPending, 100, nil), StatusProcessing, DefaultPricing())
	if _, err := SettlementPosting("b3", "m1", "AUD", []*Posting{sub}); err == nil {
		t.Error("settling an uncleared debit: got no error")
	}
	p := PayoutPosting("po1", "m1", "AUD", 1437)
	if got := lines(p); !p.Balanced() || got[AccountMerchantAvailable] != 1437 || got[AccountMerchantPaidOut] != -1437 || p.Net != -1437 {
		t.Errorf("payout: got %v net %d", got, p.Net)
	}
}

// A posting without lines does not balance, so Service.post refuses it:
// the one place the rule lives (stores persist what they are given).
func TestPostingWithoutLinesDoesNotBalance(t *testing.T) {
	for _, lines := range [][]LedgerLine{nil, {}} {
		if p := (&Posting{Key: "charge:pr_x", Lines: lines}); p.Balanced() {
			t.Errorf("Balanced() of a posting with lines %#v: got true, want false", lines)
		}
	}
}

func TestFeeMinor(t *testing.T) {
	tests := []struct {
		micros int64
		cur    string
		want   int64
	}{
		{486550, "AUD", 49}, {484999, "AUD", 48}, {485000, "AUD", 49}, {0, "AUD", 0},
		{499999, "JPY", 0}, {500000, "JPY", 1}, {1234500, "KWD", 1235}, {1234499, "KWD", 1234},
	}
	for _, tc := range tests {
		cur, _ := LookupCurrency(tc.cur)
		if got := FeeMinor(tc.micros, cur); got != tc.want {
			t.Errorf("FeeMinor(%d %s): got %d, want %d", tc.micros, tc.cur, got, tc.want)
		}
	}
}

// Every posting balances, whatever the amounts, brands and pricing.
func TestPostingsAlwaysBalance(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	brands := []string{BrandVisa, BrandMastercard, BrandAmex}
	for i := range 5000 {
		p := DefaultPricing()
		p.ServiceProtectPercent = Percent(rng.IntN(5000))
		p.ServiceTransFee = rng.Int64N(500_000)
		if rng.IntN(2) == 0 {
			p.Billable = []string{FeeAmexTax, FeeServiceTrans}
		}
		tr := txn("p", PaymentTypeCard, StatusApproved, 1+rng.Int64N(MaxAmount), card(brands[rng.IntN(len(brands))]))
		for _, cur := range []string{"AUD", "JPY", "KWD"} {
			tr.Currency = cur
			post, err := TransactionPosting(tr, StatusProcessing, p)
			c, _ := LookupCurrency(cur)
			if err != nil || !post.Balanced() || post.Net != post.Amount-post.Fee || post.Fee < 0 || post.Fee != DeductedFee(p.FeeLines(tr), c) {
				t.Fatalf("case %d %s: %v %+v", i, cur, err, post)
			}
		}
	}
}
