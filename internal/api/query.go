package api

import (
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/paylink/paylink"
)

// queryBody reads the parameters of r's query that name one of names
// (the paths the handler reads them at, as a body's: "limit",
// "token.company_token"), by the rules of a form body (form.go) and so of
// a JSON body's keys: values are trimmed, an empty one is absent, a
// parameter sent twice with two values is refused (?limit=5&limit=500: a
// proxy or a log that reads the first sees another request than
// paylink), and one spelled in camelCase, upper case, with '-' or with
// brackets (?Limit=, ?startingAfter=, ?starting-after=,
// ?token[company_token]=) is read as the name it spells, two spellings
// with two values refused as one parameter sent twice. Every other
// parameter, and any part of the query that does not parse, is ignored,
// as unknown body keys are: a cache buster sent twice or a tracking tag
// never refuses a call.
func queryBody(r *http.Request, names ...string) (*body, error) {
	if r.URL.RawQuery == "" {
		return &body{}, nil
	}
	values, err := url.ParseQuery(r.URL.RawQuery) // every parameter that parses
	if err != nil && mentions(r.URL.RawQuery, names) {
		return nil, queryForm.refuse("the query string does not parse: " + err.Error())
	}
	read := url.Values{}
	for param, vs := range values {
		if i := slices.IndexFunc(names, func(n string) bool { return sameParam(param, n) }); i >= 0 {
			read[formName(names[i])] = append(read[formName(names[i])], vs...)
		}
	}
	raw, err := valuesJSON(read, queryForm)
	if err != nil {
		return nil, err
	}
	return parseBody(raw)
}

// mentions reports whether a part of the query that does not parse
// (url.ParseQuery skips it: a ';' in it, a bad escape) names one of
// names (?limit=1;2 names limit): a parameter the handler reads is then
// refused, never read as absent.
func mentions(query string, names []string) bool {
	for _, seg := range strings.Split(query, "&") {
		param, value, _ := strings.Cut(seg, "=")
		_, perr := url.QueryUnescape(param)
		_, verr := url.QueryUnescape(value)
		if !strings.Contains(seg, ";") && perr == nil && verr == nil {
			continue // parsed: ParseQuery has it
		}
		for _, piece := range strings.Split(seg, ";") { // every name in it: ?_=1;limit=1 names limit
			name, _, _ := strings.Cut(piece, "=")
			if n, err := url.QueryUnescape(name); err == nil {
				name = n // ?li%6dit=1;2 names limit
			}
			if slices.ContainsFunc(names, func(n string) bool { return sameParam(name, n) }) {
				return true
			}
		}
	}
	return false
}

// sameParam reports whether a query parameter's name spells path, a
// body path ("token.company_token" is token[company_token]), ignoring
// ASCII case, '_', '-', the brackets and the dots.
func sameParam(param, path string) bool {
	var a, b [maxSquashed]byte
	return string(squashParam(a[:0], param)) == string(squashParam(b[:0], path))
}

// formName spells a body path as a form names it: "token.company_token"
// is token[company_token].
func formName(path string) string {
	first, rest, nested := strings.Cut(path, ".")
	if !nested {
		return first
	}
	return first + "[" + strings.ReplaceAll(rest, ".", "][") + "]"
}

// squashParam appends name to dst in lower case without '_', '-', '[',
// ']' and '.', at most maxSquashed bytes.
func squashParam(dst []byte, name string) []byte {
	for i := 0; i < len(name) && len(dst) < maxSquashed; i++ {
		switch c := lower(name[i]); c {
		case '_', '-', '[', ']', '.':
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// readCaller checks the credential a read (GET or HEAD) sends although
// it needs none: a read takes the API key alone, but a company token in
// its query (?company_token=, under every name a body's is read by) or in
// its body is checked as a POST's is, so a wrong one is 403
// company_token_mismatch rather than ignored, and one sent twice with
// two values is 400. Only the token is looked at: the rest of a read's
// query and body is its handler's, so a parameter the handler does not
// read (a cache buster sent twice, ?a[]=1, ?a=1;b=2) and a body it does
// not read ("token": "abc") never refuse a read.
func (s *Server) readCaller(r *http.Request, m *paylink.Merchant, raw []byte) error {
	if r.URL.RawQuery == "" && len(raw) == 0 { // the common read: nothing sent to check
		return nil
	}
	q, err := queryBody(r, companyTokenNames()...)
	if err != nil {
		return err
	}
	if err := s.linkCaller(r, m, q); err != nil {
		return err
	}
	if b, err := parseBody(raw); err == nil {
		if err := s.linkCaller(r, m, b); err != nil && paylink.AsError(err).Kind != paylink.KindInvalid {
			return err
		}
	}
	return nil
}
