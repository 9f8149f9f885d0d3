package paylink

import (
	"runtime"
	"time"
)

// passwordWait is how long a password hash or check waits for a slot
// (boundedHasher) before it is refused as busy.
const passwordWait = 5 * time.Second

// boundedHasher runs at most cap(slots) password hashes and checks at
// once, each argon2id's 19 MiB and tens of milliseconds of a core: sign-in
// attempts from many addresses, each within its own limit, would
// otherwise hold gigabytes and every core, and keep other merchants' staff
// and payments waiting (abuse sweep: 59 checks at once, 1.3 GB, another
// merchant's sign-in took 24 s). One that waits past wait is refused with
// errPasswordsBusy, a 503 its caller may retry after a moment.
type boundedHasher struct {
	PasswordHasher
	slots chan struct{}
	wait  time.Duration
}

// newBoundedHasher bounds h to two checks per core.
func newBoundedHasher(h PasswordHasher) boundedHasher {
	return boundedHasher{PasswordHasher: h, slots: make(chan struct{}, 2*runtime.GOMAXPROCS(0)), wait: passwordWait}
}

// errPasswordsBusy refuses a password hash or check that found no slot.
var errPasswordsBusy = Errorf(KindUnavailable, CodeServiceUnavailable,
	"too many passwords are being checked at once; try again in a moment")

// Hash is PasswordHasher.Hash in a slot.
func (b boundedHasher) Hash(password string) (string, error) {
	if !b.take() {
		return "", errPasswordsBusy
	}
	defer b.give()
	return b.PasswordHasher.Hash(password)
}

// Verify is PasswordHasher.Verify in a slot.
func (b boundedHasher) Verify(encoded, password string) (bool, error) {
	if !b.take() {
		return false, errPasswordsBusy
	}
	defer b.give()
	return b.PasswordHasher.Verify(encoded, password)
}

// take waits up to b.wait for a slot and reports whether it got one.
func (b boundedHasher) take() bool {
	select {
	case b.slots <- struct{}{}:
		return true
	default:
	}
	t := time.NewTimer(b.wait)
	defer t.Stop()
	select {
	case b.slots <- struct{}{}:
		return true
	case <-t.C:
		return false
	}
}

func (b boundedHasher) give() { <-b.slots }
