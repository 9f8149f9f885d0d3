package checkout

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strings"

	"github.com/paylink/paylink"
)

// csrfCookie holds a random per-browser value. A form's CSRF token is
// HMAC-SHA256, keyed with the link's own CSRF secret (random, stored with
// the link, never sent), of the link id, the page mode and that value: a
// form posted from another site has no way to know the cookie's value,
// and a token of one link or mode is useless on another.
const csrfCookie = "paylink_csrf"

// csrfToken returns this browser's token for the link, setting the cookie
// when the browser has none.
func (h *Handler) csrfToken(w http.ResponseWriter, r *http.Request, ls *paylink.LinkSession) (string, error) {
	value := browserOf(r)
	if value == "" {
		var err error
		if value, err = h.randomString(24); err != nil {
			return "", err
		}
		http.SetCookie(w, &http.Cookie{Name: csrfCookie, Value: value, Path: "/", HttpOnly: true,
			Secure: h.secureCookies(), SameSite: http.SameSiteLaxMode})
	}
	mac := hmac.New(sha256.New, []byte(ls.Link.CSRFSecret))
	mac.Write([]byte(ls.Link.ID + "|" + ls.Mode + "|" + value))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil)), nil
}

// browserOf is the request's browser cookie, "" if it has none: a link
// page's attempt keeps its hash (paylink.LinkPayment.Browser).
func browserOf(r *http.Request) string {
	if c, err := r.Cookie(csrfCookie); err == nil && len(c.Value) == 32 {
		return c.Value
	}
	return ""
}

// checkCSRF accepts a POST only with this browser's token for the link,
// from the form field csrf or the X-CSRF-Token header (the script).
func (rq *request) checkCSRF() error {
	got := rq.r.Header.Get("X-CSRF-Token")
	if got == "" {
		got = rq.r.PostFormValue("csrf")
	}
	switch {
	case hmac.Equal([]byte(got), []byte(rq.csrf)):
		return nil
	case browserOf(rq.r) == "":
		return errNoCookie
	}
	return errBadCSRF
}

// secureCookies reports whether the pages are served over HTTPS, from the
// public base URL rather than the request: behind a TLS-terminating proxy
// the request reaching paylink is plain HTTP, yet the browser's is not.
func (h *Handler) secureCookies() bool {
	return strings.HasPrefix(strings.ToLower(h.svc.Config().BaseURL), "https://")
}
