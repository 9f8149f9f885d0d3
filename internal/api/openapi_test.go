package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
)

// The OpenAPI description lives in docs/openapi.yaml; these tests keep it
// and the router from drifting apart, and check real responses against it.

const openAPIPath = "../../docs/openapi.yaml"

// loadOpenAPI loads and validates the description.
func loadOpenAPI(t *testing.T) *openapi3.T {
	t.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromFile(openAPIPath)
	if err != nil {
		t.Fatalf("load %s: %v", openAPIPath, err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("%s is not a valid OpenAPI 3.0 document: %v", openAPIPath, err)
	}
	return doc
}

// routePattern matches the "METHOD /path" patterns registered in routes.go.
var routePattern = regexp.MustCompile(`"(GET|POST|PUT|PATCH|DELETE|HEAD) (/[^"]*)"`)

// registeredRoutes reads routes.go and returns its "METHOD /path" patterns
// (the "/" catch-all has no method and is not matched).
func registeredRoutes(t *testing.T) map[string]bool {
	t.Helper()
	src, err := os.ReadFile("routes.go")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, m := range routePattern.FindAllStringSubmatch(string(src), -1) {
		out[m[1]+" "+m[2]] = true
	}
	if len(out) < 10 {
		t.Fatalf("found only %d route patterns in routes.go: got %v; has its style changed?", len(out), out)
	}
	return out
}

// documentedRoutes returns the document's operations as "METHOD /path".
func documentedRoutes(doc *openapi3.T) map[string]*openapi3.Operation {
	out := map[string]*openapi3.Operation{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			out[method+" "+path] = op
		}
	}
	return out
}

func TestOpenAPIMatchesRoutes(t *testing.T) {
	doc := loadOpenAPI(t)
	routes, documented := registeredRoutes(t), documentedRoutes(doc)
	for _, r := range sortedKeys(routes) {
		if documented[r] == nil {
			t.Errorf("route %q in routes.go is not in %s", r, openAPIPath)
		}
	}
	for _, r := range sortedKeys(documented) {
		if routes[r] {
			continue
		}
		t.Errorf("%s documents %q, which routes.go does not register", openAPIPath, r)
	}
}

func TestOpenAPIOperationsAreComplete(t *testing.T) {
	doc := loadOpenAPI(t)
	ops := documentedRoutes(doc)
	for _, r := range sortedKeys(ops) {
		op := ops[r]
		method, path, _ := strings.Cut(r, " ")
		if op.Summary == "" || op.Description == "" {
			t.Errorf("%s: missing summary or description", r)
		}
		if op.Responses.Status(http.StatusOK) == nil {
			t.Errorf("%s: no 200 response", r)
		}
		checkResponseHeaders(t, r, op)
		if !strings.HasPrefix(path, "/v5/") || publicV5[r] {
			continue
		}
		if op.Security != nil && len(*op.Security) == 0 {
			t.Errorf("%s: a /v5 call must not opt out of bearer authentication", r)
		}
		for _, code := range []int{401, 403, 429} { // 403: every call checks a company token it sends
			if !errorBodyResponse(op.Responses.Status(code)) {
				t.Errorf("%s: %d response missing or not the ErrorBody schema", r, code)
			}
		}
		if method != http.MethodPost {
			for _, code := range []int{413, 415} {
				if !errorBodyResponse(op.Responses.Status(code)) {
					t.Errorf("%s: %d response missing or not the ErrorBody schema: a read's body is read as a write's", r, code)
				}
			}
			continue
		}
		if !declares(op.Responses.Status(http.StatusOK), "Idempotent-Replayed") {
			t.Errorf("%s: 200 response does not declare the Idempotent-Replayed header", r)
		}
		for _, code := range []int{400, 409, 413, 415} {
			if !errorBodyResponse(op.Responses.Status(code)) {
				t.Errorf("%s: %d response missing or not the ErrorBody schema", r, code)
			}
		}
		if op.RequestBody == nil {
			t.Errorf("%s: no request body", r)
		}
		hasKey := false
		for _, p := range op.Parameters {
			hasKey = hasKey || (p.Value != nil && p.Value.In == "header" && p.Value.Name == "Idempotency-Key")
		}
		if !hasKey {
			t.Errorf("%s: no Idempotency-Key header parameter", r)
		}
	}
	if doc.Components.Schemas["WebhookPayload"] == nil {
		t.Error("components.schemas.WebhookPayload is missing")
	}
}

