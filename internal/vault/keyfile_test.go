package vault

import (
	"bytes"
	"encoding/hex"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestReadKeyFileFormats(t *testing.T) {
	k1, k2 := strings.Repeat("0a", KeySize), strings.Repeat("0b", KeySize)
	tests := []struct {
		name    string
		content string
		want    []string // hex keys, active first; nil: an error
	}{
		{"one key, as versions before rotation wrote it", k1 + "\n", []string{k1}},
		{"one key without newline", k1, []string{k1}},
		{"header, active and previous", keyFileHeader + k2 + "\n" + k1 + "\n", []string{k2, k1}},
		{"blank lines and spaces", "\n  " + k2 + "  \n\n" + k1 + "\n", []string{k2, k1}},
		{"comments only", "# nothing\n", nil},
		{"empty", "", nil},
		{"a short key", k1 + "\nabcd\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "p.db.key")
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			keys, err := ReadKeyFile(path)
			if tt.want == nil {
				if err == nil {
					t.Fatalf("got keys %d, want an error", len(keys))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, k := range keys {
				got = append(got, hex.EncodeToString(k))
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("got keys %v, want %v", got, tt.want)
			}
		})
	}
}

func TestWriteKeyFileIsPrivateAndReadsBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.db.key")
	keys := [][]byte{bytes.Repeat([]byte{2}, KeySize), bytes.Repeat([]byte{1}, KeySize)}
	for range 2 { // a new file, then a replaced one
		if err := WriteKeyFile(path, keys); err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("got key file mode %v, want 0600", st.Mode().Perm())
		}
	}
	got, err := ReadKeyFile(path)
	if err != nil || len(got) != 2 || !bytes.Equal(got[0], keys[0]) || !bytes.Equal(got[1], keys[1]) {
		t.Errorf("read back %d keys (%v), want the two written, active first", len(got), err)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("got %d files in the directory, want only the key file (no temporary left)", len(entries))
	}
}

// TestKeyFileVaultFollowsRotation is what lets servers keep serving while
// `paylink keys rotate` rewrites their key file.
func TestKeyFileVaultFollowsRotation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.db.key")
	serving, err := OpenKeyFile(path, 0, nil) // creates the file; looks at it before every seal
	if err != nil {
		t.Fatal(err)
	}
	oldID := serving.KeyID()
	before, err := serving.Seal([]byte("4111111111111111"), "test")
	if err != nil {
		t.Fatal(err)
	}
	rotator := rotateKeyFile(t, path)
	resealed, err := rotator.Seal([]byte("4111111111111111"), "test")
	if err != nil {
		t.Fatal(err)
	}
	if serving.KeyID() == oldID {
		t.Errorf("got active key %s after the file changed, want the new one", oldID)
	}
	if pt, err := serving.Open(before, "test"); err != nil || string(pt) != "4111111111111111" {
		t.Errorf("open a secret sealed before the rotation: got %q, %v", pt, err)
	}
	if pt, err := serving.Open(resealed, "test"); err != nil || string(pt) != "4111111111111111" {
		t.Errorf("open a secret re-sealed by the rotation: got %q, %v", pt, err)
	}
	after, err := serving.Seal([]byte("x"), "test")
	if err != nil || after.KeyID != rotator.KeyID() {
		t.Errorf("seal after the rotation: got key %s (%v), want the new active key %s", after.KeyID, err, rotator.KeyID())
	}
}

// rotateKeyFile does to the key file at path what `paylink keys rotate`
// does: a new active key first, the old one kept as previous. It returns
// a vault on the new keys.
func rotateKeyFile(t *testing.T, path string) *Vault {
	t.Helper()
	keys, err := ReadKeyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := NewKey()
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteKeyFile(path, [][]byte{fresh, keys[0]}); err != nil {
		t.Fatal(err)
	}
	rotator, err := New(fresh, keys[0])
	if err != nil {
		t.Fatal(err)
	}
	return rotator
}

// TestKeyFileVaultLooksOncePerRecheck: between looks at its key file a
// serving vault seals under the active key it knows, but a secret or a
// MAC under a key it does not know yet makes it look at once, so another
// process's new key is never refused.
func TestKeyFileVaultLooksOncePerRecheck(t *testing.T) {
	msg := []byte("token body")
	for _, meet := range []struct {
		name string
		new  func(t *testing.T, serving, rotator *Vault) // serving meets the new key
	}{
		{"a MAC under the new key", func(t *testing.T, serving, rotator *Vault) {
			if !serving.CheckMAC(msg, rotator.MAC(msg)) {
				t.Errorf("a MAC made under the new key did not check")
			}
		}},
		{"a secret under the new key", func(t *testing.T, serving, rotator *Vault) {
			sealed, err := rotator.Seal([]byte("4111111111111111"), "test")
			if err != nil {
				t.Fatal(err)
			}
			if pt, err := serving.Open(sealed, "test"); err != nil || string(pt) != "4111111111111111" {
				t.Errorf("open a secret sealed under the new key: got %q, %v", pt, err)
			}
		}},
	} {
		t.Run(meet.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "p.db.key")
			serving, err := OpenKeyFile(path, time.Hour, nil)
			if err != nil {
				t.Fatal(err)
			}
			oldID := serving.KeyID() // the first look: the next is an hour away
			if serving.CheckMAC(msg, []byte("not a MAC")) {
				t.Fatalf("a wrong MAC checked")
			}
			rotator := rotateKeyFile(t, path)
			if got := serving.KeyID(); got != oldID {
				t.Errorf("got active key %s before the next look, want %s still", got, oldID)
			}
			meet.new(t, serving, rotator)
			if got := serving.KeyID(); got != rotator.KeyID() {
				t.Errorf("got active key %s after meeting the new key, want %s", got, rotator.KeyID())
			}
		})
	}
}

