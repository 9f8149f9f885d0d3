package checkout

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/paylink/paylink"
)

// TestPageCacheMatchesRendering: a page from the cache is, byte for
// byte, the page the template renders for the same view, nonce and CSRF
// token, on a miss and on every hit after it, for every state a link
// page shows and with hostile merchant and customer text. The marks must
// come out where the nonce and token go (2 of each on the unpaid
// page), or stamping would change nothing and the comparison fail.
func TestPageCacheMatchesRendering(t *testing.T) {
	h, err := New(nil, slog.New(slog.DiscardHandler), Options{})
	if err != nil {
		t.Fatal(err)
	}
	hostile := `"><script>alert(1)</script> & 'x' +=`
	base := func() view {
		return view{CSS: h.css, Base: "/pay/tok_ABC", Title: "Pay " + hostile, Trading: hostile, Ref: hostile,
			Subtotal: "AUD 10.50", Total: "AUD 10.50", State: paylink.LinkUnpaid, Errors: map[string]string{},
			Form:  formValues{FirstName: hostile, Email: "jo@example.com", City: "Sydney"},
			Rates: []rateLine{{"Credit cards", "1.2%"}}, Wallets: []walletView{{"Apple Pay", "/pay/tok_ABC/wallet/applepay"}}, Zip: true}
	}
	views := map[string]func(*view){
		"unpaid":       func(*view) {},
		"no surcharge": func(v *view) { v.NoSurcharge, v.Rates = true, nil },
		"virtual terminal": func(v *view) {
			v.VT, v.Wallets, v.Zip, v.Base = true, nil, false, "/vt/tok_ABC"
		},
		"paid": func(v *view) {
			v.State, v.Paid = paylink.LinkPaid, &paidView{Reference: "pr_1", Amount: "AUD 10.63", Surcharge: "AUD 0.63", Method: "Card"}
		},
		"expired":   func(v *view) { v.State = paylink.LinkExpired },
		"cancelled": func(v *view) { v.State = paylink.LinkCancelled },
		"alert and errors": func(v *view) {
			v.Alert, v.Errors = hostile, map[string]string{"email": hostile, "card_number": "Check the number."}
		},
		"sheet": func(v *view) {
			v.Sheet = &sheetView{"Zip", "/pay/tok_ABC/zip/confirm", hostile, "AUD 10.50", "/pay/tok_ABC"}
		},
	}
	for name, change := range views {
		t.Run(name, func(t *testing.T) {
			for i := range 3 { // a miss, then hits
				v := base()
				change(&v)
				v.Nonce, v.CSRF = fmt.Sprintf("n-%d_Zz9", i), fmt.Sprintf("c_%d-Yy8", i)
				want, err := h.execute(&v)
				if err != nil {
					t.Fatal(err)
				}
				got, err := h.pages.page(&v, h.execute)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("request %d: cached page differs from the rendered one:\n%s", i, firstDifference(got, want))
				}
			}
		})
	}
	v := base()
	v.Nonce, v.CSRF = "nonceQ7", "csrfQ7"
	if _, err := h.pages.page(&v, h.execute); err != nil {
		t.Fatal(err)
	}
	key, err := h.pages.key(&v)
	if err != nil {
		t.Fatal(err)
	}
	rendered, _ := h.execute(&v)
	want := bytes.Count(rendered, []byte("nonceQ7")) + bytes.Count(rendered, []byte("csrfQ7"))
	if s := h.pages.pages[key]; s == nil || len(s.holes) != want || want < 4 {
		t.Fatalf("unpaid page: want a stencil cut at each of its %d nonces and CSRF tokens (2 of each at least)", want)
	}
	if strings.Contains(key, string(h.css)) {
		t.Errorf("the key holds the CSS, which is the Handler's own")
	}
}

// firstDifference shows where two pages first differ.
func firstDifference(got, want []byte) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	from := max(0, i-60)
	return fmt.Sprintf("got  ...%q\nwant ...%q", got[from:min(len(got), i+60)], want[from:min(len(want), i+60)])
}

// TestPageCacheLimits: a nonce or token that html/template would escape
// is never stamped (the page is rendered, nothing is cached), and the
// cache holds at most maxCachedPages pages.
func TestPageCacheLimits(t *testing.T) {
	h, err := New(nil, slog.New(slog.DiscardHandler), Options{})
	if err != nil {
		t.Fatal(err)
	}
	v := view{CSS: h.css, Base: "/pay/t", State: paylink.LinkUnpaid, Errors: map[string]string{}}
	for _, tokens := range [][2]string{{"a+b=", "c"}, {"n", `c"d`}, {"", "c"}} {
		v.Nonce, v.CSRF = tokens[0], tokens[1]
		got, err := h.pages.page(&v, h.execute)
		if err != nil {
			t.Fatal(err)
		}
		if want, _ := h.execute(&v); !bytes.Equal(got, want) {
			t.Errorf("nonce %q, token %q: page differs from the rendered one", tokens[0], tokens[1])
		}
	}
	if n := len(h.pages.pages); n != 0 {
		t.Fatalf("%d pages cached for values that are not base64url, want none", n)
	}
	for i := range maxCachedPages + 50 {
		v.Nonce, v.CSRF, v.Trading = "n", "c", fmt.Sprint("Shop ", i)
		if _, err := h.pages.page(&v, h.execute); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(h.pages.pages); n != maxCachedPages {
		t.Errorf("%d pages cached, want at most %d", n, maxCachedPages)
	}
}

// BenchmarkLinkPage renders a link page's view: with the template alone,
// from the cache (the same link again), and as a cache miss (a new link
// each time: the key, the rendering with marks, the cut and a stamp).
func BenchmarkLinkPage(b *testing.B) {
	h, err := New(nil, slog.New(slog.DiscardHandler), Options{})
	if err != nil {
		b.Fatal(err)
	}
	v := view{Nonce: "Zq3-nonce_0123456789ab", CSRF: "csrf-token_0123456789abcdefghijklmnopqrstu", CSS: h.css,
		Base: "/pay/tok_ABC", Title: "Pay Bob's Bikes", Trading: "Bob's Bikes", Ref: "ORDER-42", Subtotal: "AUD 10.50",
		Total: "AUD 10.50", State: paylink.LinkUnpaid, Errors: map[string]string{},
		Form:  formValues{FirstName: "Jo", LastName: "Citizen", Email: "jo@example.com", City: "Sydney"},
		Rates: []rateLine{{"Credit cards", "1.2%"}}, Wallets: []walletView{{"Apple Pay", "/pay/tok_ABC/wallet/applepay"}}, Zip: true}
	b.Run("template", func(b *testing.B) {
		for b.Loop() {
			if _, err := h.execute(&v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cache-hit", func(b *testing.B) {
		for b.Loop() {
			if _, err := h.pages.page(&v, h.execute); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cache-miss", func(b *testing.B) {
		i := 0
		for b.Loop() {
			i++
			v.Ref = fmt.Sprint("ORDER-", i)
			if _, err := h.pages.page(&v, h.execute); err != nil {
				b.Fatal(err)
			}
		}
	})
}
