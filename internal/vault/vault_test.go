package vault

import (
	"bytes"
	"testing"
)

func TestSealOpenAndRotation(t *testing.T) {
	oldKey, newKey := bytes.Repeat([]byte{1}, KeySize), bytes.Repeat([]byte{2}, KeySize)
	old, err := New(oldKey)
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := old.Seal([]byte("4111111111111111"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed.Ciphertext, []byte("4111111111111111")) {
		t.Fatalf("ciphertext contains the plaintext")
	}
	rotated, err := New(newKey, oldKey)
	if err != nil {
		t.Fatal(err)
	}
	if pt, err := rotated.Open(sealed); err != nil || string(pt) != "4111111111111111" {
		t.Errorf("open after rotation: got %q, %v", pt, err)
	}
	fresh, _ := rotated.Seal([]byte("x"))
	if fresh.KeyID == sealed.KeyID {
		t.Errorf("new ciphertexts use the old key id %s", sealed.KeyID)
	}
	onlyNew, _ := New(newKey)
	if _, err := onlyNew.Open(sealed); err == nil {
		t.Errorf("opened a ciphertext without its key")
	}
	tampered := sealed
	tampered.Ciphertext = append([]byte(nil), sealed.Ciphertext...)
	tampered.Ciphertext[len(tampered.Ciphertext)-1] ^= 1
	if _, err := old.Open(tampered); err == nil {
		t.Errorf("opened a tampered ciphertext")
	}
	a, _ := New(oldKey)
	if a.Fingerprint("4111111111111111") != old.Fingerprint("4111111111111111") || a.Fingerprint("4111111111111111") == a.Fingerprint("5555555555554444") {
		t.Errorf("fingerprints must be stable per card and differ between cards")
	}
}

func TestParseKey(t *testing.T) {
	if _, err := ParseKey("zz"); err == nil {
		t.Errorf("short key accepted")
	}
	if k, err := ParseKey(" " + string(bytes.Repeat([]byte("0f"), 32)) + "\n"); err != nil || len(k) != KeySize {
		t.Errorf("valid key: %v", err)
	}
}
