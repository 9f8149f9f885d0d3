package moneytest

import (
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/processor"
)

var (
	modelOps   = flag.Int("model.ops", 250, "operations per engine in TestMoneyModel (the long run: -model.ops 20000)")
	modelSeed  = flag.Uint64("model.seed", 0, "seed of TestMoneyModel; 0 picks one and prints it")
	modelEvery = flag.Int("model.verify-every", 1, "verify the whole ledger every N operations")
)

// TestMoneyModel drives the Service with a seeded random mix of money
// operations (approved, declined and failed purchases, holds captured in
// part or whole, cancelled or expired, racing partial refunds, direct
// debits clearing and dishonouring and their refunds, settlements and
// payouts) and keeps its own model of every merchant's balance. After
// every step the journal must verify, the balances must equal the model,
// and no payment may be captured above its hold or refunded above its
// capture. A failure names the seed; rerun it with -model.seed.
func TestMoneyModel(t *testing.T) {
	seed := *modelSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun: go test ./internal/moneytest -run TestMoneyModel -model.seed %d)", seed, seed)
	engines(t, func(t *testing.T, dsn string) {
		m := &model{flow: newFlowWith(t, dsn, paylink.Config{ProcessorTimeout: crashDeadline}), rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), seed: seed}
		for i := range *modelOps {
			op := m.step()
			if i%*modelEvery == 0 || i == *modelOps-1 {
				m.check(i, op)
			}
			if t.Failed() {
				t.Fatalf("seed %d: stopped after operation %d (%s)", seed, i, op)
			}
		}
		t.Logf("%d operations: %v", *modelOps, m.counts)
	})
}

// model is the test's own account of what every balance must be.
type model struct {
	*flow
	rng  *rand.Rand
	seed uint64
	// pending, available and paidOut are the merchant's AUD balances.
	pending, available, paidOut int64
	approved                    []*paylink.Transaction // refundable card payments
	holds                       []*paylink.Transaction
	debits                      []*paylink.Transaction // PENDING direct debits
	cleared                     []*paylink.Transaction
	counts                      map[string]int
}

// step runs one random operation and updates the model.
func (m *model) step() string {
	if m.counts == nil {
		m.counts = map[string]int{}
	}
	ops := []struct {
		name   string
		weight int
		run    func()
	}{
		{"purchase", 30, m.purchase},
		{"hold", 12, m.hold},
		{"capture", 10, m.capture},
		{"cancel", 4, m.cancel},
		{"expire", 2, m.expire},
		{"refunds", 14, m.refunds},
		{"debit", 8, m.debit},
		{"clear", 5, m.clear},
		{"debit refund", 5, m.debitRefund},
		{"settle", 6, m.settle},
		{"crash", 3, m.crash},
	}
	total := 0
	for _, o := range ops {
		total += o.weight
	}
	n := m.rng.IntN(total)
	for _, o := range ops {
		if n < o.weight {
			o.run()
			m.counts[o.name]++
			return o.name
		}
		n -= o.weight
	}
	return ""
}

// net is what a newly approved payment adds to pending: its total less
// the fees deducted from it.
func (m *model) net(t *paylink.Transaction) int64 {
	cur, _ := paylink.LookupCurrency(t.Currency)
	return t.Total - paylink.DeductedFee(paylink.PricingOf(m.m.Merchant).FeeLines(t), cur)
}

var cards = []string{
	"4111111111111111", "5555555555554444", "378282246310005", "4000056655665556", "4000008260000000", // approved
	"4000000000000002", "4000000000009995", // declined
	"4000000000000119", // failed
}

func (m *model) amount() int64 { return 1 + m.rng.Int64N(50_000) }

func (m *model) purchase() {
	t := m.card(cards[m.rng.IntN(len(cards))], m.amount(), false, m.rng.IntN(2) == 0)
	if t.Status == paylink.StatusApproved {
		m.pending += m.net(t)
		m.approved = append(m.approved, t)
	}
}

