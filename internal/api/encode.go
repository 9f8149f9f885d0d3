package api

import "unicode/utf8"

// The hot responses (transaction token, transaction result, purchase
// status) are appended to one byte slice by hand instead of built as
// maps for encoding/json (issue 14: the maps, their sorting and the
// reflection were most of the encoding cost). Keys are written in the
// sorted order encoding/json gave the maps, so the bytes are unchanged;
// encode_test.go compares them.

// appender is a response that writes its own JSON.
type appender interface {
	appendJSON(b []byte) []byte
}

// object appends a JSON object member by member. Keys are constants
// that need no escaping.
type object struct {
	b    []byte
	more bool // a member was written: the next needs a comma
}

// key starts a member.
func (o *object) key(k string) {
	if o.more {
		o.b = append(o.b, ',')
	}
	o.b = append(o.b, '"')
	o.b = append(o.b, k...)
	o.b = append(o.b, '"', ':')
	o.more = true
}

// open starts a nested object under k ("" for the outermost).
func (o *object) open(k string) {
	if k != "" {
		o.key(k)
	}
	o.b = append(o.b, '{')
	o.more = false
}

// close ends the innermost open object.
func (o *object) close() {
	o.b = append(o.b, '}')
	o.more = true
}

// str writes a string member.
func (o *object) str(k, v string) {
	o.key(k)
	o.b = appendString(o.b, v)
}

// nullable writes a string member, null when v is "".
func (o *object) nullable(k, v string) {
	if v == "" {
		o.raw(k, "null")
		return
	}
	o.str(k, v)
}

// raw writes a member whose value is already JSON (a number, null).
func (o *object) raw(k, v string) {
	o.key(k)
	o.b = append(o.b, v...)
}

// boolean writes a true/false member.
func (o *object) boolean(k string, v bool) {
	if v {
		o.raw(k, "true")
		return
	}
	o.raw(k, "false")
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string exactly as encoding/json's
// Marshal does: <, > and & escaped for HTML, U+2028 and U+2029 escaped,
// invalid UTF-8 replaced by U+FFFD.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			b = appendEscape(b, c)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendEscape appends the escape of an ASCII byte appendString does not
// copy as it is.
func appendEscape(b []byte, c byte) []byte {
	switch c {
	case '\\', '"':
		return append(b, '\\', c)
	case '\b':
		return append(b, '\\', 'b')
	case '\f':
		return append(b, '\\', 'f')
	case '\n':
		return append(b, '\\', 'n')
	case '\r':
		return append(b, '\\', 'r')
	case '\t':
		return append(b, '\\', 't')
	}
	return append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
}
