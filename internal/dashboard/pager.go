package dashboard

import (
	"net/url"
)

// Paged lists (payments, direct debits, the webhook delivery log) go
// forward by the store's cursor. The links also carry the cursors of the
// pages already passed (repeated prev= parameters, the first page's as
// an empty one), so that a Newer link needs no backward query.

// maxTrail bounds the cursors a link carries: past it the oldest drop,
// and Newest still leads back.
const maxTrail = 20

// pageLinks are a paged list's links, "" when there is no such page.
type pageLinks struct {
	Older, Newer, Newest string
}

// pagesOf returns the links of the page q shows on base, whose next
// page starts after next ("" for the last page).
func pagesOf(q url.Values, base, next string) pageLinks {
	var p pageLinks
	cursor, trail := q.Get("cursor"), q["prev"]
	if len(trail) > maxTrail { // a link this page made carries no more
		trail = trail[len(trail)-maxTrail:]
	}
	if next != "" {
		older := append(append([]string(nil), trail...), cursor)
		if len(older) > maxTrail {
			older = older[len(older)-maxTrail:]
		}
		p.Older = pageURL(q, base, next, older)
	}
	if cursor == "" {
		return p
	}
	if n := len(trail); n > 0 {
		p.Newer = pageURL(q, base, trail[n-1], trail[:n-1])
	}
	if newest := pageURL(q, base, "", nil); newest != p.Newer {
		p.Newest = newest
	}
	return p
}

// pageURL is base with q's filter, the cursor and the trail.
func pageURL(q url.Values, base, cursor string, trail []string) string {
	set := url.Values{"cursor": nil, "prev": trail}
	if cursor != "" {
		set["cursor"] = []string{cursor}
	}
	return linkWith(q, base, set)
}
