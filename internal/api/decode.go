package api

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/paylink/paylink"
)

// MaxBodyBytes bounds every request body.
const MaxBodyBytes = 64 << 10

// body is a leniently decoded JSON request. Accessors coerce the shapes
// deployed clients send (numbers as strings, integers for strings,
// "true"/"false" for booleans) and record a field error for anything that
// cannot be coerced. Keys whose value is empty are marked absent when the
// body is parsed (see parser.member and kept), so no accessor or handler
// can tell them from absent keys.
//
// The members are one flat slice in document order rather than nested
// maps (issue 14: the maps were most of the decoding cost): an object's
// members follow it, up to its end. Keys and values without escapes are
// slices of one copy of the body, so a typical body costs three
// allocations (that copy, the slice and the body).
type body struct {
	v []value
	f paylink.FieldErrors // nil until the first problem
	// cased is set when a key holds an upper-case letter: only then
	// does a key missing as spelled get looked up in snake_case
	// (keys.go).
	cased bool
	// sent maps a field's first name to the alias it was read under
	// ("customer.email" to "customer.customer_email"), so that a problem
	// the Service finds names the field as the client sent it (asSent);
	// nil until an alias is read.
	sent map[string]string
}

// kind is the JSON type of a member's value.
type kind uint8

const (
	kindAbsent kind = iota // null, a blank string, or an object left empty: as if not sent
	kindString
	kindNumber
	kindBool
	kindObject
	kindArray
)

// value is one object member. text is a string's decoded text, a
// number's literal (as json.Number kept it), "true" or "false", or an
// array's JSON (no accessor reads into arrays). An object's members are
// the values after it up to end; any other value ends at its index + 1.
type value struct {
	key  string
	text string
	end  int32
	kind kind
}

// readRaw reads a request body within MaxBodyBytes, without a leading
// byte order mark. A gzipped body (Content-Encoding: gzip) is read
// decompressed, and MaxBodyBytes bounds what it decompresses to as well
// as what was sent, so a small body that inflates to gigabytes is a 413
// after 64 KiB; any other encoding is refused, unread (415), rather than
// read as the bytes it would decode to.
func readRaw(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	sent := http.MaxBytesReader(w, r.Body, MaxBodyBytes)
	gzipped, err := gzipEncoded(r.Header)
	if err != nil {
		return nil, err
	}
	var raw []byte
	if gzipped {
		raw, err = gunzip(sent)
	} else {
		raw, err = io.ReadAll(sent)
	}
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig) || len(raw) > MaxBodyBytes:
		return nil, paylink.Errorf(paylink.KindTooLarge, paylink.CodeBodyTooLarge, "request body is larger than %d bytes", MaxBodyBytes)
	case err != nil && gzipped:
		return nil, paylink.Errorf(paylink.KindInvalid, paylink.CodeMalformedJSON, "request body is not valid gzip (Content-Encoding: gzip)")
	case err != nil:
		return nil, paylink.Errorf(paylink.KindInvalid, paylink.CodeMalformedJSON, "could not read the request body")
	}
	return bytes.TrimPrefix(raw, []byte(utf8BOM)), nil
}

// gzipEncoded reads Content-Encoding: true for gzip (or x-gzip), false
// for none or identity, and a 415 naming anything else (br, deflate, or
// gzip twice).
func gzipEncoded(h http.Header) (bool, error) {
	var codings []string
	for _, v := range h.Values("Content-Encoding") {
		for c := range strings.SplitSeq(v, ",") {
			if c = strings.ToLower(strings.TrimSpace(c)); c != "" && c != "identity" {
				codings = append(codings, c)
			}
		}
	}
	switch {
	case len(codings) == 0:
		return false, nil
	case len(codings) == 1 && (codings[0] == "gzip" || codings[0] == "x-gzip"):
		return true, nil
	}
	named := strings.ToValidUTF8(strings.Join(codings, ", "), "?")
	if len(named) > 64 {
		named = named[:64] + "..."
	}
	return false, paylink.Errorf(paylink.KindUnsupportedMedia, paylink.CodeUnsupportedMediaType,
		"Content-Encoding %q is not supported: send the body uncompressed or gzip-compressed", named)
}

// gunzip reads a gzip stream up to one byte past MaxBodyBytes: what it
// inflates to beyond that is never read. An empty body is empty.
func gunzip(sent io.Reader) ([]byte, error) {
	zr, err := gzip.NewReader(sent)
	if errors.Is(err, io.EOF) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	return io.ReadAll(io.LimitReader(zr, MaxBodyBytes+1))
}

