package paylink

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// The webhook host whitelist is decided here and nowhere else: onboarding
// (CreateMerchant) stores entries in normalizeWebhookHost's form, link
// creation checks a dynamic webhook_url with CheckWebhookURL, and the
// dispatcher (internal/webhook) calls CheckWebhookURL before every attempt. Before this one rule, each
// of the three normalised hosts its own way and a trailing-dot entry was
// accepted for a link but refused at delivery.

// maxHostLength is the longest DNS name (RFC 1035), without its final dot.
const maxHostLength = 253

var (
	// errNotWhitelisted is returned for a webhook URL whose host is not on
	// the merchant's webhook whitelist.
	errNotWhitelisted = errors.New("host is not in the merchant's webhook whitelist")
	// errBadWebhookURL is returned for an address that is not absolute
	// http(s) with a host and without credentials.
	errBadWebhookURL = errors.New("must be an absolute http:// or https:// address without credentials")
)

// normalizeWebhookHost returns the canonical form of a whitelist entry or
// of a URL's host, so that entries and hosts compare as plain strings:
// trimmed, lower case, without the root's trailing dot, IPv6 literals
// without brackets and in their shortest form (IPv4-mapped ones as IPv4).
// It refuses what is not a bare host: a scheme, port, path, user, zone,
// space or empty label.
func normalizeWebhookHost(h string) (string, error) {
	h = strings.ToLower(strings.TrimSpace(h))
	if ContainsCardNumber(h) {
		return "", errCardNumberInText
	}
	if inner, ok := strings.CutPrefix(h, "["); ok {
		if inner, ok = strings.CutSuffix(inner, "]"); !ok {
			return "", fmt.Errorf("%q is not a host name or IP address", h)
		}
		h = inner
	}
	h = strings.TrimSuffix(h, ".")
	if ip, err := netip.ParseAddr(h); err == nil {
		if ip.Zone() != "" {
			return "", fmt.Errorf("%q: an IPv6 zone is not allowed", h)
		}
		return ip.Unmap().String(), nil
	}
	if h == "" || len(h) > maxHostLength || !validHostName(h) {
		return "", fmt.Errorf("%q must be a host name or IP address, without scheme, port or path", h)
	}
	if numericLastLabel(h) {
		return "", fmt.Errorf("%q is an IPv4 address in a short or numeric form, which is looked up as a name and never reached: write it as four dotted decimals (127.0.0.1)", h)
	}
	return h, nil
}

// validHosts is entries without those normalizeWebhookHost refuses:
// entries stored before a rule refused them (a numeric IPv4 form), which
// hostAllowed matches to no host.
func validHosts(entries []string) []string {
	return slices.DeleteFunc(slices.Clone(entries), func(e string) bool {
		_, err := normalizeWebhookHost(e)
		return err != nil
	})
}

// numericLastLabel reports whether h's last label is a number (decimal,
// or hexadecimal with 0x), as in 127.1, 2130706433 or 0x7f000001: no top
// level domain is, and such a host is an IPv4 address netip does not
// read, which a dialer then looks up as a name and fails.
func numericLastLabel(h string) bool {
	label := h[strings.LastIndexByte(h, '.')+1:]
	if hex, ok := strings.CutPrefix(label, "0x"); ok {
		return strings.Trim(hex, "0123456789abcdef") == ""
	}
	return strings.Trim(label, "0123456789") == ""
}

// validHostName accepts dot-separated labels of letters (any script, so
// internationalised names work in either form), digits, '-' and '_'.
func validHostName(h string) bool {
	for label := range strings.SplitSeq(h, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for _, r := range label {
			if r != '-' && r != '_' && !unicode.IsLetter(r) && !unicode.IsDigit(r) {
				return false
			}
		}
	}
	return true
}

// hostAllowed reports whether host (a URL's host name or IP literal) is
// on whitelist. Both sides are normalised, so entries stored before
// normalisation existed still match; a host matches only itself, never a
// subdomain, and an invalid host or entry matches nothing.
func hostAllowed(whitelist []string, host string) bool {
	h, err := normalizeWebhookHost(host)
	if err != nil {
		return false
	}
	for _, entry := range whitelist {
		if e, err := normalizeWebhookHost(entry); err == nil && e == h {
			return true
		}
	}
	return false
}

// parseWebhookURL checks the shape of a webhook address: absolute http or
// https, a host, and no user information (which would leak in logs). An
// IP address with a trailing dot ("127.0.0.1.") is refused: the whitelist
// reads it as the address, but a dialer looks it up as a name, which
// fails, so it could never be delivered.
func parseWebhookURL(raw string) (*url.URL, error) {
	if CheckText(raw, MaxURLLength) != nil { // UTF-8 text without control characters, as every field
		return nil, errBadWebhookURL
	}
	if ContainsCardNumber(raw) { // the address is stored, logged by receivers and shown
		return nil, errCardNumberInText
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Hostname() == "" || u.User != nil || !validPort(u) || dottedIP(u.Hostname()) {
		return nil, errBadWebhookURL
	}
	return u, nil
}

// dottedIP reports whether host is an IP address followed by a dot.
func dottedIP(host string) bool {
	ip, dotted := strings.CutSuffix(host, ".")
	if !dotted {
		return false
	}
	_, err := netip.ParseAddr(ip)
	return err == nil
}

// validPort reports whether u names no port or one from 1 to 65535
// (url.Parse takes "host:", "host:0" and "host:99999").
func validPort(u *url.URL) bool {
	if strings.HasSuffix(u.Host, ":") {
		return false
	}
	p := u.Port()
	if p == "" {
		return true
	}
	n, err := strconv.Atoi(p)
	return err == nil && n >= 1 && n <= 65535
}

// CheckWebhookURL is the whole whitelist rule for one webhook address:
// well formed (parseWebhookURL) and its host on whitelist (hostAllowed).
// A host off the whitelist wraps errNotWhitelisted.
func CheckWebhookURL(raw string, whitelist []string) (*url.URL, error) {
	u, err := parseWebhookURL(raw)
	if err != nil {
		return nil, err
	}
	if !hostAllowed(whitelist, u.Hostname()) {
		return nil, fmt.Errorf("%s: %w", u.Hostname(), errNotWhitelisted)
	}
	return u, nil
}

// normalizeWhitelist is onboarding's rule for a merchant's whitelist:
// every entry normalised, duplicates dropped, and the company webhook's
// host added so that the company webhook is always deliverable. Problems
// are reported per field.
func normalizeWhitelist(companyURL string, entries []string) ([]string, error) {
	f := FieldErrors{}
	out := collectWhitelist(f, companyURL, entries)
	if err := f.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// collectWhitelist is normalizeWhitelist recording its problems in f, for
// a caller that checks other fields too.
func collectWhitelist(f FieldErrors, companyURL string, entries []string) []string {
	var out []string
	add := func(h string) {
		for _, e := range out {
			if e == h {
				return
			}
		}
		out = append(out, h)
	}
	if companyURL != "" {
		u, err := parseWebhookURL(companyURL)
		if err != nil {
			f.Add("webhook.url", err.Error())
		} else if h, err := normalizeWebhookHost(u.Hostname()); err != nil {
			f.Add("webhook.url", err.Error())
		} else {
			add(h)
		}
	}
	for _, entry := range entries {
		h, err := normalizeWebhookHost(entry)
		if err != nil {
			f.Add("webhook.domains", err.Error())
			continue
		}
		add(h)
	}
	return out
}
