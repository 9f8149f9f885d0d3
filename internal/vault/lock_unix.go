//go:build unix

package vault

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// ErrKeyFileLocked is returned by LockKeyFile when another process holds
// the lock: a second `paylink keys rotate` on the same key file.
var ErrKeyFileLocked = errors.New("key file is locked by another key rotation")

// LockKeyFile takes an exclusive lock on a key file for a rotation, so
// that two rotations never both add a key (the second would write a file
// without the first one's new key, and whatever the first had sealed
// under it could no longer be opened). The lock is an flock on
// path+".lock", released by unlock or when the process exits.
func LockKeyFile(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock key file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrKeyFileLocked
		}
		return nil, fmt.Errorf("lock key file: %w", err)
	}
	return func() { f.Close() }, nil
}
