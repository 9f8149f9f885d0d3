package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/paylink/paylink"
)

// formBody turns a form body into the JSON object it spells, for
// clients that post forms as Stripe's API takes them and PHP's
// http_build_query writes them: purchase[amount]=10.50&purchase[currency]=AUD
// is {"purchase":{"amount":"10.50","currency":"AUD"}}. A body is read as a
// form when its Content-Type is application/x-www-form-urlencoded and it
// does not start as JSON does (curl -d '{...}' sends JSON under the form
// type), or multipart/form-data (PHP's CURLOPT_POSTFIELDS given an array,
// curl -F), whose fields are read by the same rules. Every value is a
// string, which the lenient reading of numbers and flags accepts. A key
// follows the rules of a JSON key: an empty value is absent, so it hides
// nothing sent beside it; a key given twice with one value is read once,
// and with two values is refused.
func formBody(r *http.Request, raw []byte) ([]byte, error) {
	values, err := formValues(r, raw)
	if values == nil || err != nil {
		return raw, err
	}
	return valuesJSON(values, bodyForm)
}

// formRules name the problems of a form as its source reports them: a
// body's are malformed_json about a "form key", a query's invalid_request
// about a "query parameter".
type formRules struct{ noun, code string }

var (
	bodyForm  = formRules{"form key", paylink.CodeMalformedJSON}
	queryForm = formRules{"query parameter", paylink.CodeInvalidRequest}
)

// refuse is the 400 of a form that spells no object.
func (fr formRules) refuse(msg string) error {
	return paylink.Errorf(paylink.KindInvalid, fr.code, "%s", msg)
}

// sentTwice is the 400 of a form key sent twice with different values;
// its fields name the key as the body path it spells (purchase[amount]
// is purchase.amount), as a JSON body's key sent twice is named.
func (fr formRules) sentTwice(key string) error {
	field := key
	if path, ok := formPath(key); ok {
		field = strings.Join(path, ".")
	}
	return &paylink.Error{Kind: paylink.KindInvalid, Code: fr.code,
		Message: fr.noun + " " + key + " is " + problemSentTwice, Fields: map[string]string{field: problemSentTwice}}
}

// valuesJSON is the JSON object a form's values spell (formBody).
func valuesJSON(values url.Values, fr formRules) ([]byte, error) {
	root := map[string]any{}
	for key, vs := range values {
		v, err := formValue(key, vs, fr)
		if err != nil {
			return nil, err
		}
		if v == "" {
			continue // an empty value is absent, as in a JSON body
		}
		path, ok := formPath(key)
		if !ok {
			return nil, fr.refuse(fr.noun + " " + key + " is not name or name[field]...")
		}
		if err := setPath(root, path, v, fr); err != nil {
			return nil, err
		}
	}
	out, err := json.Marshal(root)
	if err != nil {
		return nil, paylink.Internal("form values", err)
	}
	return out, nil
}

// formValues reads the body's fields when it is a form, nil when it is
// not (JSON, under whatever type).
func formValues(r *http.Request, raw []byte) (url.Values, error) {
	switch mt, params := formType(r); mt {
	case urlencoded:
		if trimmed := bytes.TrimSpace(raw); len(trimmed) == 0 || trimmed[0] == '{' {
			return nil, nil
		}
		values, err := url.ParseQuery(string(raw))
		if err != nil {
			return nil, badForm("the form body does not parse: " + err.Error())
		}
		return values, nil
	case multipartForm:
		return multipartValues(raw, params["boundary"])
	}
	return nil, nil
}

// formValue is the one value of a form key given values vs, "" when it
// has none but empty ones: the last value that is not empty, or a 400
// when two differ (trimmed, as body values are read) or one is not
// UTF-8.
func formValue(key string, vs []string, fr formRules) (string, error) {
	if !utf8.ValidString(key) {
		return "", fr.refuse("the form is not UTF-8") // as a JSON body that is not is refused
	}
	v := ""
	for _, s := range vs {
		switch {
		case !utf8.ValidString(s):
			return "", fr.refuse("the form is not UTF-8")
		case strings.TrimSpace(s) == "":
		case v != "" && strings.TrimSpace(s) != strings.TrimSpace(v):
			return "", fr.sentTwice(key)
		default:
			v = s
		}
	}
	return v, nil
}

// multipartValues reads a multipart/form-data body's fields; a file part
// is refused, since no call takes a file.
func multipartValues(raw []byte, boundary string) (url.Values, error) {
	if boundary == "" {
		return nil, badForm("the multipart/form-data body has no boundary parameter in its Content-Type")
	}
	mr := multipart.NewReader(bytes.NewReader(raw), boundary)
	values := url.Values{}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return values, nil
		}
		if err != nil {
			return nil, badForm("the multipart/form-data body does not parse: " + err.Error())
		}
		name := part.FormName()
		if name == "" || part.FileName() != "" {
			return nil, badForm("the multipart/form-data body has a part that is not a named field (a file or a part without a name): send fields only")
		}
		v, err := io.ReadAll(part)
		if err != nil {
			return nil, badForm("the multipart/form-data body does not parse: " + err.Error())
		}
		values.Add(name, string(v))
	}
}

// The form media types formBody reads.
const (
	urlencoded    = "application/x-www-form-urlencoded"
	multipartForm = "multipart/form-data"
)

// formType is the request's media type (with its parameters) when it is
// one of the form types, "" otherwise. A prefix test spares the JSON
// requests of the hot path a media type parse.
func formType(r *http.Request) (string, map[string]string) {
	ct := r.Header.Get("Content-Type")
	for _, form := range []string{urlencoded, multipartForm} {
		if len(ct) >= len(form) && strings.EqualFold(ct[:len(form)], form) {
			if mt, params, err := mime.ParseMediaType(ct); err == nil && mt == form {
				return mt, params
			}
		}
	}
	return "", nil
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
func setPath(root map[string]any, path []string, v string, fr formRules) error {
	cur := root
	for _, p := range path[:len(path)-1] {
		next, ok := cur[p].(map[string]any)
		if !ok {
			if _, taken := cur[p]; taken {
				return fr.refuse(fr.noun + " " + p + " is both a value and an object")
			}
			next = map[string]any{}
			cur[p] = next
		}
		cur = next
	}
	last := path[len(path)-1]
	if _, isObject := cur[last].(map[string]any); isObject {
		return fr.refuse(fr.noun + " " + last + " is both a value and an object")
	}
	cur[last] = v
	return nil
}

// badForm is the 400 of a form body that spells no object.
func badForm(msg string) error { return bodyForm.refuse(msg) }
