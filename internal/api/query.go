package api

import (
	"net/http"
	"net/url"

	"github.com/paylink/paylink"
)

// queryBody reads r's query string as a body, by the rules of a form
// body (form.go) and so of a JSON body's keys: values are trimmed, an
// empty one is absent, a parameter sent twice with two values is refused
// (?limit=5&limit=500: a proxy or a log that reads the first sees
// another request than paylink), and one spelled in camelCase or upper
// case (?Limit=, ?startingAfter=) is read as the snake_case name it
// spells, two spellings with two values refused. Unknown parameters are
// ignored, as unknown body keys are.
func queryBody(r *http.Request) (*body, error) {
	if r.URL.RawQuery == "" {
		return &body{}, nil
	}
	values, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, queryForm.refuse("the query string does not parse: " + err.Error())
	}
	raw, err := valuesJSON(values, queryForm)
	if err != nil {
		return nil, err
	}
	return parseBody(raw)
}

// readCaller checks the credential a read (GET or HEAD) sends although
// it needs none: a read takes the API key alone, but a company token in
// its query (?company_token=, under every name a body's is read by) or in
// its body is checked as a POST's is, so a wrong one is 403
// company_token_mismatch rather than ignored. A query that cannot be
// read (queryBody) is refused; a body that cannot be is left for the
// handler to refuse.
func (s *Server) readCaller(r *http.Request, m *paylink.Merchant, raw []byte) error {
	if r.URL.RawQuery == "" && len(raw) == 0 { // the common read: nothing sent to check
		return nil
	}
	q, err := queryBody(r)
	if err != nil {
		return err
	}
	if err := s.linkCaller(r, m, q); err != nil {
		return err
	}
	if b, err := parseBody(raw); err == nil {
		return s.linkCaller(r, m, b)
	}
	return nil
}
