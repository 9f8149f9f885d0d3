package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/paylink/paylink"
)

func TestBodyCoercions(t *testing.T) {
	b, err := parseBody([]byte(`{"a":{"s":" x ","n":7,"f":1.5,"t":"true","e":"","z":null,"i":"07","o":{"k":1}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := b.str(10, "a.s"); got != "x" {
		t.Errorf("trimmed string: got %q", got)
	}
	if got := b.str(10, "a.n"); got != "7" {
		t.Errorf("number as string: got %q", got)
	}
	if got := b.boolean("a.t"); !got {
		t.Errorf(`"true": got false`)
	}
	if got := b.boolean("a.e"); got {
		t.Errorf(`"" as boolean: got true`)
	}
	if got := b.str(10, "a.z"); got != "" {
		t.Errorf("null: got %q", got)
	}
	if n, ok := b.integer("a.i"); !ok || n != 7 {
		t.Errorf(`"07": got %d, %v`, n, ok)
	}
	if got := b.str(10, "a.e", "a.s"); got != "x" {
		t.Errorf("alias after empty value: got %q", got)
	}
	if len(b.f) != 0 {
		t.Fatalf("unexpected field errors %v", b.f)
	}
	b.str(10, "a.o")
	b.integer("a.f")
	b.str(10, "a.s.deeper", "a.n.other")
	if len(b.f) != 4 || b.f["a.s"] != "must be an object" || b.f["a.n"] != "must be an object" {
		t.Errorf("got field errors %v, want four (object as string, fraction as integer, a.s and a.n not objects)", b.f)
	}
}

// TestEmptyValuesAreAbsent checks the one decoding rule: a key whose
// value is "", white space, null or an object of such keys is absent, at
// every depth; other values stay.
func TestEmptyValuesAreAbsent(t *testing.T) {
	tests := []struct{ raw, want string }{
		{`{"a":"","b":null,"c":"  ","d":"x"}`, `{"d":"x"}`},
		{`{"card":{"token":"tok","number":"","expiry_month":null,"cvc":" "}}`, `{"card":{"token":"tok"}}`},
		{`{"metadata":{"channel":"","merchant_hash":null},"customer":{}}`, `{}`},
		{`{"a":{"b":{"c":""}},"e":{"f":{"g":0}}}`, `{"e":{"f":{"g":0}}}`},
		{`{"f":false,"n":0,"l":[""]}`, `{"f":false,"l":[""],"n":0}`},
		{`{"h":true,"h":null,"o":{"x":1},"o":{"y":""},"s":"a","s":" "}`, `{"h":true,"o":{"x":1},"s":"a"}`},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			b, err := parseBody([]byte(tt.raw))
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(b.tree(0, len(b.v)))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func FuzzParseBody(f *testing.F) {
	for _, s := range []string{`{}`, `{"purchase":{"amount":"10.5","currency":"AUD"}}`, `[]`, `{"a":`, `{"a":1e309}`, "\xff"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		b, err := parseBody(raw)
		if err != nil {
			return
		}
		// Every accessor must cope with any shape without panicking.
		b.str(128, "purchase.invoice_number", "a")
		b.need(128, "token.company_token")
		b.boolean("purchase.should_service_apply_surcharge")
		b.integer("card.expiry_month")
		amount, _ := b.money("purchase.amount", "purchase.currency")
		if amount < 0 && len(b.f) == 0 {
			t.Fatalf("negative amount %d accepted", amount)
		}
		b.customer()
		b.card(true)
		if err := b.err(); err != nil && strings.TrimSpace(err.Error()) == "" {
			t.Fatalf("field errors without a message: %v", b.f)
		}
	})
}

// tree rebuilds the members v[lo:hi] as a map (numbers as json.Number),
// the empty-is-absent rule applied: an empty member is skipped, never
// replacing an earlier duplicate.
func (b *body) tree(lo, hi int) map[string]any {
	m := map[string]any{}
	for j := lo; j < hi; j = int(b.v[j].end) {
		if b.v[j].kind != kindAbsent {
			m[b.v[j].key] = b.any(j)
		}
	}
	return m
}

// any is the member at j as encoding/json would have decoded it.
func (b *body) any(j int) any {
	v := b.v[j]
	switch v.kind {
	case kindString:
		return v.text
	case kindNumber:
		return json.Number(v.text)
	case kindBool:
		return v.text == "true"
	case kindObject:
		return b.tree(j+1, int(v.end))
	case kindArray:
		var out any
		dec := json.NewDecoder(strings.NewReader(v.text))
		dec.UseNumber()
		if err := dec.Decode(&out); err != nil {
			panic(err)
		}
		return out
	}
	return nil
}

// referenceParse is the decoder before issue 14, encoding/json, with
// later rules: nothing but white space may follow the object, a body
// that does not parse and reads as a form says how to send a form, and
// an empty member (null, a blank string, an object left empty), at any depth
// outside arrays, is as if not sent, so it never replaces an earlier
// duplicate. The new decoder must accept, reject and describe exactly as
// it does.
func referenceParse(raw []byte) (map[string]any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return map[string]any{}, nil
	}
	if !utf8.Valid(raw) {
		return nil, paylink.Errorf(paylink.KindInvalid, paylink.CodeMalformedJSON, "request body is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		problem := "unexpected end or structure"
		var se *json.SyntaxError
		if errors.As(err, &se) {
			problem = fmt.Sprintf("syntax error at byte %d", se.Offset)
		}
		if eq := bytes.IndexByte(raw, '='); eq > 0 && raw[0] != '{' && raw[0] != '[' && raw[0] != '"' {
			problem += " (it reads as a form: send a form with Content-Type: application/x-www-form-urlencoded)"
		}
		return nil, paylink.Errorf(paylink.KindInvalid, paylink.CodeMalformedJSON, "request body is not valid JSON: %s", problem)
	}
	if rest := bytes.TrimLeft(raw[dec.InputOffset():], " \t\n\r"); len(rest) > 0 {
		return nil, paylink.Errorf(paylink.KindInvalid, paylink.CodeMalformedJSON, "request body has data after the JSON object")
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, paylink.Errorf(paylink.KindInvalid, paylink.CodeMalformedJSON, "request body must be a JSON object")
	}
	dec = json.NewDecoder(bytes.NewReader(raw)) // valid: read again, member by member
	dec.UseNumber()
	dec.Token()
	return referenceObject(dec), nil
}

// referenceObject reads an object's members after its "{", skipping
// empty ones.
func referenceObject(dec *json.Decoder) map[string]any {
	m := map[string]any{}
	for dec.More() {
		key, _ := dec.Token()
		tok, _ := dec.Token()
		var v any
		if tok == json.Delim('{') {
			sub := referenceObject(dec)
			if len(sub) == 0 {
				continue
			}
			v = sub
		} else if v = referenceAny(dec, tok); referenceEmpty(v) {
			continue
		}
		m[key.(string)] = v
	}
	dec.Token()
	return m
}

// referenceAny reads the value that starts with tok as encoding/json
// decodes it into any: inside arrays nothing is skipped.
func referenceAny(dec *json.Decoder, tok json.Token) any {
	switch tok {
	case json.Delim('{'):
		m := map[string]any{}
		for dec.More() {
			key, _ := dec.Token()
			next, _ := dec.Token()
			m[key.(string)] = referenceAny(dec, next)
		}
		dec.Token()
		return m
	case json.Delim('['):
		out := []any{}
		for dec.More() {
			next, _ := dec.Token()
			out = append(out, referenceAny(dec, next))
		}
		dec.Token()
		return out
	}
	return tok
}

// referenceEmpty reports whether a scalar is empty: null or blank.
func referenceEmpty(v any) bool {
	s, isString := v.(string)
	return v == nil || isString && strings.TrimSpace(s) == ""
}

// referenceLookup is the old dotted-path lookup.
func referenceLookup(m map[string]any, path string) any {
	var cur any = m
	for _, part := range strings.Split(path, ".") {
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = obj[part]
	}
	return cur
}

// paths lists the dotted path of every member of m down to depth
// levels (the deepest seeds would otherwise cost the fuzzer quadratic
// time in path building alone).
func paths(prefix string, m map[string]any, depth int) []string {
	var out []string
	for k, v := range m {
		out = append(out, prefix+k)
		if sub, ok := v.(map[string]any); ok && depth > 1 {
			out = append(out, paths(prefix+k+".", sub, depth-1)...)
		}
	}
	return out
}

// decodeSeeds are bodies at the edges of the decoder: escapes, duplicate
// keys, empty values at depth, numbers, nesting, trailing bytes and
// every kind of syntax error.
var decodeSeeds = []string{
	`{}`, ` {"a":1} `, `{"purchase":{"amount":"10.5","currency":"AUD"}}`, `[]`, `{"a":`, `{"a":1e309}`, "\xff",
	`{"a":"x","a":""}`, `{"a":"x","a":null,"b":{"c":1},"b":{}}`, `{"a":{"b":1},"a":{"c":2}}`, `{"a":{"b":"x","b":null}}`, `{"a":{"b":{}},"c":[{}]}`,
	`{"a":"\u00e9\/\n\"\\","\u0062":"\ud83d\ude00","c":"\ud800","d":"\ud800\u0041","e":"\udc00\ud800"}`,
	`{"a.b":"x","a":{"b":"y"}}`, `{"n":-0.5e+10,"m":0,"o":[1,"",null,{"x":""}],"t":true,"f":false}`,
	`{"a":01}`, `{"a":-}`, `{"a":1.}`, `{"a":1e}`, `{"a":.5}`, `{"a":tru}`, `{"a":nul}`, `{"a":"\x"}`,
	`{"a":"\u12g4"}`, "{\"a\":\"\t\"}", `{"a":1,}`, `{,}`, `{"a" 1}`, `{"a":1}}`, `{"a":1}]`, `{"a":1} x`,
	`{"a":1}{}`, `"str"`, `123`, `123x`, `null`, `nullx`, `[1,2`, `[1,]`, `tru`, "\v{}\v", "{}\v}",
	`{"":"","":1}`, `{"a":{"x":1,"y":"","x":" "}}`, strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	`{"a":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `}`,
	`{"a":` + strings.Repeat("{\"b\":", 10000) + "1" + strings.Repeat("}", 10000) + `}`,
	`{"o":{` + strings.Repeat(`"k":"",`, 40) + `"k":1,` + strings.Repeat(`"k":"",`, 40) + `"z":null}}`,
	`{"o":{` + strings.Repeat(`"k":1,`, 40) + strings.Repeat(`"j":"",`, 40) + `"k":null}}`,
	`{"o":{` + strings.Repeat(`"k":1,`, 40) + strings.Repeat(`"j":"",`, 40) + `"k":2}}`,
}

// FuzzDecodeMatchesReference checks the single-pass decoder against the
// encoding/json one it replaced: the same error, the same members, and
// the same value at every path.
func FuzzDecodeMatchesReference(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		b, err := parseBody(raw)
		want, wantErr := referenceParse(raw)
		if fmt.Sprint(err) != fmt.Sprint(wantErr) {
			t.Fatalf("%q: got error %v, want %v", raw, err, wantErr)
		}
		if err != nil {
			return
		}
		if got := b.tree(0, len(b.v)); !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: got %#v, want %#v", raw, got, want)
		}
		extra := []string{"a.b", "card.number", "x"} // paths the body may lack
		if b.cased {
			extra = nil // another spelling may answer for these (keys.go); the reference knows none
		}
		for _, p := range append(paths("", want, 16), extra...) {
			var got any
			if v := b.lookup(p); v != nil {
				for j := range b.v {
					if &b.v[j] == v {
						got = b.any(j)
					}
				}
			}
			if w := referenceLookup(want, p); !reflect.DeepEqual(got, w) {
				t.Fatalf("%q at %s: got %#v, want %#v", raw, p, got, w)
			}
		}
	})
}
