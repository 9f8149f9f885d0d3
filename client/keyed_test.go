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

// TestKeyedTokensKnowTheRequestsThatSentThem: a token sent with one
// request (any number of times) was that request's alone; once another
// request sent it too, it is no request's alone, and a signature for a
// token the key no longer holds counts for nothing.
func TestKeyedTokensKnowTheRequestsThatSentThem(t *testing.T) {
	var k keyedTokens
	k.putIfAbsent("k", "tok", time.Now())
	if k.onlySentWith("k", "tok", "a") {
		t.Error("a token never sent was request a's alone")
	}
	k.sentWith("k", "tok", "a")
	k.sentWith("k", "tok", "a")
	k.sentWith("k", "other", "b") // a token the key does not hold
	if !k.onlySentWith("k", "tok", "a") {
		t.Error("a token sent with request a alone, twice, was not a's alone")
	}
	if k.onlySentWith("k", "other", "a") || k.onlySentWith("k", "tok", "b") {
		t.Error("another token or another request counted as a's")
	}
	k.sentWith("k", "tok", "b")
	k.sentWith("k", "tok", "c")
	if k.onlySentWith("k", "tok", "a") || k.onlySentWith("k", "tok", "b") {
		t.Error("a token sent with two requests was one's alone")
	}
	if n := len(k.byKey["k"].sigs); n != 2 {
		t.Errorf("kept %d signatures, want 2 (enough to say it was not one request's)", n)
	}
}
