package paylink

import (
	"strings"
	"unicode/utf8"
)

// asciiHost returns a host name with each internationalised label in its
// ASCII form ("xn--" and its Punycode, RFC 3492), lower-cased first, so
// that "Bücher.example" and "xn--bcher-kva.example" compare as the one
// host they are (net/http dials the ASCII form of either). It is not the
// whole of UTS #46: a label is lower-cased, not NFC-normalised or mapped
// (a decomposed "u" and diaeresis, a full-width letter or an ideographic
// full stop stays a different name), so addresses it cannot show to be
// the same are taken as different, never the reverse. A label that cannot
// be encoded is kept as it is.
func asciiHost(host string) string {
	host = strings.ToLower(host)
	if isASCII(host) {
		return host
	}
	labels := strings.Split(host, ".")
	for i, label := range labels {
		if isASCII(label) {
			continue
		}
		if enc, ok := punycode(label); ok {
			labels[i] = "xn--" + enc
		}
	}
	return strings.Join(labels, ".")
}

// isASCII reports whether s holds only ASCII bytes.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// Punycode's parameters (RFC 3492 section 5).
const (
	punyBase        = 36
	punyTMin        = 1
	punyTMax        = 26
	punySkew        = 38
	punyDamp        = 700
	punyInitialBias = 72
	punyInitialN    = 128
)

// punycode encodes label (RFC 3492 section 6.3), without the "xn--"
// prefix; ok is false for invalid UTF-8 or a label too long to encode.
func punycode(label string) (string, bool) {
	if !utf8.ValidString(label) {
		return "", false
	}
	runes := []rune(label)
	out := make([]byte, 0, len(label)+8)
	for _, r := range runes {
		if r < utf8.RuneSelf {
			out = append(out, byte(r))
		}
	}
	basic := len(out)
	if basic > 0 {
		out = append(out, '-')
	}
	n, delta, bias := rune(punyInitialN), 0, punyInitialBias
	for h := basic; h < len(runes); {
		m := rune(utf8.MaxRune + 1)
		for _, r := range runes {
			if r >= n && r < m {
				m = r
			}
		}
		delta += int(m-n) * (h + 1)
		if delta < 0 || len(out) > 255 { // overflow, or far past a DNS label's 63 bytes
			return "", false
		}
		n = m
		for _, r := range runes {
			if r < n {
				delta++
			}
			if r != n {
				continue
			}
			out = appendPunyNumber(out, delta, bias)
			bias = punyAdapt(delta, h+1, h == basic)
			delta = 0
			h++
		}
		delta++
		n++
	}
	return string(out), true
}

// appendPunyNumber appends q as a generalised variable-length integer
// under bias (RFC 3492 section 3.3).
func appendPunyNumber(out []byte, q, bias int) []byte {
	for k := punyBase; ; k += punyBase {
		t := min(max(k-bias, punyTMin), punyTMax)
		if q < t {
			return append(out, punyDigit(q))
		}
		out = append(out, punyDigit(t+(q-t)%(punyBase-t)))
		q = (q - t) / (punyBase - t)
	}
}

// punyAdapt is Punycode's bias adaptation (RFC 3492 section 6.1).
func punyAdapt(delta, points int, first bool) int {
	if first {
		delta /= punyDamp
	} else {
		delta /= 2
	}
	delta += delta / points
	k := 0
	for delta > ((punyBase-punyTMin)*punyTMax)/2 {
		delta /= punyBase - punyTMin
		k += punyBase
	}
	return k + (punyBase-punyTMin+1)*delta/(delta+punySkew)
}

// punyDigit is the lower-case character of Punycode digit d (0 to 35).
func punyDigit(d int) byte {
	if d < 26 {
		return byte('a' + d)
	}
	return byte('0' + d - 26)
}