// checkResponseHeaders checks what every operation answers: 405 with
// Allow for a method the path does not take, and X-Request-Id on every
// response.
func checkResponseHeaders(t *testing.T, r string, op *openapi3.Operation) {
	t.Helper()
	if na := op.Responses.Status(http.StatusMethodNotAllowed); !errorBodyResponse(na) || !declares(na, "Allow") {
		t.Errorf("%s: 405 response missing, not the ErrorBody schema, or without the Allow header", r)
	}
	for code, res := range op.Responses.Map() {
		if !declares(res, "X-Request-Id") {
			t.Errorf("%s: %s response does not declare the X-Request-Id header", r, code)
		}
	}
}

// declares reports whether the response declares the header.
func declares(r *openapi3.ResponseRef, header string) bool {
	return r != nil && r.Value != nil && r.Value.Headers[header] != nil
}

// publicV5 are the /v5 routes that need no API key: the description
// itself, so that client generators can fetch it.
var publicV5 = map[string]bool{"GET /v5/openapi.json": true}

func errorBodyResponse(r *openapi3.ResponseRef) bool {
	if r == nil || r.Value == nil {
		return false
	}
	mt := r.Value.Content.Get("application/json")
	return mt != nil && mt.Schema != nil && strings.HasSuffix(mt.Schema.Ref, "/ErrorBody")
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// oasChecker sends real requests and validates request and response
// against the description.
type oasChecker struct {
	t      *testing.T
	env    *apitest.Env
	m      *apitest.Merchant
	router routers.Router
}

func newOASChecker(t *testing.T) *oasChecker {
	return newOASCheckerWith(t, apitest.Options{})
}

// newOASCheckerWith is newOASChecker on an API started with opts.
func newOASCheckerWith(t *testing.T, opts apitest.Options) *oasChecker {
	doc := loadOpenAPI(t)
	doc.Servers = nil // match paths on the test server's address
	router, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	env := apitest.Start(t, opts)
	return &oasChecker{t: t, env: env, m: env.Onboard(), router: router}
}

// call sends body to path, validates both sides against the document and
// returns the decoded answer.
func (c *oasChecker) call(method, path string, body any, wantStatus int) apitest.Response {
	c.t.Helper()
	r, _ := c.callWith(method, path, body, nil, wantStatus)
	return r
}

// callWith is call with extra request headers, returning the answer's
// headers too.
func (c *oasChecker) callWith(method, path string, body any, headers map[string]string, wantStatus int) (apitest.Response, http.Header) {
	c.t.Helper()
	var raw []byte
	if body != nil {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			c.t.Fatal(err)
		}
	}
	req, err := http.NewRequest(method, c.env.Server.URL+path, bytes.NewReader(raw))
	if err != nil {
		c.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+c.m.Creds.APIKey)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	route, params, err := c.router.FindRoute(req)
	if err != nil {
		c.t.Fatalf("%s %s is not in the description: %v", method, path, err)
	}
	ctx := context.Background()
	opts := &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc,
		IncludeResponseStatus: true, MultiError: true}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: opts}
	if err := openapi3filter.ValidateRequest(ctx, in); err != nil {
		c.t.Errorf("%s %s: request does not match the description: %v", method, path, err)
	}
	req.Body = io.NopCloser(bytes.NewReader(raw)) // validation read it
	res, err := c.env.Server.Client().Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	got, _ := io.ReadAll(res.Body)
	if res.StatusCode != wantStatus {
		c.t.Fatalf("%s %s: got %d %s, want %d", method, path, res.StatusCode, got, wantStatus)
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: res.StatusCode,
		Header: res.Header, Options: opts}
	out.SetBodyBytes(got)
	if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
		c.t.Errorf("%s %s: %d response does not match the description: %v\nbody: %s", method, path, res.StatusCode, err, got)
	}
	for _, h := range answeredHeaders(res.Header) {
		if !declares(route.Operation.Responses.Status(res.StatusCode), h) {
			c.t.Errorf("%s %s: %d response has the header %s, which the description does not declare", method, path, res.StatusCode, h)
		}
	}
	r := apitest.Response{Status: res.StatusCode, Raw: string(got)}
	dec := json.NewDecoder(bytes.NewReader(got))
	dec.UseNumber()
	dec.Decode(&r.Body)
	if rr := route.Operation.Responses.Status(res.StatusCode); rr != nil && rr.Value != nil {
		if mt := rr.Value.Content.Get("application/json"); mt != nil && mt.Schema != nil {
			for _, k := range undocumentedKeys(mt.Schema.Value, r.Body, "") {
				c.t.Errorf("%s %s: %d response field %q is not in the description", method, path, res.StatusCode, k)
			}
		}
	}
	return r, res.Header
}

