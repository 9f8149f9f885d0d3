package api

import (
	"net/http"
	"net/url"
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
