package paylink

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/paylink/paylink/internal/passwords"
)

// TestPasswordChecksAreBounded: no more real argon2id checks run at once
// than the hasher has slots, however many are asked for together, and one
// that finds no slot within its wait is refused as a 503 to retry (the
// abuse sweep: 59 at once held 1.3 GB).
func TestPasswordChecksAreBounded(t *testing.T) {
	c := &concurrency{PasswordHasher: passwords.New()}
	b := boundedHasher{PasswordHasher: c, slots: make(chan struct{}, 2), wait: time.Minute}
	const password = "correct horse battery staple"
	encoded, err := b.Hash(password)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if ok, err := b.Verify(encoded, password); !ok || err != nil {
				t.Errorf("a check: got %v, %v; want the password matched", ok, err)
			}
		})
	}
	wg.Wait()
	if c.most > 2 {
		t.Errorf("got %d checks at once, want at most 2", c.most)
	}
	b.slots <- struct{}{}
	b.slots <- struct{}{}
	b.wait = 10 * time.Millisecond
	if _, err := b.Verify(encoded, password); !errors.Is(err, errPasswordsBusy) || AsError(err).Kind != KindUnavailable {
		t.Errorf("a check with every slot taken: got %v, want the 503 errPasswordsBusy", err)
	}
}

// concurrency is a PasswordHasher that counts the checks running at once.
type concurrency struct {
	PasswordHasher
	mu        sync.Mutex
	now, most int
}

func (c *concurrency) Verify(encoded, password string) (bool, error) {
	c.mu.Lock()
	c.now++
	c.most = max(c.most, c.now)
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.now--
		c.mu.Unlock()
	}()
	return c.PasswordHasher.Verify(encoded, password)
}