// documentedHeaders are the response headers of the API's contract: an
// answer that has one must be described with it.
var documentedHeaders = []string{"X-Request-Id", "Idempotent-Replayed", "Allow", "Retry-After", "WWW-Authenticate"}

// answeredHeaders lists the documentedHeaders that h has.
func answeredHeaders(h http.Header) []string {
	var out []string
	for _, name := range documentedHeaders {
		if h.Get(name) != "" {
			out = append(out, name)
		}
	}
	return out
}

// methodNotAllowed sends each path a method it does not take and checks
// the 405 against what every operation of the path describes.
func (c *oasChecker) methodNotAllowed(doc *openapi3.T, concrete map[string]string) {
	c.t.Helper()
	errorBody := doc.Components.Schemas["ErrorBody"].Value
	for _, tmpl := range sortedKeys(doc.Paths.Map()) {
		path := concrete[tmpl]
		if path == "" {
			path = tmpl
		}
		req, _ := http.NewRequest(http.MethodPut, c.env.Server.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+c.m.Creds.APIKey)
		res, err := c.env.Server.Client().Do(req)
		if err != nil {
			c.t.Fatal(err)
		}
		got, _ := io.ReadAll(res.Body)
		res.Body.Close()
		var body any
		if res.StatusCode != http.StatusMethodNotAllowed || res.Header.Get("Allow") == "" || json.Unmarshal(got, &body) != nil || errorBody.VisitJSON(body) != nil {
			c.t.Errorf("PUT %s: got %d Allow %q %s, want 405 with Allow and an ErrorBody", path, res.StatusCode, res.Header.Get("Allow"), got)
			continue
		}
		for method, op := range doc.Paths.Value(tmpl).Operations() {
			for _, h := range answeredHeaders(res.Header) {
				if !declares(op.Responses.Status(http.StatusMethodNotAllowed), h) {
					c.t.Errorf("%s %s: its 405 has the header %s, which the description does not declare", method, tmpl, h)
				}
			}
		}
	}
}

// undocumentedKeys lists the object keys of v (recursively) that schema
// does not name as a property, so that a field added to a handler must
// be added to the description too.
func undocumentedKeys(schema *openapi3.Schema, v any, at string) []string {
	obj, ok := v.(map[string]any)
	if !ok || schema == nil {
		return nil
	}
	props := map[string][]*openapi3.Schema{}
	var extra *openapi3.Schema // an explicit additionalProperties schema
	var collect func(s *openapi3.Schema)
	collect = func(s *openapi3.Schema) {
		if s == nil {
			return
		}
		for name, p := range s.Properties {
			props[name] = append(props[name], p.Value)
		}
		if ap := s.AdditionalProperties.Schema; ap != nil {
			extra = ap.Value
		}
		for _, group := range []openapi3.SchemaRefs{s.AllOf, s.AnyOf, s.OneOf} {
			for _, sub := range group {
				collect(sub.Value)
			}
		}
	}
	collect(schema)
	var out []string
	for _, k := range sortedKeys(obj) {
		subs, named := props[k]
		if !named && extra != nil {
			subs, named = []*openapi3.Schema{extra}, true
		}
		if !named {
			out = append(out, at+k)
			continue
		}
		// A key is documented when one of its schemas covers all its keys.
		var best []string
		for i, s := range subs {
			missing := undocumentedKeys(s, obj[k], at+k+".")
			if i == 0 || len(missing) < len(best) {
				best = missing
			}
		}
		out = append(out, best...)
	}
	return out
}