func (m *model) hold() {
	t := m.card(cards[m.rng.IntN(5)], m.amount(), true, false)
	if t.Status != paylink.StatusPreAuthorised {
		m.t.Fatalf("seed %d: hold: got %s", m.seed, t.Status)
	}
	m.holds = append(m.holds, t)
}

// take removes and returns a random element of *list, or nil.
func take(rng *rand.Rand, list *[]*paylink.Transaction) *paylink.Transaction {
	if len(*list) == 0 {
		return nil
	}
	i := rng.IntN(len(*list))
	t := (*list)[i]
	*list = append((*list)[:i], (*list)[i+1:]...)
	return t
}

func (m *model) capture() {
	h := take(m.rng, &m.holds)
	if h == nil {
		return
	}
	amount := 1 + m.rng.Int64N(h.PreAuthAmount+h.PreAuthAmount/10) // sometimes above the hold
	t, err := m.e.Service.Capture(m.ctx, m.m.Merchant, h.Reference, paylink.CaptureRequest{
		CompanyToken: m.m.Creds.CompanyToken, TransactionToken: m.token(), Amount: amount, Currency: "AUD"})
	overdue := h.UpdatedAt.Before(m.e.Clock.Now().Add(-m.e.Service.Config().PreAuthExpiry))
	switch {
	case overdue: // other operations moved the clock past its expiry; the job has not run
		if err == nil || paylink.AsError(err).Code != paylink.CodeHoldReleased {
			m.t.Errorf("seed %d: capture of an overdue hold: got %v, want hold_released", m.seed, err)
		}
		m.holds = append(m.holds, h) // still held until the job releases it
	case amount > h.PreAuthAmount:
		if err == nil || paylink.AsError(err).Code != paylink.CodeAmountExceedsAuthorised {
			m.t.Errorf("seed %d: capture %d of a %d hold: got %v, want amount_exceeds_authorised", m.seed, amount, h.PreAuthAmount, err)
		}
		m.holds = append(m.holds, h) // still held
	case err != nil:
		m.t.Errorf("seed %d: capture: %v", m.seed, err)
	default:
		m.pending += m.net(t)
		m.approved = append(m.approved, t)
	}
}

func (m *model) cancel() {
	h := take(m.rng, &m.holds)
	if h == nil {
		return
	}
	if _, err := m.e.Service.Cancel(m.ctx, m.m.Merchant, h.Reference, paylink.CancelRequest{
		CompanyToken: m.m.Creds.CompanyToken, TransactionToken: m.token()}); err != nil {
		m.t.Errorf("seed %d: cancel: %v", m.seed, err)
	}
}

// expire lets every open hold run past the pre-authorisation expiry.
func (m *model) expire() {
	m.e.Clock.Advance(m.e.Service.Config().PreAuthExpiry + time.Minute)
	n, err := m.e.Service.ExpirePreAuths(m.ctx)
	if err != nil || n != len(m.holds) {
		m.t.Errorf("seed %d: expire: released %d, %v; want %d", m.seed, n, err, len(m.holds))
	}
	m.holds = nil
}

// refunds races several partial refunds of one payment; the model
// learns from each answer whether it was approved, and the total of the
// approved ones may never exceed the payment.
func (m *model) refunds() {
	if len(m.approved) == 0 {
		return
	}
	t := m.approved[m.rng.IntN(len(m.approved))]
	n := 1 + m.rng.IntN(4)
	amounts := make([]int64, n)
	toks := make([]string, n)
	for i := range n {
		amounts[i] = 1 + m.rng.Int64N(t.Total/2+1)
		toks[i] = m.token()
	}
	var mu sync.Mutex
	var refunded int64
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			r, _, err := m.e.Service.Refund(m.ctx, m.m.Merchant, t.Reference, paylink.RefundRequest{
				CompanyToken: m.m.Creds.CompanyToken, TransactionToken: toks[i], Customer: customer,
				Amount: amounts[i], Currency: "AUD"})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil && r.Status == paylink.StatusApproved:
				refunded += amounts[i]
			case err != nil && paylink.AsError(err).Code == paylink.CodeAmountExceedsRefundable:
			case err != nil && paylink.AsError(err).Kind == paylink.KindConflict:
			default:
				m.t.Errorf("seed %d: refund: %v %+v", m.seed, err, r)
			}
		})
	}
	wg.Wait()
	m.pending -= refunded
}

