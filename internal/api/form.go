package api

import (
	"bytes"
	"encoding/json"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/paylink/paylink"
)

// formBody turns a form-encoded body into the JSON object it spells, for
// clients that post forms as Stripe's API takes them and PHP's
// http_build_query writes them: purchase[amount]=10.50&purchase[currency]=AUD
// is {"purchase":{"amount":"10.50","currency":"AUD"}}. A body is read as a
// form only when its Content-Type says so and it does not start as JSON
// does (curl -d '{...}' sends JSON under the form type). Every value is a
// string, which the lenient reading of numbers and flags accepts; a key
// given twice with one value is read once, and with two values is
// refused, as in a JSON body.
func formBody(r *http.Request, raw []byte) ([]byte, error) {
	if !isForm(r) {
		return raw, nil
	}
	if trimmed := bytes.TrimSpace(raw); len(trimmed) == 0 || trimmed[0] == '{' {
		return raw, nil
	}
	values, err := url.ParseQuery(string(raw))
	if err != nil {
		return nil, badForm("the form body does not parse: " + err.Error())
	}
	root := map[string]any{}
	for key, vs := range values {
		if !utf8.ValidString(key) || !utf8.ValidString(vs[len(vs)-1]) {
			return nil, badForm("the form body is not UTF-8") // as a JSON body that is not is refused
		}
		path, ok := formPath(key)
		if !ok {
			return nil, badForm("form key " + strings.ToValidUTF8(key, "?") + " is not name or name[field]...")
		}
		if differ(vs) {
			return nil, badForm("form key " + strings.ToValidUTF8(key, "?") + " is sent twice with different values")
		}
		if err := setPath(root, path, vs[len(vs)-1]); err != nil {
			return nil, err
		}
	}
	out, err := json.Marshal(root)
	if err != nil {
		return nil, paylink.Internal("form body", err)
	}
	return out, nil
}

// isForm reports whether the request says its body is form-encoded. A
// prefix test spares the JSON requests of the hot path a media type
// parse.
func isForm(r *http.Request) bool {
	const form = "application/x-www-form-urlencoded"
	ct := r.Header.Get("Content-Type")
	if len(ct) < len(form) || !strings.EqualFold(ct[:len(form)], form) {
		return false
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == form
}

// formPath splits a form key into its path: "purchase[amount]" is
// [purchase amount]; "a[]" (an array) and unbalanced brackets are not
// paths.
func formPath(key string) ([]string, bool) {
	name, rest, nested := strings.Cut(key, "[")
	if name == "" || strings.Contains(name, "]") {
		return nil, false
	}
	path := []string{name}
	for nested {
		var field string
		field, rest, nested = strings.Cut(rest, "]")
		if !nested || field == "" || strings.Contains(field, "[") {
			return nil, false
		}
		path = append(path, field)
		if rest == "" {
			return path, true
		}
		if rest[0] != '[' {
			return nil, false
		}
		rest, nested = rest[1:], true
	}
	return path, true
}

// setPath sets a string at path in root, making objects on the way; a
// key that is both a value and an object (a=1&a[b]=2) is refused.
func setPath(root map[string]any, path []string, v string) error {
	cur := root
	for _, p := range path[:len(path)-1] {
		next, ok := cur[p].(map[string]any)
		if !ok {
			if _, taken := cur[p]; taken {
				return badForm("form key " + p + " is both a value and an object")
			}
			next = map[string]any{}
			cur[p] = next
		}
		cur = next
	}
	last := path[len(path)-1]
	if _, isObject := cur[last].(map[string]any); isObject {
		return badForm("form key " + last + " is both a value and an object")
	}
	cur[last] = v
	return nil
}

// badForm is the 400 of a form body that spells no object.
func badForm(msg string) error {
	return paylink.Errorf(paylink.KindInvalid, paylink.CodeMalformedJSON, "%s", msg)
}

// differ reports whether a form key's values are not all one value, once
// trimmed as body values are.
func differ(vs []string) bool {
	for _, v := range vs[1:] {
		if strings.TrimSpace(v) != strings.TrimSpace(vs[0]) {
			return true
		}
	}
	return false
}
