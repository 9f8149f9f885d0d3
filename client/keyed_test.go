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
// request sent it too, it is no request's alone; a key that no longer
// holds the token records nothing; and a call's record stays right when
// the key's entry leaves the cache (verification sweep: a call's own
// retry lost its recovery once 10,000 other keys had pushed its entry
// out).
func TestKeyedTokensKnowTheRequestsThatSentThem(t *testing.T) {
	var k keyedTokens
	t0 := time.Now()
	k.putIfAbsent("k", "tok", t0)
	if k.sentWith("k", "other", "b") != nil {
		t.Error("a token the key does not hold was recorded")
	}
	a := k.sentWith("k", "tok", "a")
	if k.sentWith("k", "tok", "a") != a || !k.onlySentWith(a, "a") {
		t.Error("a token sent with request a alone, twice, was not a's alone")
	}
	if k.onlySentWith(a, "b") || k.onlySentWith(nil, "a") {
		t.Error("another request, or no record, counted as a's")
	}
	for i := range maxKeyedTokens {
		k.putIfAbsent(fmt.Sprint("other-", i), "tok", t0.Add(time.Second))
	}
	if _, ok := k.byKey["k"]; ok || !k.onlySentWith(a, "a") {
		t.Errorf("after the key's entry left the cache (still there: %v), its record no longer says request a alone", ok)
	}
	k.putIfAbsent("j", "tok2", t0.Add(time.Minute))
	b := k.sentWith("j", "tok2", "b")
	k.sentWith("j", "tok2", "c")
	k.sentWith("j", "tok2", "d")
	if k.onlySentWith(b, "b") || k.onlySentWith(b, "c") || len(b.sigs) != 2 {
		t.Errorf("a token sent with three requests: %d signatures kept (want 2), and one counted as alone", len(b.sigs))
	}
}
