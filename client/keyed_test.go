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
		k.put(fmt.Sprint("k", i), "tok", t0.Add(time.Duration(i)*time.Millisecond))
	}
	k.put("new", "tok", t0.Add(time.Hour))
	if len(k.byKey) != maxKeyedTokens {
		t.Fatalf("holds %d, want %d", len(k.byKey), maxKeyedTokens)
	}
	if _, ok := k.byKey["k0"]; ok {
		t.Error("the oldest entry was kept")
	}
	k.put("later", "tok", t0.Add(keyedTokenLife+time.Minute))
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