var accounts = []string{"0001", "0004", "0007", processor.AccountRefundRejected, processor.AccountInsufficientFunds, processor.AccountClosed}

func (m *model) debit() {
	t := m.flow.debit(accounts[m.rng.IntN(len(accounts))], m.amount())
	if t.Status != paylink.StatusPending {
		m.t.Fatalf("seed %d: debit: got %s", m.seed, t.Status)
	}
	m.debits = append(m.debits, t)
}

// clear lets every submitted debit reach its clearing time.
func (m *model) clear() {
	m.e.Clock.Advance(m.e.Service.Config().DirectDebitClearing + time.Minute)
	if _, err := m.e.Service.ClearDirectDebits(m.ctx); err != nil {
		m.t.Errorf("seed %d: clearing: %v", m.seed, err)
	}
	for _, d := range m.debits {
		t, err := m.e.Service.TransactionStatus(m.ctx, m.m.Merchant, d.Reference)
		if err != nil {
			m.t.Fatalf("seed %d: debit status: %v", m.seed, err)
		}
		switch t.Status {
		case paylink.StatusApproved:
			m.pending += m.net(t)
			m.cleared = append(m.cleared, t)
		case paylink.StatusDeclined:
		default:
			m.t.Errorf("seed %d: debit %s after clearing: got %s", m.seed, t.Reference, t.Status)
		}
	}
	m.debits = nil
}

func (m *model) debitRefund() {
	if len(m.cleared) == 0 {
		return
	}
	t := m.cleared[m.rng.IntN(len(m.cleared))]
	amount := 1 + m.rng.Int64N(t.Total)
	r, _, err := m.e.Service.RefundDirectDebit(m.ctx, m.m.Merchant, t.Reference, paylink.RefundRequest{
		CompanyToken: m.m.Creds.CompanyToken, TransactionToken: m.token(), Customer: customer, Amount: amount, Currency: "AUD"})
	switch {
	case err == nil && r.Status == paylink.StatusApproved:
		m.pending -= amount
	case err == nil && r.Status == paylink.StatusFailed: // the bank refused it
	case err != nil && paylink.AsError(err).Code == paylink.CodeAmountExceedsRefundable:
	default:
		var e *paylink.Error
		if !errors.As(err, &e) || e.Kind != paylink.KindInvalid {
			m.t.Errorf("seed %d: debit refund: %v %+v", m.seed, err, r)
		}
	}
}

// settle settles everything so far and pays out a positive balance.
func (m *model) settle() {
	m.e.Clock.Advance(time.Second)
	if _, err := m.e.Service.Settle(m.ctx, m.e.Clock.Now()); err != nil {
		m.t.Errorf("seed %d: settle: %v", m.seed, err)
	}
	m.e.Clock.Advance(time.Second)
	m.available += m.pending
	m.pending = 0
	if m.available > 0 {
		m.paidOut += m.available
		m.available = 0
	}
}

