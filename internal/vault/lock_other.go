//go:build !unix

package vault

import "errors"

// ErrKeyFileLocked is returned by LockKeyFile when another process holds
// the lock: a second `paylink keys rotate` on the same key file.
var ErrKeyFileLocked = errors.New("key file is locked by another key rotation")

// LockKeyFile is not available here: without a lock, two rotations of
// one key file could lose a key, so rotation of a key file refuses to run.
func LockKeyFile(path string) (unlock func(), err error) {
	return nil, errors.New("rotating a key file needs a Unix system; set PAYLINK_MASTER_KEY instead")
}
