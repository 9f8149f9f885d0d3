package dashboard

import (
	"fmt"
	"net/url"
	"testing"
)

func TestPagesOf(t *testing.T) {
	deep := url.Values{"status": {"APPROVED"}, "cursor": {"c21"}}
	for i := range maxTrail {
		deep.Add("prev", fmt.Sprintf("c%d", i+1))
	}
	tests := []struct {
		name  string
		query string
		q     url.Values
		next  string
		want  pageLinks
	}{
		{"the only page", "status=APPROVED", nil, "", pageLinks{}},
		{"the first of several", "status=APPROVED", nil, "c1",
			pageLinks{Older: "/p?cursor=c1&prev=&status=APPROVED"}},
		{"the second", "status=APPROVED&cursor=c1&prev=", nil, "c2",
			pageLinks{Older: "/p?cursor=c2&prev=&prev=c1&status=APPROVED", Newer: "/p?status=APPROVED"}},
		{"the third, last", "cursor=c2&prev=&prev=c1", nil, "",
			pageLinks{Newer: "/p?cursor=c1&prev=", Newest: "/p"}},
		{"a page reached by a link without its trail", "cursor=c7", nil, "c8",
			pageLinks{Older: "/p?cursor=c8&prev=c7", Newest: "/p"}},
		{"a deep page: the oldest cursor of the trail drops", "", deep, "c22", pageLinks{
			Older:  "/p?cursor=c22&" + trail(2, 21) + "&status=APPROVED",
			Newer:  "/p?cursor=c20&" + trail(1, 19) + "&status=APPROVED",
			Newest: "/p?status=APPROVED"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := tt.q
			if q == nil {
				var err error
				if q, err = url.ParseQuery(tt.query); err != nil {
					t.Fatal(err)
				}
			}
			if got := pagesOf(q, "/p", tt.next); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// trail is the prev parameters of cursors cFROM to cTO.
func trail(from, to int) string {
	s := ""
	for i := from; i <= to; i++ {
		if s != "" {
			s += "&"
		}
		s += fmt.Sprintf("prev=c%d", i)
	}
	return s
}
