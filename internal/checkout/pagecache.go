package checkout

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"
)

// maxCachedPages bounds the page cache: a rendered page is about 9 kB.
const maxCachedPages = 256

// pageCache keeps rendered link pages (the GET of /pay and /vt), so that
// html/template, half of such a request's CPU, runs once per version of
// a page instead of once per request. A page is keyed by everything it
// shows but the response's CSP nonce and CSRF token: the view as JSON
// (the templates read nothing but the view's exported fields; the CSS is
// the Handler's own). It is kept rendered with a mark in place of each
// of the two, and every response gets a copy with its own values
// stamped in. A link that changes (paid, expired, its merchant renamed)
// has a different view, hence a different key: nothing needs forgetting,
// and an entry no longer asked for is pushed out when the cache is full.
//
// Stamping gives the same bytes as rendering only because both values
// are base64url (randomString, csrfToken), which no html/template
// escaper changes, and so are the marks (random, from randomString); a
// view whose values are not is rendered as before (cacheable).
type pageCache struct {
	nonceMark, csrfMark string

	mu    sync.Mutex
	pages map[string]*stencil
}

// stencil is a rendered page cut where the nonce and CSRF token go.
type stencil struct {
	parts [][]byte // one more than holes
	holes []bool   // true for the nonce, false for the CSRF token
	size  int      // the length of parts together
}

// newPageCache makes a cache whose marks come from random.
func newPageCache(random func(int) (string, error)) (*pageCache, error) {
	nonceMark, err := random(18)
	if err != nil {
		return nil, fmt.Errorf("page cache mark: %w", err)
	}
	csrfMark, err := random(18)
	if err != nil {
		return nil, fmt.Errorf("page cache mark: %w", err)
	}
	return &pageCache{nonceMark: nonceMark, csrfMark: csrfMark, pages: map[string]*stencil{}}, nil
}

// page returns v rendered by render, from the cache when it can.
func (c *pageCache) page(v *view, render func(*view) ([]byte, error)) ([]byte, error) {
	if !cacheable(v) {
		return render(v)
	}
	key, err := c.key(v)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	s := c.pages[key]
	c.mu.Unlock()
	if s == nil {
		marked := *v
		marked.Nonce, marked.CSRF = c.nonceMark, c.csrfMark
		page, err := render(&marked)
		if err != nil {
			return nil, err
		}
		s = c.cut(page)
		c.keep(key, s)
	}
	return s.stamp(v.Nonce, v.CSRF), nil
}

// key is v as JSON without its nonce and CSRF token.
func (c *pageCache) key(v *view) (string, error) {
	k := *v
	k.Nonce, k.CSRF = "", ""
	b, err := json.Marshal(&k)
	if err != nil {
		return "", fmt.Errorf("page cache key: %w", err)
	}
	return string(b), nil
}

// keep stores s, first dropping an entry if the cache is full.
func (c *pageCache) keep(key string, s *stencil) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.pages) >= maxCachedPages {
		for k := range c.pages { // an arbitrary entry
			delete(c.pages, k)
			break
		}
	}
	c.pages[key] = s
}

// cut splits a page rendered with the marks at each of them.
func (c *pageCache) cut(page []byte) *stencil {
	s := &stencil{}
	nonce, csrf := []byte(c.nonceMark), []byte(c.csrfMark)
	for {
		i, j := bytes.Index(page, nonce), bytes.Index(page, csrf)
		if i < 0 && j < 0 {
			break
		}
		isNonce := j < 0 || (i >= 0 && i < j)
		at, mark := j, csrf
		if isNonce {
			at, mark = i, nonce
		}
		s.parts = append(s.parts, page[:at])
		s.holes = append(s.holes, isNonce)
		page = page[at+len(mark):]
	}
	s.parts = append(s.parts, page)
	for _, p := range s.parts {
		s.size += len(p)
	}
	return s
}

// stamp is the page with nonce and csrf in their places.
func (s *stencil) stamp(nonce, csrf string) []byte {
	out := make([]byte, 0, s.size+len(s.holes)*max(len(nonce), len(csrf)))
	for i, p := range s.parts {
		out = append(out, p...)
		if i == len(s.holes) {
			break
		}
		if s.holes[i] {
			out = append(out, nonce...)
		} else {
			out = append(out, csrf...)
		}
	}
	return out
}

// cacheable reports whether v's nonce and CSRF token may be stamped into
// a page rendered without them: base64url, which html/template writes
// unchanged in every context.
func cacheable(v *view) bool {
	return v.Nonce != "" && base64URL(v.Nonce) && base64URL(v.CSRF)
}

func base64URL(s string) bool {
	for i := 0; i < len(s); i++ {
		b := s[i]
		if !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '-' || b == '_') {
			return false
		}
	}
	return true
}