// check verifies the journal, the balances against the model, and the
// capture and refund limits of every payment touched so far.
func (m *model) check(i int, op string) {
	if d := m.verify(); len(d) != 0 {
		m.t.Errorf("seed %d, operation %d (%s): ledger discrepancies %v", m.seed, i, op, d)
	}
	b := m.balance()
	if b.Pending != m.pending || b.Available != m.available || b.PaidOut != m.paidOut {
		m.t.Errorf("seed %d, operation %d (%s): balance %+v, model pending %d available %d paid out %d",
			m.seed, i, op, b, m.pending, m.available, m.paidOut)
	}
	for _, t := range append(append([]*paylink.Transaction{}, m.approved...), m.cleared...) {
		got, err := m.e.Service.TransactionStatus(m.ctx, m.m.Merchant, t.Reference)
		if err != nil {
			m.t.Fatalf("seed %d: status: %v", m.seed, err)
		}
		if got.Refunded > got.Total || (got.PreAuth && got.Total > got.PreAuthAmount) {
			m.t.Errorf("seed %d: %s", m.seed, fmt.Sprintf("%s refunded %d of %d, held %d", got.Reference, got.Refunded, got.Total, got.PreAuthAmount))
		}
	}
}

// crashDeadline is the model's processor deadline: short, so that a
// crash costs little time, long enough for a loaded test machine.
const crashDeadline = 500 * time.Millisecond

// crash loses the acquirer's answers to a purchase and a refund (a slow
// or silent acquirer: the operations happen, the answers come after the
// deadline), as a process dying between the call and its record would.
// Recovery then asks the acquirer, sometimes first while it is still
// silent (the items go UNKNOWN), and the model learns the outcome from
// the recorded status.
func (m *model) crash() {
	sb := m.e.Sandbox
	if m.rng.IntN(2) == 0 {
		sb.SetDelay(3 * crashDeadline)
	} else {
		sb.SetSilent(true)
	}
	p := m.card(cards[0], m.amount(), false, false)
	var r *paylink.Refund
	if len(m.approved) > 0 {
		t := m.approved[m.rng.IntN(len(m.approved))]
		var err error
		r, _, err = m.e.Service.Refund(m.ctx, m.m.Merchant, t.Reference, paylink.RefundRequest{
			CompanyToken: m.m.Creds.CompanyToken, TransactionToken: m.token(), Customer: customer,
			Amount: 1 + m.rng.Int64N(t.Total/4+1), Currency: "AUD"})
		if err != nil {
			r = nil // over the refundable amount: nothing in flight
		}
	}
	m.e.Clock.Advance(paylink.ProcessingTimeout + time.Minute)
	sb.SetDelay(0)
	if m.rng.IntN(2) == 0 { // recovery while the acquirer is still silent
		sb.SetSilent(true)
		if _, err := m.e.Service.RecoverInterrupted(m.ctx); err != nil {
			m.t.Errorf("seed %d: recovery without answers: %v", m.seed, err)
		}
		m.e.Clock.Advance(paylink.ProcessingTimeout + time.Minute) // asked again on a later run
	}
	sb.SetSilent(false)
	if _, err := m.e.Service.RecoverInterrupted(m.ctx); err != nil {
		m.t.Errorf("seed %d: recovery: %v", m.seed, err)
	}
	m.learn(p, r)
}

// learn applies the recorded outcome of a recovered purchase and refund.
func (m *model) learn(p *paylink.Transaction, r *paylink.Refund) {
	t, err := m.e.Service.TransactionStatus(m.ctx, m.m.Merchant, p.Reference)
	if err != nil {
		m.t.Fatalf("seed %d: status: %v", m.seed, err)
	}
	switch t.Status {
	case paylink.StatusApproved:
		m.pending += m.net(t)
		m.approved = append(m.approved, t)
	case paylink.StatusFailed, paylink.StatusDeclined:
	default:
		m.t.Errorf("seed %d: purchase %s after recovery: %s", m.seed, t.Reference, t.Status)
	}
	if r == nil {
		return
	}
	got, err := m.e.Service.RefundStatus(m.ctx, m.m.Merchant, r.Reference)
	if err != nil {
		m.t.Fatalf("seed %d: refund status: %v", m.seed, err)
	}
	switch got.Status {
	case paylink.StatusApproved:
		m.pending -= got.Amount
	case paylink.StatusFailed:
	default:
		m.t.Errorf("seed %d: refund %s after recovery: %s", m.seed, got.Reference, got.Status)
	}
}
