package vault

import (
	"bytes"
	"strings"
	"testing"

	"github.com/paylink/paylink"
)

func TestSealOpenAndRotation(t *testing.T) {
	oldKey, newKey := bytes.Repeat([]byte{1}, KeySize), bytes.Repeat([]byte{2}, KeySize)
	old, err := New(oldKey)
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := old.Seal([]byte("4111111111111111"), "test")
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
	if pt, err := rotated.Open(sealed, "test"); err != nil || string(pt) != "4111111111111111" {
		t.Errorf("open after rotation: got %q, %v", pt, err)
	}
	fresh, _ := rotated.Seal([]byte("x"), "test")
	if fresh.KeyID == sealed.KeyID {
		t.Errorf("new ciphertexts use the old key id %s", sealed.KeyID)
	}
	onlyNew, _ := New(newKey)
	if _, err := onlyNew.Open(sealed, "test"); err == nil {
		t.Errorf("opened a ciphertext without its key")
	}
	tampered := sealed
	tampered.Ciphertext = append([]byte(nil), sealed.Ciphertext...)
	tampered.Ciphertext[len(tampered.Ciphertext)-1] ^= 1
	if _, err := old.Open(tampered, "test"); err == nil {
		t.Errorf("opened a tampered ciphertext")
	}
}

// TestMACAcrossRotation: a MAC made under the active key verifies while
// that key is a previous one, and not once the vault no longer holds it;
// an altered message or MAC does not verify.
func TestMACAcrossRotation(t *testing.T) {
	oldKey, newKey := bytes.Repeat([]byte{1}, KeySize), bytes.Repeat([]byte{2}, KeySize)
	old, _ := New(oldKey)
	rotated, _ := New(newKey, oldKey)
	onlyNew, _ := New(newKey)
	msg := []byte("token body")
	mac := old.MAC(msg)
	altered := append([]byte(nil), mac...)
	altered[0] ^= 1
	for _, c := range []struct {
		name string
		v    *Vault
		msg  []byte
		mac  []byte
		want bool
	}{
		{"same key", old, msg, mac, true},
		{"after rotation", rotated, msg, mac, true},
		{"key gone", onlyNew, msg, mac, false},
		{"altered message", rotated, []byte("token bodY"), mac, false},
		{"altered MAC", rotated, msg, altered, false},
		{"empty MAC", rotated, msg, nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.v.CheckMAC(c.msg, c.mac); got != c.want {
				t.Errorf("got %v, want %v", got, c.want)
			}
		})
	}
	if bytes.Equal(rotated.MAC(msg), mac) {
		t.Errorf("the rotated vault MACs with the old key")
	}
}

func TestFingerprintsAreScopedPerMerchant(t *testing.T) {
	a, _ := New(bytes.Repeat([]byte{1}, KeySize))
	b, _ := New(bytes.Repeat([]byte{1}, KeySize)) // another instance, same key
	fp := func(v *Vault, merchant, pan string) string {
		f, keyID := v.Fingerprint(merchant, pan)
		if keyID != v.KeyID() {
			t.Errorf("fingerprint key id: got %s, want the active %s", keyID, v.KeyID())
		}
		return f
	}
	tests := []struct {
		name       string
		got, other string
		same       bool
	}{
		{"same merchant, same card, two instances", fp(a, "m1", "4111111111111111"), fp(b, "m1", "4111111111111111"), true},
		{"two merchants, same card", fp(a, "m1", "4111111111111111"), fp(a, "m2", "4111111111111111"), false},
		{"same merchant, two cards", fp(a, "m1", "4111111111111111"), fp(a, "m1", "5555555555554444"), false},
		{"merchant id and PAN do not run together", fp(a, "m1", "14111111111111111"), fp(a, "m11", "4111111111111111"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if (tt.got == tt.other) != tt.same {
				t.Errorf("got fingerprints %s and %s, want equal=%v", tt.got, tt.other, tt.same)
			}
			if len(tt.got) != 64 || strings.Contains(tt.got, "4111") {
				t.Errorf("got fingerprint %q, want 64 hex characters", tt.got)
			}
		})
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

// TestSealedSecretsAreBound: a ciphertext opens only with the binding it
// was sealed with, and one sealed before bindings (the key id alone as
// additional data, as every ciphertext stored before them was) opens
// whatever the binding, until key rotation re-seals it.
func TestSealedSecretsAreBound(t *testing.T) {
	key := bytes.Repeat([]byte{3}, KeySize)
	v, _ := New(key)
	sealed, err := v.Seal([]byte("4111111111111111"), "card\x00m1\x00tok1")
	if err != nil {
		t.Fatal(err)
	}
	if pt, err := v.Open(sealed, "card\x00m1\x00tok1"); err != nil || string(pt) != "4111111111111111" {
		t.Errorf("its own binding: got %q, %v", pt, err)
	}
	for _, other := range []string{"card\x00m1\x00tok2", "card\x00m2\x00tok1", "idempotency_response\x00m1\x00k1", "", "card\x00m1\x00tok1\x00"} {
		if _, err := v.Open(sealed, other); err == nil {
			t.Errorf("opened with the binding %q", other)
		}
	}
	id, aead, err := deriveAEAD(key)
	if err != nil {
		t.Fatal(err)
	}
	nonce := bytes.Repeat([]byte{9}, aead.NonceSize())
	legacy := paylink.SealedSecret{KeyID: id, Ciphertext: aead.Seal(nonce, nonce, []byte("older"), []byte(id))}
	if pt, err := v.Open(legacy, "card\x00m1\x00tok1"); err != nil || string(pt) != "older" {
		t.Errorf("a ciphertext sealed before bindings: got %q, %v; want it opened", pt, err)
	}
}