func TestOpenAPIDescribesRealResponses(t *testing.T) {
	c := newOASChecker(t)
	env, m := c.env, c.m
	company := map[string]any{"company_token": m.Creds.CompanyToken}

	tok := c.call(http.MethodPost, "/v5/transaction_token", company, http.StatusOK)
	if len(tok.Str("transaction_token")) != 128 {
		t.Errorf("transaction token: got %s", tok.Raw)
	}

	approve := c.call(http.MethodPost, "/v5/purchase", env.CardPurchase(m, "4111111111111111", "10.50", func(b map[string]any) {
		apitest.Set(b, "purchase.invoice_number", "OAS-1")
		apitest.Set(b, "purchase.should_service_apply_surcharge", "true")
		apitest.Set(b, "customer.store_card_permission", true)
	}), http.StatusOK)
	ref := approve.Str("purchase.purchase_reference")
	if approve.Str("purchase.status") != "APPROVED" {
		t.Errorf("approve: got %s", approve.Raw)
	}

	decline := c.call(http.MethodPost, "/v5/purchase", env.CardPurchase(m, "4000000000000002", "1"), http.StatusOK)
	if decline.Str("response_code") != "declined" {
		t.Errorf("decline: got %s", decline.Raw)
	}

	bad := c.call(http.MethodPost, "/v5/purchase", env.CardPurchase(m, "4111111111111112", "1"), http.StatusBadRequest)
	if bad.Str("response_code") != "invalid_request" {
		t.Errorf("invalid card: got %s", bad.Raw)
	}

	c.call(http.MethodPost, "/v5/surcharge", map[string]any{
		"token": map[string]any{"company": m.Creds.CompanyToken}, "amount": "100", "currency": "AUD",
		"card": map[string]any{"number": "378282246310005", "expiry_month": 12, "expiry_year": 39},
	}, http.StatusOK)

	c.call(http.MethodPost, "/v5/purchase/"+ref, company, http.StatusOK)
	c.call(http.MethodGet, "/v5/purchase/OAS-1", nil, http.StatusOK)
	c.call(http.MethodGet, "/v5/purchase/nope", nil, http.StatusNotFound)
	c.call(http.MethodPost, "/v5/purchase/"+ref, map[string]any{"company_token": "wrong"}, http.StatusForbidden)

	refund := c.call(http.MethodPost, "/v5/purchase/"+ref+"/refund", map[string]any{
		"token":    map[string]any{"company_token": m.Creds.CompanyToken, "transaction_token": env.TransactionToken(m)},
		"customer": map[string]any{"ip_address": "2001:db8::1", "timezone": "UTC"},
		"refund":   map[string]any{"amount": 2.5, "currency": "AUD", "invoice_number": "OAS-R1"},
	}, http.StatusOK)
	if refund.Str("refund.status") != "APPROVED" {
		t.Errorf("refund: got %s", refund.Raw)
	}
	byPost := c.call(http.MethodPost, "/v5/refund/OAS-R1", company, http.StatusOK)
	if byGet := c.call(http.MethodGet, "/v5/refund/OAS-R1", nil, http.StatusOK); byGet.Raw != byPost.Raw {
		t.Errorf("refund status by GET: got %s, want what POST answers: %s", byGet.Raw, byPost.Raw)
	}

	held := c.call(http.MethodPost, "/v5/purchase", env.CardPurchase(m, "4111111111111111", "20", func(b map[string]any) {
		apitest.Set(b, "purchase.should_service_apply_pre_authorisation", true)
	}), http.StatusOK)
	c.call(http.MethodPost, "/v5/purchase/"+held.Str("purchase.purchase_reference")+"/capture", map[string]any{
		"token":   map[string]any{"company_token": m.Creds.CompanyToken, "transaction_token": env.TransactionToken(m)},
		"capture": map[string]any{"amount": "15", "currency": "AUD"},
	}, http.StatusOK)

	card := c.call(http.MethodPost, "/v5/tokenize_card", map[string]any{
		"company_token": m.Creds.CompanyToken,
		"card":          map[string]any{"number": "4111111111111111", "expiry_month": "07", "expiry_year": "39"},
	}, http.StatusOK)
	cardToken := map[string]any{"company_token": m.Creds.CompanyToken, "card_token": card.Str("card.token")}
	c.call(http.MethodPost, "/v5/card", cardToken, http.StatusOK)
	c.call(http.MethodPost, "/v5/invalidate_card_token", cardToken, http.StatusOK)
	c.call(http.MethodPost, "/v5/invalidate_card", cardToken, http.StatusConflict)

	challenge := c.call(http.MethodPost, "/v5/purchase", env.CardPurchase(m, "4000000000003220", "12.34", func(b map[string]any) {
		apitest.Set(b, "customer.should_service_apply_authentication", true)
		apitest.Set(b, "customer.authentication_redirect_url", "https://shop.example.com/back")
	}), http.StatusOK)
	if challenge.Get("purchase.total_amount") != nil {
		t.Errorf("challenge: got %s, want a null total", challenge.Raw)
	}
	challengeRef := challenge.Str("purchase.purchase_reference")
	c.call(http.MethodPost, "/v5/purchase/"+challengeRef+"/3dsredirect", company, http.StatusConflict)
	passChallenge(t, env, challenge)
	done := c.call(http.MethodPost, "/v5/purchase/"+challengeRef+"/3dsredirect", company, http.StatusOK)
	if done.Str("purchase.status") != "APPROVED" {
		t.Errorf("3dsredirect: got %s, want APPROVED", done.Raw)
	}

	c.call(http.MethodPost, "/v5/direct_debit_fee", map[string]any{
		"token": map[string]any{"company_token": m.Creds.CompanyToken}, "purchase": map[string]any{"amount": 100, "currency": "AUD"},
	}, http.StatusOK)
	debit := c.call(http.MethodPost, "/v5/direct_debit", map[string]any{
		"token":        map[string]any{"company_token": m.Creds.CompanyToken, "transaction_token": env.TransactionToken(m)},
		"bank_account": map[string]any{"number": "123456789", "holder_name": "Jo Citizen", "bsb": "062-000"},
		"customer":     map[string]any{"ip_address": "203.0.113.7", "timezone": "Australia/Sydney"},
		"purchase":     map[string]any{"amount": "100.00", "currency": "AUD", "should_service_apply_fee": true},
	}, http.StatusOK)

	checkWebhooks(t, c, []string{ref, decline.Str("purchase.purchase_reference"), held.Str("purchase.purchase_reference"),
		challengeRef, debit.Str("purchase.purchase_reference")})

	link := c.call(http.MethodPost, "/v5/payment-links", map[string]any{
		"amount": "49.50", "currency": "AUD", "merchantReference": "OAS-L1",
		"customer": map[string]any{"first_name": "Jo", "email": "jo@example.com"},
	}, http.StatusOK)
	id := link.Str("id")
	c.call(http.MethodPost, "/v5/payment-links/"+id, map[string]any{}, http.StatusOK)
	c.call(http.MethodGet, "/v5/payment-links/"+id, nil, http.StatusOK)
	c.call(http.MethodPost, "/v5/payment-links/"+id+"/cancel", nil, http.StatusOK)
	c.call(http.MethodPost, "/v5/payment-links/lnk_unknown", nil, http.StatusNotFound)
	// The GET of a link reads a body's company_token as its POST does.
	c.call(http.MethodGet, "/v5/payment-links/"+id, map[string]any{"company_token": "wrong"}, http.StatusForbidden)

	// A retry under an Idempotency-Key is described with its header.
	keyed := map[string]string{"Idempotency-Key": "oas-replay-1"}
	c.callWith(http.MethodPost, "/v5/transaction_token", company, keyed, http.StatusOK)
	if _, h := c.callWith(http.MethodPost, "/v5/transaction_token", company, keyed, http.StatusOK); h.Get("Idempotent-Replayed") != "true" {
		t.Errorf("a retry under the same key: got Idempotent-Replayed %q, want true", h.Get("Idempotent-Replayed"))
	}
	// A read's body is limited as a write's is.
	huge := map[string]any{"company_token": strings.Repeat("a", 70000)}
	for _, path := range []string{"/v5/purchase/OAS-1", "/v5/refund/OAS-R1", "/v5/payment-links/" + id, "/v5/balance",
		"/v5/balance_transactions", "/v5/payouts", "/v5/reports/settlement?date=2026-01-02"} {
		c.call(http.MethodGet, path, huge, http.StatusRequestEntityTooLarge)
	}
	c.methodNotAllowed(loadOpenAPI(t), map[string]string{"/v5/purchase/{ref}": "/v5/purchase/" + ref,
		"/v5/purchase/{ref}/capture": "/v5/purchase/" + ref + "/capture", "/v5/purchase/{ref}/cancel": "/v5/purchase/" + ref + "/cancel",
		"/v5/purchase/{ref}/refund": "/v5/purchase/" + ref + "/refund", "/v5/purchase/{ref}/3dsredirect": "/v5/purchase/" + ref + "/3dsredirect",
		"/v5/refund/{ref}": "/v5/refund/OAS-R1", "/v5/direct_debit/{ref}/refund": "/v5/direct_debit/" + ref + "/refund",
		"/v5/payment-links/{id}": "/v5/payment-links/" + id, "/v5/payment-links/{id}/cancel": "/v5/payment-links/" + id + "/cancel"})

	c.m = &apitest.Merchant{Merchant: m.Merchant, Creds: m.Creds}
	c.m.Creds.APIKey = "pl_sk_wrong"
	c.call(http.MethodPost, "/v5/transaction_token", company, http.StatusUnauthorized)
}