// utf8BOM is the byte order mark some tools write before UTF-8 text;
// RFC 8259 lets a parser ignore it, and readRaw drops it.
const utf8BOM = "\ufeff"

// parseBody decodes raw JSON into a body. It is the fuzzed entry point.
// It accepts and rejects exactly what encoding/json's Decoder (with
// UseNumber) did before, with the same messages and byte offsets, except
// that nothing may follow the object but white space (encoding/json's
// More let a stray "}" or "]" and anything after it pass);
// decode_test.go compares the two.
func parseBody(raw []byte) (*body, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return &body{}, nil
	}
	if !utf8.Valid(raw) {
		return nil, paylink.Errorf(paylink.KindInvalid, paylink.CodeMalformedJSON, "request body is not valid UTF-8")
	}
	src := string(raw)
	// At most one member per colon: one allocation for typical bodies,
	// a bounded first one for hostile ones.
	p := parser{src: src, v: make([]value, 0, min(strings.Count(src, ":"), 64))}
	isObject := p.src[0] == '{'
	var ok bool
	if isObject {
		_, ok = p.object(1, true)
	} else {
		ok = p.member("", 0, false)
	}
	if !ok {
		return nil, p.syntaxError()
	}
	p.space()
	if p.i < len(p.src) {
		return nil, paylink.Errorf(paylink.KindInvalid, paylink.CodeMalformedJSON, "request body has data after the JSON object")
	}
	if !isObject {
		return nil, paylink.Errorf(paylink.KindInvalid, paylink.CodeMalformedJSON, "request body must be a JSON object")
	}
	return &body{v: p.v, cased: p.cased}, nil
}

// maxDepth is encoding/json's nesting limit for objects and arrays.
const maxDepth = 10000

// parser is a single-pass JSON scanner that records the members of
// objects outside arrays. Every method that fails leaves i at the byte
// that cannot continue a valid document (len(src) at an early end), the
// byte encoding/json's scanner reports.
type parser struct {
	src   string
	i     int
	v     []value
	cased bool // a key holds an upper-case letter
}

// syntaxError describes where parsing stopped without echoing the body.
func (p *parser) syntaxError() error {
	problem := "unexpected end or structure"
	if p.i < len(p.src) {
		problem = "syntax error at byte " + strconv.Itoa(p.i+1)
	}
	if formLike(p.src) {
		problem += " (it reads as a form: send a form with Content-Type: application/x-www-form-urlencoded)"
	}
	return paylink.Errorf(paylink.KindInvalid, paylink.CodeMalformedJSON, "request body is not valid JSON: %s", problem)
}

// formLike reports whether a body read as JSON (one sent without the
// form's content type, as a form sent with it is read before) looks like
// a form: key=value, not JSON's start.
func formLike(src string) bool {
	key, _, ok := strings.Cut(src, "=")
	return ok && key != "" && !strings.ContainsAny(key[:1], `{["`)
}

