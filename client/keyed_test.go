package client

import (
	"fmt"
	"testing"
	"time"
)

// TestKeyedTokensStayBounded: a full cache first forgets expired
// entries, else its oldest one, and never holds more than its bound.
func TestKeyedTokensStayBounded(t *testing.T) {
	var k keyedTokens
	t0 := time.Now()
	for i := range maxKeyedTokens {
		k.putIfAbsent(fmt.Sprint("k", i), "tok", t0.Add(time.Duration(i)*time.Millisecond))
	}
	k.putIfAbsent("new", "tok", t0.Add(time.Hour))
	if len(k.byKey) != maxKeyedTokens {
		t.Fatalf("holds %d, want %d", len(k.byKey), maxKeyedTokens)
	}
	if _, ok := k.byKey["k0"]; ok {
		t.Error("the oldest entry was kept")
	}
	k.putIfAbsent("later", "tok", t0.Add(keyedTokenLife+time.Minute))
	if len(k.byKey) != 2 { // "new" and "later": every "k..." entry had expired
		t.Errorf("after expiry: %d entries, want 2", len(k.byKey))
	}
	for key, e := range k.byKey {
		if t0.Add(keyedTokenLife+time.Minute).Sub(e.at) > keyedTokenLife {
			t.Errorf("expired entry %s kept", key)
		}
	}
	if _, ok := k.get(""); ok {
		t.Error("the empty key found a token")
	}
}

// TestKeyedTokensKeepTheFirst: a second token for a key with a live one
// is not stored, and the caller is handed the first; an expired entry
// is replaced.
func TestKeyedTokensKeepTheFirst(t *testing.T) {
	var k keyedTokens
	t0 := time.Now()
	if got := k.putIfAbsent("k", "first", t0); got != "first" {
		t.Errorf("first put: got %q, want first", got)
	}
	if got := k.putIfAbsent("k", "second", t0.Add(time.Minute)); got != "first" {
		t.Errorf("second put: got %q, want first", got)
	}
	if got := k.putIfAbsent("k", "later", t0.Add(keyedTokenLife+time.Minute)); got != "later" {
		t.Errorf("put after expiry: got %q, want later", got)
	}
}