// checkWebhooks validates the webhook payload of each transaction against
// the WebhookPayload schema.
func checkWebhooks(t *testing.T, c *oasChecker, refs []string) {
	t.Helper()
	doc := loadOpenAPI(t)
	schema := doc.Components.Schemas["WebhookPayload"].Value
	for _, ref := range refs {
		tr, err := c.env.Service.TransactionStatus(context.Background(), c.m.Merchant, ref)
		if err != nil {
			t.Fatalf("load %s: %v", ref, err)
		}
		raw, err := paylink.WebhookPayload(tr, c.m.Merchant)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatal(err)
		}
		if err := schema.VisitJSON(v); err != nil {
			t.Errorf("webhook of %s (%s) does not match WebhookPayload: %v\n%s", ref, tr.Status, err, raw)
		}
		for _, k := range undocumentedKeys(schema, v, "") {
			t.Errorf("webhook of %s: field %q is not in WebhookPayload", ref, k)
		}
	}
}

// TestOpenAPIThreeDSValues: wherever the description has the 3-D Secure
// result fields, their descriptions name exactly the values the server
// sets (threeds.go: a frictionless or answered challenge is
// authenticated, every other end failed with one of three reasons), no
// fewer and none the server never sends.
func TestOpenAPIThreeDSValues(t *testing.T) {
	want := map[string][]string{
		"threeds_result":        {paylink.ThreeDSAuthenticated, paylink.ThreeDSFailed},
		"threeds_result_reason": {paylink.ThreeDSAbandoned, paylink.ThreeDSCanceled, paylink.ThreeDSRejected},
	}
	found := map[string]int{}
	for at, s := range allSchemas(loadOpenAPI(t)) {
		for name, values := range want {
			p := s.Properties[name]
			if p == nil || p.Value == nil {
				continue
			}
			found[name]++
			if got := backticked(p.Value.Description); strings.Join(got, ",") != strings.Join(values, ",") {
				t.Errorf("%s.%s: the description names %v, want %v", at, name, got, values)
			}
		}
	}
	for name := range want {
		if found[name] == 0 {
			t.Errorf("no schema has %s", name)
		}
	}
}

