package processor

import (
	"context"
	"sync"
	"time"

	"github.com/paylink/paylink"
)

// MemorySize is how many operations a sandbox remembers for inquiries;
// older ones are forgotten (an inquiry then answers not found). Recovery
// asks within minutes of an operation. Purchases asked in process
// (AuthorizeInProcess) are not remembered: nothing inquires about them.
const MemorySize = 100_000

// opKey identifies one operation by its idempotent id.
type opKey struct {
	kind      paylink.OpKind
	reference string
	opRef     string
}

// memory is what a sandbox shares between its calls: the operations it
// performed (so Inquire answers truthfully), how many requests of each
// kind it received, and how it answers (at once, slowly, or not at all).
// The zero value is ready to use.
type memory struct {
	mu       sync.Mutex
	delay    time.Duration
	silent   bool
	ops      map[opKey]paylink.InquiryResult
	order    []opKey // oldest first, for forgetting beyond MemorySize
	received map[paylink.OpKind]int
}

// SetDelay makes every later operation (not inquiries) answer only after
// d, as an acquirer whose responses are slow: the operation itself is
// done when the request arrives, so an inquiry in the meantime already
// finds it. A call whose context ends first returns the context's error,
// the operation done all the same (its answer lost). 0 answers at once.
func (m *memory) SetDelay(d time.Duration) {
	m.mu.Lock()
	m.delay = d
	m.mu.Unlock()
}

// SetSilent makes every later call, inquiries included, block until its
// context ends: an acquirer that receives requests (and performs
// operations) but never answers.
func (m *memory) SetSilent(on bool) {
	m.mu.Lock()
	m.silent = on
	m.mu.Unlock()
}

// Received reports how many requests of kind reached the sandbox: what a
// test counts to prove an operation was never sent twice.
func (m *memory) Received(kind paylink.OpKind) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.received[kind]
}

// perform records an operation's result as the sandbox decided it, then
// answers as the sandbox is told to (at once, after the delay, or never).
func (m *memory) perform(ctx context.Context, k opKey, res paylink.InquiryResult) error {
	res.Found = true
	m.mu.Lock()
	if m.ops == nil {
		m.ops = map[opKey]paylink.InquiryResult{}
	}
	if _, seen := m.ops[k]; !seen {
		m.order = append(m.order, k)
	}
	m.ops[k] = res
	if len(m.order) > MemorySize {
		delete(m.ops, m.order[0])
		m.order = m.order[1:]
	}
	m.mu.Unlock()
	return m.count(ctx, k.kind)
}

// count records that a request of kind arrived, then answers as the
// sandbox is told to; perform also remembers the operation.
func (m *memory) count(ctx context.Context, kind paylink.OpKind) error {
	m.mu.Lock()
	if m.received == nil {
		m.received = map[paylink.OpKind]int{}
	}
	m.received[kind]++
	delay, silent := m.delay, m.silent
	m.mu.Unlock()
	return wait(ctx, delay, silent)
}

// inquire answers from memory, unless the sandbox is silent.
func (m *memory) inquire(ctx context.Context, q paylink.Inquiry) (paylink.InquiryResult, error) {
	m.mu.Lock()
	res := m.ops[opKey{kind: q.Kind, reference: q.Reference, opRef: q.OpReference}]
	silent := m.silent
	m.mu.Unlock()
	if err := wait(ctx, 0, silent); err != nil {
		return paylink.InquiryResult{}, err
	}
	return res, nil
}

// wait delays an answer: never (silent) until ctx ends, or for d.
func wait(ctx context.Context, d time.Duration, silent bool) error {
	if silent {
		<-ctx.Done()
		return ctx.Err()
	}
	if d <= 0 {
		return nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