// space skips JSON white space.
func (p *parser) space() {
	for p.i < len(p.src) {
		switch p.src[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// at reports whether the next byte is c.
func (p *parser) at(c byte) bool { return p.i < len(p.src) && p.src[p.i] == c }

// object parses the object at i, appending its members when rec, and
// reports whether it keeps a member after the empty-is-absent rule.
func (p *parser) object(depth int, rec bool) (keeps, ok bool) {
	if depth > maxDepth {
		return false, false
	}
	p.i++
	first := len(p.v)
	p.space()
	if p.at('}') {
		p.i++
		return false, true
	}
	for {
		p.space()
		if !p.at('"') {
			return false, false
		}
		key, ok := p.str()
		if !ok {
			return false, false
		}
		p.space()
		if !p.at(':') {
			return false, false
		}
		p.i++
		p.cased = p.cased || hasUpper(key)
		if !p.member(key, depth, rec) {
			return false, false
		}
		p.space()
		switch {
		case p.at(','):
			p.i++
		case p.at('}'):
			p.i++
			return rec && kept(p.v, first), true
		default:
			return false, false
		}
	}
}

// array parses (and only checks) the array at i.
func (p *parser) array(depth int) bool {
	if depth > maxDepth {
		return false
	}
	p.i++
	p.space()
	if p.at(']') {
		p.i++
		return true
	}
	for {
		if !p.member("", depth, false) {
			return false
		}
		p.space()
		switch {
		case p.at(','):
			p.i++
		case p.at(']'):
			p.i++
			return true
		default:
			return false
		}
	}
}

// member parses the value at i (after white space), recording it under
// key when rec. Null, blank strings and objects left empty are recorded
// as absent, so that they still replace an earlier duplicate key.
func (p *parser) member(key string, depth int, rec bool) bool {
	p.space()
	if p.i >= len(p.src) {
		return false
	}
	start := p.i
	switch c := p.src[p.i]; {
	case c == '{':
		at := len(p.v)
		if rec {
			p.v = append(p.v, value{key: key, kind: kindObject})
		}
		keeps, ok := p.object(depth+1, rec)
		if ok && rec {
			if !keeps {
				p.v = p.v[:at+1]
				p.v[at].kind = kindAbsent
			}
			p.v[at].end = int32(len(p.v))
		}
		return ok
	case c == '[':
		return p.array(depth+1) && p.add(rec, key, kindArray, p.src[start:p.i])
	case c == '"':
		s, ok := p.str()
		k := kindString
		if strings.TrimSpace(s) == "" {
			k = kindAbsent
		}
		return ok && p.add(rec, key, k, s)
	case c == 't':
		return p.literal("true") && p.add(rec, key, kindBool, "true")
	case c == 'f':
		return p.literal("false") && p.add(rec, key, kindBool, "false")
	case c == 'n':
		return p.literal("null") && p.add(rec, key, kindAbsent, "")
	case c == '-' || isDigit(c):
		return p.number() && p.add(rec, key, kindNumber, p.src[start:p.i])
	}
	return false
}

// add records a scalar or array member when rec; it always succeeds.
func (p *parser) add(rec bool, key string, k kind, text string) bool {
	if rec {
		p.v = append(p.v, value{key: key, text: text, kind: k, end: int32(len(p.v) + 1)})
	}
	return true
}

// literal consumes true, false or null.
func (p *parser) literal(word string) bool {
	for j := 0; j < len(word); j++ {
		if !p.at(word[j]) {
			return false
		}
		p.i++
	}
	return true
}

// number consumes a JSON number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (p *parser) number() bool {
	if p.at('-') {
		p.i++
	}
	switch {
	case p.at('0'):
		p.i++
	case p.digits() == 0:
		return false
	}
	if p.at('.') {
		p.i++
		if p.digits() == 0 {
			return false
		}
	}
	if p.at('e') || p.at('E') {
		p.i++
		if p.at('+') || p.at('-') {
			p.i++
		}
		if p.digits() == 0 {
			return false
		}
	}
	return true
}

// digits consumes a run of digits and returns its length.
func (p *parser) digits() int {
	start := p.i
	for p.i < len(p.src) && isDigit(p.src[p.i]) {
		p.i++
	}
	return p.i - start
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// str consumes a string and returns its decoded text: a slice of src
// unless it has escapes.
func (p *parser) str() (string, bool) {
	p.i++
	start, escaped := p.i, false
	for p.i < len(p.src) {
		c := p.src[p.i]
		if c >= 0x20 && c != '"' && c != '\\' {
			p.i++
			continue
		}
		switch {
		case c == '"':
			s := p.src[start:p.i]
			p.i++
			if escaped {
				s = unescape(s)
			}
			return s, true
		case c == '\\':
			if !p.escape() {
				return "", false
			}
			escaped = true
		default: // a control byte
			return "", false
		}
	}
	return "", false
}

// escape consumes one backslash escape.
func (p *parser) escape() bool {
	p.i++
	if p.i >= len(p.src) {
		return false
	}
	switch p.src[p.i] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		p.i++
		return true
	case 'u':
		p.i++
		for range 4 {
			if p.i >= len(p.src) || hexValue(p.src[p.i]) < 0 {
				return false
			}
			p.i++
		}
		return true
	}
	return false
}

// unescape decodes the escapes of a string str has checked, as
// encoding/json does: half a surrogate pair without its other half
// becomes U+FFFD.
func unescape(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		if s[i] != '\\' {
			out = append(out, s[i])
			i++
			continue
		}
		c := s[i+1]
		i += 2
		switch c {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r := hex4(s[i:])
			i += 4
			if utf16.IsSurrogate(r) {
				low := rune(-1)
				if strings.HasPrefix(s[i:], `\u`) {
					low = hex4(s[i+2:])
				}
				if r = utf16.DecodeRune(r, low); r != unicode.ReplacementChar {
					i += 6
				}
			}
			out = utf8.AppendRune(out, r)
		default: // '"', '\\', '/'
			out = append(out, c)
		}
	}
	return string(out)
}

// hex4 is the value of four hex digits str has checked.
func hex4(s string) rune {
	var r rune
	for j := range 4 {
		r = r<<4 | rune(hexValue(s[j]))
	}
	return r
}

// hexValue is a hex digit's value, -1 for another byte.
func hexValue(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// kept reports whether the object whose members are v[first:] keeps one
// under the empty-is-absent rule: a member that is not absent. An empty
// member is as if not sent, so it never replaces an earlier duplicate.
func kept(v []value, first int) bool {
	for j := first; j < len(v); j = int(v[j].end) {
		if v[j].kind != kindAbsent {
			return true
		}
	}
	return false
}

// lookup follows a dotted path through nested objects; nil when absent.
// Empty members are as if not sent: {"hold": true, "hold": null} is a
// hold. Among duplicate keys the last counts, and two of them with
// different values ({"amount": "1.00", "amount": "1000.00"}) are a field
// error: a proxy or a log that reads the first would see another payment
// than paylink. A member on the path that is present but not an object
// ("customer": "bob") is recorded as a field error rather than read as
// absent.
func (b *body) lookup(path string) *value {
	lo, hi, full := 0, len(b.v), path
	for {
		key, rest, nested := strings.Cut(path, ".")
		found := -1
		for j := lo; j < hi; j = int(b.v[j].end) {
			if b.v[j].key == key && b.v[j].kind != kindAbsent {
				if found >= 0 && conflicting(&b.v[found], &b.v[j]) {
					b.fail(full[:len(full)-len(path)]+key, twice(&b.v[j], problemSentTwice))
				}
				found = j
			}
		}
		if found < 0 && b.cased {
			found = b.casedMember(lo, hi, key)
		}
		if found < 0 {
			return nil
		}
		if b.cased {
			b.checkSpellings(lo, hi, found, full[:len(full)-len(path)])
		}
		if !nested {
			return &b.v[found]
		}
		if b.v[found].kind != kindObject {
			b.fail(full[:len(full)-len(rest)-1], "must be an object")
			return nil
		}
		lo, hi, path = found+1, int(b.v[found].end), rest
	}
}

// peek is lookup for a reader the handler may not share (the idempotency
// fingerprint): a problem it meets on the way is left for the handler to
// find, or not, when it reads the path itself.
func (b *body) peek(path string) *value {
	f := b.f
	b.f = nil
	defer func() { b.f = f }()
	return b.lookup(path)
}

// first returns the first of several alias paths that is present and the
// path it was found at. A later alias holding another value is refused,
// naming it, as two spellings of one key are (checkSpellings): which one
// a client meant is not paylink's to guess, and a hold and a charge in
// full differ by one spelling of should_service_apply_pre_authorisation.
func (b *body) first(paths ...string) (*value, string) {
	return b.firstAgreeing(conflicting, paths...)
}

// firstAgreeing is first with its own test of two values that differ.
func (b *body) firstAgreeing(differ func(a, b *value) bool, paths ...string) (*value, string) {
	for i, p := range paths {
		v := b.lookup(p)
		if v == nil {
			continue
		}
		for _, alias := range paths[i+1:] {
			if w := b.lookup(alias); w != nil && alias != p && differ(w, v) {
				b.fail(alias, twice(w, "differs from the value sent as "+p))
			}
		}
		if i > 0 {
			b.readAs(paths[0], p)
		}
		return v, p
	}
	return nil, paths[0]
}

// fail records a problem for a field unless one is already recorded.
func (b *body) fail(path, problem string) {
	if b.f == nil {
		b.f = paylink.FieldErrors{}
	}
	b.f.Add(path, problem)
}

// str reads a string (numbers and booleans are accepted as their text),
// trimmed, at most max bytes; "" when absent.
func (b *body) str(max int, paths ...string) string {
	v, path := b.first(paths...)
	if v == nil {
		return ""
	}
	var s string
	switch v.kind {
	case kindString:
		s = strings.TrimSpace(v.text)
	case kindNumber, kindBool:
		s = v.text
	default:
		b.fail(path, "must be a string")
		return ""
	}
	if err := paylink.CheckText(s, max); err != nil {
		b.fail(path, err.Error())
		return ""
	}
	// A copy: the values are slices of the whole body, and a string kept
	// by whoever is handed it (the sandbox acquirer remembers operations
	// for inquiries) would otherwise keep the body alive with it (a load
	// run found 58 MB of bodies held that way).
	return strings.Clone(s)
}

// need reads a required string.
func (b *body) need(max int, paths ...string) string {
	s := b.str(max, paths...)
	if _, has := b.f[paths[0]]; s == "" && !has {
		b.fail(paths[0], "is required")
	}
	return s
}

// boolean reads a flag: true/false, "true"/"false", 1/0; absent is
// false.
func (b *body) boolean(paths ...string) bool {
	v, path := b.firstAgreeing(flagsDiffer, paths...)
	if v == nil {
		return false
	}
	on, ok := flag(v)
	if !ok {
		b.fail(path, "must be true or false")
	}
	return on
}

// flag reads a flag as boolean does; ok is false for anything else.
func flag(v *value) (on, ok bool) {
	switch v.kind {
	case kindBool:
		return v.text == "true", true
	case kindString:
		switch strings.ToLower(strings.TrimSpace(v.text)) {
		case "true", "1", "yes":
			return true, true
		case "false", "0", "no":
			return false, true
		}
	case kindNumber:
		switch v.text {
		case "1":
			return true, true
		case "0":
			return false, true
		}
	}
	return false, false
}

// flagsDiffer is conflicting for flags: true, "TRUE", 1 and "yes" are
// one value under two names.
func flagsDiffer(a, b *value) bool {
	x, okA := flag(a)
	y, okB := flag(b)
	if okA && okB {
		return x != y
	}
	return conflicting(a, b)
}

// integer reads a whole number sent as a number or a digit string
// ("07"); ok is false when absent.
func (b *body) integer(path string) (n int, ok bool) {
	v := b.lookup(path)
	if v == nil {
		return 0, false
	}
	var s string
	switch v.kind {
	case kindNumber:
		s = v.text
	case kindString:
		s = strings.TrimSpace(v.text)
	default:
		b.fail(path, "must be a whole number")
		return 0, false
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || len(s) > 4 {
		b.fail(path, "must be a whole number")
		return 0, false
	}
	return n, true
}

// money reads an amount and its currency (paths prefix.amount and
// prefix.currency, or amountPath/currencyPath) exactly, up to MaxAmount.
func (b *body) money(amountPath, currencyPath string) (int64, string) {
	return b.moneyWith(paylink.ParseAmount, amountPath, currencyPath)
}

// moneyWith is money with parse reading the amount (paylink.ParseTotal
// for a refund, which may be of a payment's whole total).
func (b *body) moneyWith(parse func(string, paylink.Currency) (int64, error), amountPath, currencyPath string) (int64, string) {
	code := strings.ToUpper(b.need(3, currencyPath))
	v := b.lookup(amountPath)
	if v == nil {
		b.fail(amountPath, "is required")
		return 0, code
	}
	if v.kind != kindNumber && v.kind != kindString {
		b.fail(amountPath, "must be a number")
		return 0, code
	}
	cur, ok := paylink.LookupCurrency(code)
	if !ok {
		if _, has := b.f[currencyPath]; !has {
			b.fail(currencyPath, "must be a supported ISO 4217 currency code such as AUD")
		}
		return 0, code
	}
	amount, err := parse(v.text, cur)
	if err != nil {
		b.fail(amountPath, err.Error())
		return 0, code
	}
	if amount <= 0 {
		b.fail(amountPath, "must be greater than zero")
	}
	return amount, code
}

// err returns the collected field errors.
func (b *body) err() error { return b.f.Err() }

// pathValue reads a reference from the request's path, trimmed of white
// space as every string in a body is: an invoice number sent padded
// ("INV 7 ") is stored as "INV 7", and a look-up by the padded value
// finds it. A value holding a card number as free text is refused when
// stored (paylink.ContainsCardNumber) is masked: no reference or invoice
// number holds one, so it names nothing, and masked it never reaches the
// database's statements, the logs or an error message. Digits a letter
// touches (a UUID's, "INV4111111111111111") are stored, and looked up.
func pathValue(r *http.Request, name string) string {
	return paylink.MaskIfCardNumber(strings.TrimSpace(r.PathValue(name)))
}
