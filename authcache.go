package paylink

import (
	"encoding/hex"
	"sync"
	"time"
)

// AuthCacheTTL is how long an authenticated merchant is reused without
// reading the database again. A change to a merchant made by another
// instance (a rotated webhook secret, new settings) is seen by this one
// within this time; changes made by this instance are seen at once.
const AuthCacheTTL = 10 * time.Second

// authCacheSize bounds the cache; past it the cache starts over.
const authCacheSize = 10000

// authCache remembers merchants for AuthCacheTTL, by API key hash
// (apiKeyEntry), so that authenticating a request costs no query, and by
// id (merchantEntry) for the hosted pages, which name a merchant through
// its link. It is safe for concurrent use.
type authCache struct {
	mu      sync.Mutex
	entries map[string]authEntry
	// gen counts forget calls: a merchant read before a change committed
	// must not be cached after forget ran for that change.
	gen uint64
}

type authEntry struct {
	m       *Merchant
	expires time.Time
}

func newAuthCache() *authCache { return &authCache{entries: map[string]authEntry{}} }

// apiKeyEntry is the cache key of the merchant of an API key hash.
func apiKeyEntry(hash []byte) string { return hex.EncodeToString(hash) }

// merchantEntry is the cache key of a merchant by id.
func merchantEntry(id string) string { return "merchant:" + id }

// get returns the cached merchant for an entry, if fresh at now (an
// entry ends at its expiry instant, like a key), and the generation to
// pass to put after reading the merchant from the store on a miss.
func (c *authCache) get(entry string, now time.Time) (*Merchant, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[entry]
	if !ok || !now.Before(e.expires) {
		return nil, c.gen
	}
	return e.m, c.gen
}

// put remembers a merchant until now + AuthCacheTTL, or until the key
// stops working (keyEnd, zero for a current key) if that is sooner: the
// cache must not extend a rolled key's life beyond its overlap. gen is
// get's generation: if forget ran since, m may predate the change it was
// called for, and is not cached.
func (c *authCache) put(entry string, m *Merchant, now, keyEnd time.Time, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	if len(c.entries) >= authCacheSize {
		clear(c.entries)
	}
	expires := now.Add(AuthCacheTTL)
	if !keyEnd.IsZero() && keyEnd.Before(expires) {
		expires = keyEnd
	}
	c.entries[entry] = authEntry{m: m, expires: expires}
}

// forget drops every entry, after this instance changed a merchant.
func (c *authCache) forget() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.entries)
	c.gen++
}