// backtickedValue is a value named in a description: `like_this`.
var backtickedValue = regexp.MustCompile("`([a-z_]+)`")

// backticked is the sorted set of values a description names.
func backticked(description string) []string {
	seen := map[string]bool{}
	for _, m := range backtickedValue.FindAllStringSubmatch(description, -1) {
		seen[m[1]] = true
	}
	return sortedKeys(seen)
}

// allSchemas is every object schema of doc, named by where it is first
// met: the components and, inside them and the operations, every
// property, item and allOf/anyOf/oneOf part.
func allSchemas(doc *openapi3.T) map[string]*openapi3.Schema {
	out := map[string]*openapi3.Schema{}
	seen := map[*openapi3.Schema]bool{}
	var walk func(at string, ref *openapi3.SchemaRef)
	walk = func(at string, ref *openapi3.SchemaRef) {
		if ref == nil || ref.Value == nil || seen[ref.Value] {
			return
		}
		s := ref.Value
		seen[s] = true
		if len(s.Properties) > 0 {
			out[at] = s
		}
		for name, p := range s.Properties {
			walk(at+"."+name, p)
		}
		walk(at+"[]", s.Items)
		for i, parts := range [][]*openapi3.SchemaRef{s.AllOf, s.AnyOf, s.OneOf} {
			for j, part := range parts {
				walk(at+"/"+[]string{"allOf", "anyOf", "oneOf"}[i]+"/"+strconv.Itoa(j), part)
			}
		}
	}
	for _, name := range sortedKeys(doc.Components.Schemas) {
		walk(name, doc.Components.Schemas[name])
	}
	for _, path := range doc.Paths.InMatchingOrder() {
		for method, op := range doc.Paths.Value(path).Operations() {
			if op.RequestBody != nil && op.RequestBody.Value != nil {
				for _, mt := range op.RequestBody.Value.Content {
					walk(method+" "+path+" request", mt.Schema)
				}
			}
			for code, r := range op.Responses.Map() {
				if r.Value != nil {
					for _, mt := range r.Value.Content {
						walk(method+" "+path+" "+code, mt.Schema)
					}
				}
			}
		}
	}
	return out
}

