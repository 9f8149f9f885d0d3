// Package vault encrypts card numbers and other secrets at rest with
// AES-256-GCM, fingerprints card numbers with HMAC-SHA256, and MACs what
// paylink must recognise as its own without storing it.
//
// Four keys are derived with HKDF-SHA256 from one 32-byte master key,
// each under its own label: the encryption key, the card fingerprint
// key, the MAC key (stateless transaction tokens, and the sign-in
// failure records' keys, each use with its own input prefix: token.go,
// user_attempt.go) and the 6-byte key id. Each
// ciphertext names the key id it was sealed under, so a new master key
// can be introduced while older ciphertexts still open (Open accepts any
// key the vault holds; Seal uses the first, the active key). Key rotation
// (`paylink keys rotate`) re-seals everything under the active key, after
// which the previous keys can be dropped.
//
// Each ciphertext is bound to what it is for: the key id and the caller's
// binding (paylink.SecretBinding: the kind of secret, its merchant and
// its row) are its additional data, so a ciphertext copied into another
// column or row does not open there. Ciphertexts sealed before bindings
// (the key id alone as additional data) still open, whatever the binding,
// until a key rotation re-seals them and drops their key.
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
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/paylink/paylink"
)

// KeySize is the size of a master key in bytes.
const KeySize = 32

// Vault seals and opens secrets. It is safe for concurrent use.
//
// A vault opened on a key file (OpenKeyFile) follows that file: when
// `paylink keys rotate` writes a new active key into it, a running server
// seals with the new key within KeyFileRecheck, and opens secrets already
// re-sealed under it (and checks MACs made under it) at once, without a
// restart.
type Vault struct {
	ring atomic.Pointer[keyRing]
	file *keyFileSource // nil when the keys are fixed
}

// keyRing is one set of keys: the active one seals, all open.
type keyRing struct {
	activeID string
	aeads    map[string]cipher.AEAD
	fpKey    []byte // fingerprint key of the active master key
	// macKeys are the MAC keys (Vault.MAC: transaction tokens, sign-in
	// failure keys): one per master key, the active key's first.
	macKeys [][]byte
}

// New builds a vault from fixed master keys; the first seals and
// fingerprints, all open.
func New(masters ...[]byte) (*Vault, error) {
	r, err := newRing(masters)
	if err != nil {
		return nil, err
	}
	v := &Vault{}
	v.ring.Store(r)
	return v, nil
}

// newRing derives the keys of a ring from its master keys, active first.
func newRing(masters [][]byte) (*keyRing, error) {
	if len(masters) == 0 {
		return nil, errors.New("vault: no master key")
	}
	r := &keyRing{aeads: map[string]cipher.AEAD{}}
	for i, m := range masters {
		if len(m) != KeySize {
			return nil, fmt.Errorf("vault: master key %d is %d bytes, want %d", i, len(m), KeySize)
		}
		id, aead, err := deriveAEAD(m)
		if err != nil {
			return nil, err
		}
		r.aeads[id] = aead
		mk, err := hkdf.Key(sha256.New, m, nil, "paylink transaction token v1", 32)
		if err != nil {
			return nil, fmt.Errorf("vault: derive token key: %w", err)
		}
		r.macKeys = append(r.macKeys, mk)
		if i == 0 {
			r.activeID = id
			fp, err := hkdf.Key(sha256.New, m, nil, "paylink card fingerprint v1", 32)
			if err != nil {
				return nil, fmt.Errorf("vault: derive fingerprint key: %w", err)
			}
			r.fpKey = fp
		}
	}
	return r, nil
}

// KeyIDOf returns the public id of a master key, as ciphertexts sealed
// under it name it (operators see it in `paylink keys rotate`).
func KeyIDOf(master []byte) (string, error) {
	if len(master) != KeySize {
		return "", fmt.Errorf("vault: master key is %d bytes, want %d", len(master), KeySize)
	}
	id, _, err := deriveAEAD(master)
	return id, err
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

// current returns the ring in force, first picking up a changed key file
// when the file is due a look.
func (v *Vault) current() *keyRing {
	if v.file != nil {
		v.file.refresh(v, lookIfDue)
	}
	return v.ring.Load()
}

// KeyID is the id of the active key, the one Seal uses now. Whatever is
// sealed under another id is what key rotation re-seals.
func (v *Vault) KeyID() string { return v.current().activeID }

// Seal encrypts plaintext under the active key; the key id and binding
// are bound as additional data.
func (v *Vault) Seal(plaintext []byte, binding string) (paylink.SealedSecret, error) {
	r := v.current()
	aead := r.aeads[r.activeID]
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plaintext)+aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return paylink.SealedSecret{}, fmt.Errorf("vault: nonce: %w", err)
	}
	ct := aead.Seal(nonce, nonce, plaintext, additionalData(r.activeID, binding))
	return paylink.SealedSecret{KeyID: r.activeID, Ciphertext: ct}, nil
}

