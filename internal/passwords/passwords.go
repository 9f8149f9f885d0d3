// Package passwords hashes dashboard users' passwords with argon2id
// (RFC 9106) in the PHC string format, behind paylink.PasswordHasher, so
// the domain stays stdlib-only.
package passwords

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"
)

// Params are argon2id's cost parameters.
type Params struct {
	Time    uint32 // passes
	Memory  uint32 // KiB
	Threads uint8
}

const (
	saltLen = 16
	keyLen  = 32
)

// Argon2id implements paylink.PasswordHasher.
type Argon2id struct {
	P Params
}

// New returns a hasher with OWASP's password storage advice for
// argon2id (19 MiB, 2 passes, 1 lane): tens of milliseconds on a small
// server. Verify reads each hash's own parameters, so raising them later
// keeps old hashes working.
func New() Argon2id { return Argon2id{P: Params{Time: 2, Memory: 19 * 1024, Threads: 1}} }

var b64 = base64.RawStdEncoding

// Hash returns $argon2id$v=19$m=...,t=...,p=...$salt$key.
func (a Argon2id) Hash(password string) (string, error) {
	salt := make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("password salt: %w", err)
	}
	key := argon2.IDKey([]byte(password), salt, a.P.Time, a.P.Memory, a.P.Threads, keyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, a.P.Memory, a.P.Time, a.P.Threads,
		b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// Verify checks password against an encoded hash. For an empty encoded
// hash (an unknown user) it does the same work and answers false, so the
// time taken does not tell whether the user exists.
func (a Argon2id) Verify(encoded, password string) (bool, error) {
	if encoded == "" {
		argon2.IDKey([]byte(password), make([]byte, saltLen), a.P.Time, a.P.Memory, a.P.Threads, keyLen)
		return false, nil
	}
	p, salt, want, err := decode(encoded)
	if err != nil {
		return false, err
	}
	got := argon2.IDKey([]byte(password), salt, p.Time, p.Memory, p.Threads, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}

var errFormat = errors.New("password hash: not an argon2id PHC string")

// decode parses a PHC string made by Hash.
func decode(encoded string) (Params, []byte, []byte, error) {
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[1] != "argon2id" || parts[2] != fmt.Sprintf("v=%d", argon2.Version) {
		return Params{}, nil, nil, errFormat
	}
	var p Params
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.Memory, &p.Time, &p.Threads); err != nil {
		return Params{}, nil, nil, errFormat
	}
	salt, err := b64.DecodeString(parts[4])
	if err != nil {
		return Params{}, nil, nil, errFormat
	}
	key, err := b64.DecodeString(parts[5])
	if err != nil || len(key) == 0 {
		return Params{}, nil, nil, errFormat
	}
	return p, salt, key, nil
}
