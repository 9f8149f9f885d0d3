package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/paylink/paylink"
)

// MaxBodyBytes bounds every request body.
const MaxBodyBytes = 64 << 10

// body is a leniently decoded JSON request. Accessors coerce the shapes
// deployed clients send (numbers as strings, integers for strings,
// "true"/"false" for booleans) and record a field error for anything that
// cannot be coerced. Keys whose value is empty are removed when the body is
// parsed (see dropEmpty), so no accessor or handler can tell them from
// absent keys.
type body struct {
	m map[string]any
	f paylink.FieldErrors
}

// readRaw reads a request body within MaxBodyBytes.
func readRaw(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return nil, paylink.Errorf(paylink.KindTooLarge, paylink.CodeBodyTooLarge, "request body is larger than %d bytes", MaxBodyBytes)
	}
	if err != nil {
		return nil, paylink.Errorf(paylink.KindInvalid, paylink.CodeMalformedJSON, "could not read the request body")
	}
	return raw, nil
}

// parseBody decodes raw JSON into a body. It is the fuzzed entry point.
func parseBody(raw []byte) (*body, error) {
	b := &body{m: map[string]any{}, f: paylink.FieldErrors{}}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return b, nil
	}
	if !utf8.Valid(raw) {
		return nil, paylink.Errorf(paylink.KindInvalid, paylink.CodeMalformedJSON, "request body is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, paylink.Errorf(paylink.KindInvalid, paylink.CodeMalformedJSON, "request body is not valid JSON: %s", jsonProblem(err))
	}
	if dec.More() {
		return nil, paylink.Errorf(paylink.KindInvalid, paylink.CodeMalformedJSON, "request body has data after the JSON object")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, paylink.Errorf(paylink.KindInvalid, paylink.CodeMalformedJSON, "request body must be a JSON object")
	}
	dropEmpty(m)
	b.m = m
	return b, nil
}

// dropEmpty is the one rule for the sloppiest deployed clients, which send
// every key of every request object with "" or null for what they do not
// use: such a key is absent. It deletes, in m and every object nested in
// it, each key whose value is null, a string of only white space, or an
// object left empty by the same rule, and reports whether m ended empty.
func dropEmpty(m map[string]any) bool {
	for k, v := range m {
		if isEmpty(v) {
			delete(m, k)
		}
	}
	return len(m) == 0
}

// isEmpty reports whether a decoded JSON value counts as absent; nested
// objects are pruned on the way.
func isEmpty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return strings.TrimSpace(x) == ""
	case map[string]any:
		return dropEmpty(x)
	}
	return false
}

// jsonProblem describes a decoding error without echoing the body.
func jsonProblem(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("syntax error at byte %d", se.Offset)
	}
	return "unexpected end or structure"
}

// lookup follows a dotted path through nested objects.
func (b *body) lookup(path string) (any, bool) {
	var cur any = b.m
	for _, part := range strings.Split(path, ".") {
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = obj[part]; !ok {
			return nil, false
		}
	}
	return cur, cur != nil
}

// first returns the first of several alias paths that is present and the
// path it was found at.
func (b *body) first(paths ...string) (any, string) {
	for _, p := range paths {
		if v, ok := b.lookup(p); ok {
			return v, p
		}
	}
	return nil, paths[0]
}

// str reads a string (numbers and booleans are accepted as their text),
// trimmed, at most max bytes; "" when absent.
func (b *body) str(max int, paths ...string) string {
	v, path := b.first(paths...)
	var s string
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		s = strings.TrimSpace(x)
	case json.Number:
		s = x.String()
	case bool:
		s = strconv.FormatBool(x)
	default:
		b.f.Add(path, "must be a string")
		return ""
	}
	if err := paylink.CheckText(s, max); err != nil {
		b.f.Add(path, err.Error())
		return ""
	}
	return s
}

// need reads a required string.
func (b *body) need(max int, paths ...string) string {
	s := b.str(max, paths...)
	if _, has := b.f[paths[0]]; s == "" && !has {
		b.f.Add(paths[0], "is required")
	}
	return s
}

// boolean reads a flag: true/false, "true"/"false", 1/0; absent is
// false.
func (b *body) boolean(paths ...string) bool {
	v, path := b.first(paths...)
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "true", "1", "yes":
			return true
		case "false", "0", "no":
			return false
		}
	case json.Number:
		switch x.String() {
		case "1":
			return true
		case "0":
			return false
		}
	}
	b.f.Add(path, "must be true or false")
	return false
}

// integer reads a whole number sent as a number or a digit string
// ("07"); ok is false when absent.
func (b *body) integer(path string) (n int, ok bool) {
	v, present := b.lookup(path)
	if !present {
		return 0, false
	}
	var s string
	switch x := v.(type) {
	case json.Number:
		s = x.String()
	case string:
		s = strings.TrimSpace(x)
	default:
		b.f.Add(path, "must be a whole number")
		return 0, false
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || len(s) > 4 {
		b.f.Add(path, "must be a whole number")
		return 0, false
	}
	return n, true
}

// money reads an amount and its currency (paths prefix.amount and
// prefix.currency, or amountPath/currencyPath) exactly.
func (b *body) money(amountPath, currencyPath string) (int64, string) {
	code := strings.ToUpper(b.need(3, currencyPath))
	raw, present := b.lookup(amountPath)
	if !present {
		b.f.Add(amountPath, "is required")
		return 0, code
	}
	var s string
	switch x := raw.(type) {
	case json.Number:
		s = x.String()
	case string:
		s = x
	default:
		b.f.Add(amountPath, "must be a number")
		return 0, code
	}
	cur, ok := paylink.LookupCurrency(code)
	if !ok {
		if _, has := b.f[currencyPath]; !has {
			b.f.Add(currencyPath, "must be a supported ISO 4217 currency code such as AUD")
		}
		return 0, code
	}
	amount, err := paylink.ParseAmount(s, cur)
	if err != nil {
		b.f.Add(amountPath, err.Error())
		return 0, code
	}
	if amount <= 0 {
		b.f.Add(amountPath, "must be greater than zero")
	}
	return amount, code
}

// err returns the collected field errors.
func (b *body) err() error { return b.f.Err() }