// TestKeyFileThatCannotBeReadAgainIsLogged: a serving vault whose key
// file changes into something it cannot load (a bad key, the file gone, a
// directory in its place, as a botched hand-edit or restore leaves) keeps
// the keys in force and logs a warning once per failure, not at every
// look, naming no key; a file that reads again is logged too.
func TestKeyFileThatCannotBeReadAgainIsLogged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.db.key")
	var logs bytes.Buffer
	serving, err := OpenKeyFile(path, 0, slog.New(slog.NewTextHandler(&logs, nil))) // looks before every seal
	if err != nil {
		t.Fatal(err)
	}
	keys, err := ReadKeyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	active := serving.KeyID()
	seal := func(times int) {
		for range times {
			if sealed, err := serving.Seal([]byte("x"), "test"); err != nil || sealed.KeyID != active {
				t.Fatalf("seal: got key %s (%v), want the key in force %s", sealed.KeyID, err, active)
			}
		}
	}
	warnings := func() int {
		return strings.Count(logs.String(), "level=WARN msg=\"master key file could not be read again")
	}
	for i, spoil := range []func() error{
		func() error { return os.WriteFile(path, []byte("not a key\n"), 0o600) },
		func() error {
			return os.WriteFile(path, []byte(strings.Repeat("0a", KeySize)+"\nstill not a key\n"), 0o600)
		},
		func() error { return os.Remove(path) },
		func() error { return os.Mkdir(path, 0o700) },
	} {
		if err := spoil(); err != nil {
			t.Fatal(err)
		}
		seal(3)
		if got := warnings(); got != i+1 {
			t.Fatalf("failure %d: got %d warnings in all, want %d (one per failure):\n%s", i+1, got, i+1, logs.String())
		}
	}
	// Mended as keys rotate would: a new active key, the old one kept.
	if err := WriteKeyFile(path+".new", keys); err != nil {
		t.Fatal(err)
	}
	mended := rotateKeyFile(t, path+".new")
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
	if got := serving.KeyID(); got != mended.KeyID() {
		t.Errorf("after the file was mended: got active key %s, want %s", got, mended.KeyID())
	}
	if !strings.Contains(logs.String(), "master key file read again") {
		t.Errorf("the mended file is not logged:\n%s", logs.String())
	}
	fresh, err := ReadKeyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range append(keys, fresh...) {
		if strings.Contains(strings.ToLower(logs.String()), hex.EncodeToString(k)) {
			t.Errorf("a key is in the log:\n%s", logs.String())
		}
	}
}

func TestLockKeyFileIsExclusive(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.db.key")
	unlock, err := LockKeyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LockKeyFile(path); !errors.Is(err, ErrKeyFileLocked) {
		t.Errorf("second lock while held: got %v, want ErrKeyFileLocked", err)
	}
	unlock()
	again, err := LockKeyFile(path)
	if err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
	again()
}

// TestKeyFileMovedAwayAndBackIsLoggedEachTime: the key file is moved
// away (a warning), moved back unchanged (same inode, size and time: its
// keys were in force all along, which is logged), then moved away again,
// which is logged again (verification sweep: the return went unlogged,
// and the second disappearance, the same error, was never logged).
func TestKeyFileMovedAwayAndBackIsLoggedEachTime(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p.db.key")
	var logs bytes.Buffer
	serving, err := OpenKeyFile(path, 0, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	seal := func() {
		if _, err := serving.Seal([]byte("x"), "test"); err != nil {
			t.Fatal(err)
		}
	}
	seal()
	aside := filepath.Join(dir, "aside")
	for range 2 {
		if err := os.Rename(path, aside); err != nil {
			t.Fatal(err)
		}
		seal()
		if err := os.Rename(aside, path); err != nil {
			t.Fatal(err)
		}
		seal()
	}
	warns := strings.Count(logs.String(), "could not be read again")
	agains := strings.Count(logs.String(), "master key file read again")
	if warns != 2 || agains != 2 {
		t.Errorf("got %d warnings and %d recoveries, want 2 and 2; log:\n%s", warns, agains, logs.String())
	}
}
