// Package vault encrypts card numbers and other secrets at rest with
// AES-256-GCM and fingerprints card numbers with HMAC-SHA256.
//
// Both keys are derived with HKDF from one 32-byte master key. Each
// ciphertext names the key id it was sealed under, so a new master key
// can be introduced while older ciphertexts still open (Open accepts any
// key given to New; Seal uses the first).
package vault

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/paylink/paylink"
)

// KeySize is the size of a master key in bytes.
const KeySize = 32

// Vault seals and opens secrets. It is safe for concurrent use.
type Vault struct {
	activeID string
	aeads    map[string]cipher.AEAD
	fpKey    []byte
}

// New builds a vault from master keys; the first seals, all open. The
// fingerprint key comes from the first key too.
func New(masters ...[]byte) (*Vault, error) {
	if len(masters) == 0 {
		return nil, errors.New("vault: no master key")
	}
	v := &Vault{aeads: map[string]cipher.AEAD{}}
	for i, m := range masters {
		if len(m) != KeySize {
			return nil, fmt.Errorf("vault: master key %d is %d bytes, want %d", i, len(m), KeySize)
		}
		id, aead, err := deriveAEAD(m)
		if err != nil {
			return nil, err
		}
		v.aeads[id] = aead
		if i == 0 {
			v.activeID = id
			fp, err := hkdf.Key(sha256.New, m, nil, "paylink card fingerprint v1", 32)
			if err != nil {
				return nil, fmt.Errorf("vault: derive fingerprint key: %w", err)
			}
			v.fpKey = fp
		}
	}
	return v, nil
}

// deriveAEAD derives the encryption key and its public id from a master key.
func deriveAEAD(master []byte) (string, cipher.AEAD, error) {
	key, err := hkdf.Key(sha256.New, master, nil, "paylink secret encryption v1", 32)
	if err != nil {
		return "", nil, fmt.Errorf("vault: derive key: %w", err)
	}
	idSum, err := hkdf.Key(sha256.New, master, nil, "paylink key id v1", 6)
	if err != nil {
		return "", nil, fmt.Errorf("vault: derive key id: %w", err)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return "", nil, fmt.Errorf("vault: cipher: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return "", nil, fmt.Errorf("vault: gcm: %w", err)
	}
	return "k" + hex.EncodeToString(idSum), aead, nil
}

// Seal encrypts plaintext under the active key; the key id is bound as
// additional data.
func (v *Vault) Seal(plaintext []byte) (paylink.SealedSecret, error) {
	aead := v.aeads[v.activeID]
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plaintext)+aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return paylink.SealedSecret{}, fmt.Errorf("vault: nonce: %w", err)
	}
	ct := aead.Seal(nonce, nonce, plaintext, []byte(v.activeID))
	return paylink.SealedSecret{KeyID: v.activeID, Ciphertext: ct}, nil
}

// Open decrypts a sealed secret with the key it names.
func (v *Vault) Open(s paylink.SealedSecret) ([]byte, error) {
	aead, ok := v.aeads[s.KeyID]
	if !ok {
		return nil, fmt.Errorf("vault: unknown key id %q", s.KeyID)
	}
	n := aead.NonceSize()
	if len(s.Ciphertext) < n {
		return nil, errors.New("vault: ciphertext too short")
	}
	pt, err := aead.Open(nil, s.Ciphertext[:n], s.Ciphertext[n:], []byte(s.KeyID))
	if err != nil {
		return nil, fmt.Errorf("vault: open: %w", err)
	}
	return pt, nil
}

// Fingerprint is HMAC-SHA256 of the PAN under the fingerprint key, hex.
func (v *Vault) Fingerprint(pan string) string {
	mac := hmac.New(sha256.New, v.fpKey)
	mac.Write([]byte(pan))
	return hex.EncodeToString(mac.Sum(nil))
}

// ParseKey parses a master key given as 64 hex characters.
func ParseKey(s string) ([]byte, error) {
	b, err := hex.DecodeString(strings.TrimSpace(s))
	if err != nil || len(b) != KeySize {
		return nil, errors.New("master key must be 64 hex characters (32 bytes)")
	}
	return b, nil
}

// LoadOrCreateKeyFile reads a master key file, creating it with a fresh
// random key and mode 0600 when it does not exist. It is meant only for
// the embedded single-instance SQLite default.
func LoadOrCreateKeyFile(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		return ParseKey(string(b))
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("read key file: %w", err)
	}
	key := make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("generate key: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("key file dir: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) { // another process won the race: use its key
		return LoadOrCreateKeyFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("create key file: %w", err)
	}
	if _, err := f.WriteString(hex.EncodeToString(key) + "\n"); err != nil {
		f.Close()
		return nil, fmt.Errorf("write key file: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("write key file: %w", err)
	}
	return key, nil
}