// TestOpenAPIPaymentLinkNeedsAReference: a payment link without an order
// reference is refused by the API (400) and by the description, and one
// with either spelling, merchantReference or its alias
// merchant_reference, is accepted by both. (The description requires
// "one of the two" with anyOf: listing merchantReference itself as
// required would refuse the alias the API takes. An empty value, absent
// to the API, is described in prose, not by the schema.)
func TestOpenAPIPaymentLinkNeedsAReference(t *testing.T) {
	c := newOASChecker(t)
	tests := []struct {
		name string
		ref  map[string]any
		ok   bool
	}{
		{"none", nil, false},
		{"merchantReference", map[string]any{"merchantReference": "L-1"}, true},
		{"merchant_reference", map[string]any{"merchant_reference": "L-2"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := map[string]any{"amount": "5", "currency": "AUD"}
			for k, v := range tt.ref {
				body[k] = v
			}
			raw, _ := json.Marshal(body)
			req, _ := http.NewRequest(http.MethodPost, c.env.Server.URL+"/v5/payment-links", bytes.NewReader(raw))
			req.Header.Set("Content-Type", "application/json")
			route, params, err := c.router.FindRoute(req)
			if err != nil {
				t.Fatal(err)
			}
			opts := &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}
			described := openapi3filter.ValidateRequest(context.Background(),
				&openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: opts})
			answered := c.env.Post("/v5/payment-links", c.m, body)
			if (described == nil) != tt.ok || (answered.Status == http.StatusOK) != tt.ok ||
				(!tt.ok && answered.Status != http.StatusBadRequest) {
				t.Errorf("the description says %v and the API answers %d %s; want both to accept it: %v",
					described, answered.Status, answered.Raw, tt.ok)
			}
		})
	}
}