// additionalData is what a ciphertext is bound to besides its key.
func additionalData(keyID, binding string) []byte {
	return []byte(keyID + "\x00" + binding)
}

// Open decrypts a sealed secret with the key it names, sealed with
// binding, or before bindings (the key id alone as additional data). A
// key id the vault does not know makes a file-backed vault read its key
// file again first: another process may have rotated to a key this one
// has not seen yet.
func (v *Vault) Open(s paylink.SealedSecret, binding string) ([]byte, error) {
	aead, ok := v.ring.Load().aeads[s.KeyID]
	if !ok && v.file != nil {
		v.file.refresh(v, reload)
		aead, ok = v.ring.Load().aeads[s.KeyID]
	}
	if !ok {
		return nil, fmt.Errorf("vault: unknown key id %q", s.KeyID)
	}
	n := aead.NonceSize()
	if len(s.Ciphertext) < n {
		return nil, errors.New("vault: ciphertext too short")
	}
	pt, err := aead.Open(nil, s.Ciphertext[:n], s.Ciphertext[n:], additionalData(s.KeyID, binding))
	if err != nil {
		pt, err = aead.Open(nil, s.Ciphertext[:n], s.Ciphertext[n:], []byte(s.KeyID))
	}
	if err != nil {
		return nil, fmt.Errorf("vault: open: %w", err)
	}
	return pt, nil
}

// Fingerprint identifies a PAN within one merchant: HMAC-SHA256 of the
// PAN under a key derived for that merchant from the active master key's
// fingerprint key, hex. The same card gets the same fingerprint at one
// merchant and unrelated ones at two merchants, so merchants cannot link
// a customer's card between them. keyID names the master key it was made
// under; key rotation recomputes fingerprints made under another.
func (v *Vault) Fingerprint(merchantID, pan string) (fingerprint, keyID string) {
	r := v.current()
	perMerchant := hmac.New(sha256.New, r.fpKey)
	perMerchant.Write([]byte("merchant\x00" + merchantID))
	mac := hmac.New(sha256.New, perMerchant.Sum(nil))
	mac.Write([]byte(pan))
	return hex.EncodeToString(mac.Sum(nil)), r.activeID
}

// MAC authenticates msg with HMAC-SHA256 under the active master key's
// token key (derived apart from the encryption and fingerprint keys).
func (v *Vault) MAC(msg []byte) []byte {
	return macWith(v.current().macKeys[0], msg)
}

// MACs is msg's MAC under every master key the vault holds, the active
// key's first: what a value recorded as a MAC may have been recorded
// under by an instance on another active key during a rotation.
func (v *Vault) MACs(msg []byte) [][]byte {
	r := v.current()
	out := make([][]byte, len(r.macKeys))
	for i, k := range r.macKeys {
		out[i] = macWith(k, msg)
	}
	return out
}

// CheckMAC reports whether mac authenticates msg under any master key the
// vault holds, so that a token issued just before a key rotation stays
// valid after it. The comparison takes constant time. A MAC no key
// matches makes a file-backed vault look at its key file at once: another
// process may have issued the token under a key this one has not seen yet.
func (v *Vault) CheckMAC(msg, mac []byte) bool {
	r := v.current()
	if r.checkMAC(msg, mac) {
		return true
	}
	if v.file == nil {
		return false
	}
	v.file.refresh(v, lookNow)
	if now := v.ring.Load(); now != r {
		return now.checkMAC(msg, mac)
	}
	return false
}

// checkMAC reports whether mac authenticates msg under one of r's keys.
func (r *keyRing) checkMAC(msg, mac []byte) bool {
	for _, k := range r.macKeys {
		if hmac.Equal(macWith(k, msg), mac) {
			return true
		}
	}
	return false
}

// macWith is HMAC-SHA256 of msg under key.
func macWith(key, msg []byte) []byte {
	h := hmac.New(sha256.New, key)
	h.Write(msg)
	return h.Sum(nil)
}

// KeyFileRecheck is how often a serving vault looks at its key file
// before it seals, fingerprints or MACs: at most one stat a second
// instead of several per payment (a stat cost about 5 µs, 4% of a
// purchase's CPU). A server may go on sealing under the previous active
// key for up to this long after a rotation rewrote the file; the
// previous key stays in the file, and the next `paylink keys rotate`
// re-seals what was sealed under it before dropping it.
const KeyFileRecheck = time.Second

