package vault

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// keyFileHeader opens every key file this package writes; it explains the
// format to an operator who opens the file.
const keyFileHeader = `# paylink master keys, 64 hex characters each, one a line.
# The first is the active key: it seals new secrets. Any further lines are
# previous keys: they only open secrets sealed before a rotation, until
# "paylink keys rotate" finds nothing sealed under them and drops them.
`

// ParseKey parses a master key given as 64 hex characters.
func ParseKey(s string) ([]byte, error) {
	b, err := hex.DecodeString(strings.TrimSpace(s))
	if err != nil || len(b) != KeySize {
		return nil, errors.New("master key must be 64 hex characters (32 bytes)")
	}
	return b, nil
}

// ReadKeyFile reads a key file: master keys one a line, active first;
// blank lines and lines starting with # are ignored. A file of one key
// and no comment, as versions before key rotation wrote, is valid.
func ReadKeyFile(path string) ([][]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read key file: %w", err)
	}
	var keys [][]byte
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, err := ParseKey(line)
		if err != nil {
			return nil, fmt.Errorf("key file %s line %d: %w", path, n, err)
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("key file %s holds no key", path)
	}
	return keys, nil
}

// LoadOrCreateKeyFile reads a master key file, creating it with a fresh
// random key and mode 0600 when it does not exist. It is meant only for
// the embedded single-machine SQLite default.
func LoadOrCreateKeyFile(path string) ([][]byte, error) {
	keys, err := ReadKeyFile(path)
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		return keys, err
	}
	key, err := NewKey()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("key file dir: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) { // another process won the race: use its key
		return ReadKeyFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("create key file: %w", err)
	}
	if _, err := f.Write(formatKeyFile([][]byte{key})); err != nil {
		f.Close()
		return nil, fmt.Errorf("write key file: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("write key file: %w", err)
	}
	return [][]byte{key}, nil
}

// NewKey returns a fresh random master key.
func NewKey() ([]byte, error) {
	key := make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("generate key: %w", err)
	}
	return key, nil
}

// formatKeyFile renders keys, active first, in the key file format.
func formatKeyFile(keys [][]byte) []byte {
	var b bytes.Buffer
	b.WriteString(keyFileHeader)
	for _, k := range keys {
		b.WriteString(hex.EncodeToString(k) + "\n")
	}
	return b.Bytes()
}

// WriteKeyFile replaces a key file with keys, active first, atomically: a
// new file with mode 0600 is written and synced beside it, then renamed
// over it, so a reader sees the old keys or the new, never a mix.
func WriteKeyFile(path string, keys [][]byte) error {
	if len(keys) == 0 {
		return errors.New("write key file: no key")
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".new-*") // mode 0600
	if err != nil {
		return fmt.Errorf("write key file: %w", err)
	}
	defer os.Remove(tmp.Name()) // after the rename, there is nothing left to remove
	if _, err := tmp.Write(formatKeyFile(keys)); err != nil {
		tmp.Close()
		return fmt.Errorf("write key file: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("sync key file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write key file: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("replace key file: %w", err)
	}
	return syncDir(filepath.Dir(path))
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync key file directory: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync key file directory: %w", err)
	}
	return nil
}