// keyFileSource re-reads a key file when it changes on disk.
type keyFileSource struct {
	path     string
	previous [][]byte      // further previous keys from the environment
	recheck  time.Duration // the longest lookIfDue goes without a look
	opened   time.Time     // when the source was opened, on the monotonic clock
	nextLook atomic.Int64  // time since opened when the next look is due
	log      *slog.Logger  // told when the file cannot be read again
	mu       sync.Mutex
	seen     os.FileInfo // the file as last read
	// failed describes the last failure logged (the error and the file's
	// size and time), so that one failure is logged once, not at every
	// look; "" once the file reads again.
	failed string
}

// look says how far refresh goes to notice a changed key file.
type look int

const (
	lookIfDue look = iota // stat the file if recheck has passed since the last look
	lookNow               // stat the file now, and read it if it changed
	reload                // read the file now, changed or not
)

// OpenKeyFile builds a vault on a key file (created with a fresh key and
// mode 0600 when missing) that follows later changes to it, looking at
// the file at most once per recheck before it seals (zero: every time;
// serving uses KeyFileRecheck). previous are further keys that only
// open, such as PAYLINK_PREVIOUS_MASTER_KEYS. A changed file that cannot
// be read or holds a bad key is logged to log (nil: not logged) at WARN,
// once per failure, and the keys in force are kept.
func OpenKeyFile(path string, recheck time.Duration, log *slog.Logger, previous ...[]byte) (*Vault, error) {
	keys, err := LoadOrCreateKeyFile(path)
	if err != nil {
		return nil, err
	}
	seen, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("key file: %w", err)
	}
	r, err := newRing(append(keys, previous...))
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	v := &Vault{file: &keyFileSource{path: path, previous: previous, recheck: recheck, opened: time.Now(), seen: seen, log: log}}
	v.ring.Store(r)
	return v, nil
}

// refresh loads the key file again when it was replaced or changed since
// it was last read (or always, with reload). Any failure keeps the keys
// in force: a half-written or missing file must not stop a serving
// process; the rotate command writes the file by an atomic rename. The
// failure is logged (failure), so that an operator whose rotated key
// file cannot be read learns the server kept the old keys.
func (f *keyFileSource) refresh(v *Vault, how look) {
	if how == lookIfDue && !f.due() {
		return
	}
	fi, err := os.Stat(f.path)
	f.mu.Lock()
	defer f.mu.Unlock()
	if err != nil {
		f.failure(nil, err)
		return
	}
	if how != reload && sameFile(fi, f.seen) {
		// The file whose keys are in force, back where it was (moved
		// away and back, copied over with its times): they still are.
		f.recovered(v.ring.Load())
		return
	}
	keys, err := ReadKeyFile(f.path)
	if err != nil {
		f.failure(fi, err)
		return
	}
	r, err := newRing(append(keys, f.previous...))
	if err != nil {
		f.failure(fi, err)
		return
	}
	v.ring.Store(r)
	f.seen = fi
	f.recovered(r)
}

// recovered logs at INFO that the key file reads again, after a failure
// failure logged, and clears that failure, so that the same failure
// again is logged again; f.mu is held.
func (f *keyFileSource) recovered(r *keyRing) {
	if f.failed != "" {
		f.failed = ""
		f.log.Info("master key file read again", "path", f.path, "active_key", r.activeID)
	}
}

// failure logs at WARN that the key file (fi, nil when it cannot be
// stat'ed) could not be loaded, unless the same failure of the same file
// was logged last; f.mu is held. The errors name the file and line, never
// a key.
func (f *keyFileSource) failure(fi os.FileInfo, err error) {
	what := err.Error()
	if fi != nil {
		what = fmt.Sprintf("%s (%d bytes, %s)", what, fi.Size(), fi.ModTime().Format(time.RFC3339Nano))
	}
	if what == f.failed {
		return
	}
	f.failed = what
	f.log.Warn("master key file could not be read again: the keys read before stay in force", "path", f.path, "err", err)
}

// due reports whether the file is due a look, and if so takes the look:
// of the callers that find it due at once, one looks and the others go on
// with the keys in force.
func (f *keyFileSource) due() bool {
	if f.recheck <= 0 {
		return true
	}
	now, next := int64(time.Since(f.opened)), f.nextLook.Load()
	return now >= next && f.nextLook.CompareAndSwap(next, now+int64(f.recheck))
}

// sameFile reports whether two stats describe the same, unchanged file.
func sameFile(a, b os.FileInfo) bool {
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}
