package api_test

import (
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/paylink/paylink/internal/apitest"
)

// postForm posts a form-encoded body with the merchant's API key.
func postForm(t *testing.T, env *apitest.Env, m *apitest.Merchant, path, body string) (int, string) {
	t.Helper()
	return postAs(t, env, m, path, "application/x-www-form-urlencoded; charset=utf-8", strings.NewReader(body))
}

// postAs posts body as contentType with the merchant's API key.
func postAs(t *testing.T, env *apitest.Env, m *apitest.Merchant, path, contentType string, body io.Reader) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, env.Server.URL+path, body)
	req.Header.Set("Authorization", "Bearer "+m.Creds.APIKey)
	req.Header.Set("Content-Type", contentType)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(raw)
}

// TestFormBodies: a client that posts forms, as Stripe's API takes them
// and PHP's http_build_query writes them, is served: the form's
// bracketed keys spell the JSON object; JSON sent under the form type (curl
// -d) is still JSON; a form that spells no object is a 400.
func TestFormBodies(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	status, body := postForm(t, env, m, "/v5/transaction_token", "company_token="+url.QueryEscape(m.Creds.CompanyToken))
	if status != 200 || !strings.Contains(body, `"transaction_token":"`) {
		t.Fatalf("token by form: got %d %s", status, body)
	}
	form := url.Values{
		"token[company_token]":     {m.Creds.CompanyToken},
		"token[transaction_token]": {env.TransactionToken(m)},
		"customer[ip_address]":     {"203.0.113.7"},
		"customer[timezone]":       {"UTC"},
		"card[number]":             {"4111111111111111"},
		"card[expiry_month]":       {"12"},
		"card[expiry_year]":        {"39"},
		"card[cvc]":                {"123"},
		"purchase[amount]":         {"10.50"},
		"purchase[currency]":       {"AUD"},
		"purchase[should_service_apply_pre_authorisation]": {"1"},
	}
	status, body = postForm(t, env, m, "/v5/purchase", form.Encode())
	if status != 200 || !strings.Contains(body, `"status":"PRE_AUTHORISED"`) || !strings.Contains(body, `"pre_authorised_amount":"10.50"`) {
		t.Errorf("a held purchase by form: got %d %s", status, body)
	}
	json := `{"company_token":"` + m.Creds.CompanyToken + `"}`
	if status, body := postForm(t, env, m, "/v5/transaction_token", json); status != 200 {
		t.Errorf("JSON under the form type: got %d %s", status, body)
	}
	twice := url.Values{}
	for k, v := range form {
		twice[k] = v
	}
	twice["token[transaction_token]"] = []string{env.TransactionToken(m)}
	twice["purchase[amount]"] = []string{"1.00", "1000.00"} // a proxy reading the first sees another amount
	if status, body := postForm(t, env, m, "/v5/purchase", twice.Encode()); status != 400 ||
		!strings.Contains(body, `"fields":{"purchase.amount":"sent twice with different values"}`) {
		t.Errorf("an amount sent twice by form: got %d %s, want 400 naming purchase.amount in fields", status, body)
	}
	twice["purchase[amount]"] = []string{"10.50", " 10.50"}
	if status, body := postForm(t, env, m, "/v5/purchase", twice.Encode()); status != 200 {
		t.Errorf("an amount sent twice with one value by form: got %d %s, want it read once", status, body)
	}
	// A form sent as JSON (no content type, or text/plain) is told how
	// to send a form (the sloppy-client sweep: "syntax error at byte 2").
	for _, contentType := range []string{"", "text/plain", "application/json"} {
		status, body := postAs(t, env, m, "/v5/transaction_token", contentType, strings.NewReader("company_token="+m.Creds.CompanyToken))
		if status != 400 || !strings.Contains(body, `"malformed_json"`) || !strings.Contains(body, "send a form with Content-Type: application/x-www-form-urlencoded") {
			t.Errorf("a form sent as %q: got %d %s, want 400 malformed_json saying how to send a form", contentType, status, body)
		}
	}
	if status, body := postAs(t, env, m, "/v5/transaction_token", "", strings.NewReader(`{"company_token"=1}`)); status != 400 || strings.Contains(body, "reads as a form") {
		t.Errorf("broken JSON: got %d %s, want 400 without a word of forms", status, body)
	}
	for _, bad := range []string{"a=1&a[b]=2", "card[number=4111", "items[]=1", "[x]=1", "%zz=1", "purchase[invoice_number]=I%FF%FE", "a%FF=1"} {
		if status, body := postForm(t, env, m, "/v5/purchase", bad); status != 400 || !bytes.Contains([]byte(body), []byte(`"malformed_json"`)) {
			t.Errorf("form %q: got %d %s, want 400 malformed_json", bad, status, body)
		}
	}
}

// postMultipart posts fields (name, value pairs, in order) as
// multipart/form-data, as PHP's CURLOPT_POSTFIELDS given an array and
// curl -F send them; a name starting with "@" is sent as a file part.
func postMultipart(t *testing.T, env *apitest.Env, m *apitest.Merchant, path string, fields ...string) (int, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for i := 0; i+1 < len(fields); i += 2 {
		var w io.Writer
		var err error
		if name, file := strings.CutPrefix(fields[i], "@"); file {
			w, err = mw.CreateFormFile(name, "card.txt")
		} else {
			w, err = mw.CreateFormField(fields[i])
		}
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, fields[i+1])
	}
	mw.Close()
	return postAs(t, env, m, path, mw.FormDataContentType(), &buf)
}

// TestMultipartFormBodies: a multipart/form-data body is read as a form
// is, by the same rules (bracketed keys, an empty value absent, two
// values refused); a file part is refused, and nothing runs.
func TestMultipartFormBodies(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	status, body := postMultipart(t, env, m, "/v5/transaction_token", "company_token", m.Creds.CompanyToken)
	if status != 200 || !strings.Contains(body, `"transaction_token":"`) {
		t.Fatalf("token by multipart: got %d %s", status, body)
	}
	purchase := func(token string, extra ...string) []string {
		return append([]string{"token[company_token]", m.Creds.CompanyToken, "token[transaction_token]", token,
			"customer[ip_address]", "203.0.113.7", "customer[timezone]", "UTC", "card[number]", "4111111111111111",
			"card[expiry_month]", "12", "card[expiry_year]", "39", "card[cvc]", "123", "purchase[currency]", "AUD",
			"purchase[should_service_apply_pre_authorisation]", "1"}, extra...)
	}
	token := env.TransactionToken(m)
	for _, bad := range [][]string{
		purchase(token, "purchase[amount]", "1.00", "purchase[amount]", "1000.00"),
		purchase(token, "purchase[amount]", "10.50", "@card[number]", "4111111111111111"),
		purchase(token, "purchase[amount]", "10.50", "items[]", "1"),
	} {
		if status, body := postMultipart(t, env, m, "/v5/purchase", bad...); status != 400 || !strings.Contains(body, `"malformed_json"`) {
			t.Errorf("multipart %q: got %d %s, want 400 malformed_json", bad[len(bad)-2:], status, body)
		}
	}
	status, body = postMultipart(t, env, m, "/v5/purchase", purchase(token, "purchase[amount]", "", "purchase[amount]", "10.50")...)
	if status != 200 || !strings.Contains(body, `"status":"PRE_AUTHORISED"`) || !strings.Contains(body, `"pre_authorised_amount":"10.50"`) {
		t.Errorf("a held purchase by multipart (its token unspent by the refusals): got %d %s", status, body)
	}
}

// TestAnEmptyFormValueIsAbsent: a form key given empty beside a value is
// read as the value, as {"company_token":"","company_token":"X"} is in
// JSON; given twice with two values it is refused; alone and empty it
// is absent.
func TestAnEmptyFormValueIsAbsent(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	company := url.QueryEscape(m.Creds.CompanyToken)
	for _, tt := range []struct {
		form   string
		status int
		says   string
	}{
		{"company_token=&company_token=" + company, 200, `"transaction_token":"`},
		{"company_token=" + company + "&company_token=%20", 200, `"transaction_token":"`},
		{"company_token=" + company + "&company_token=" + company + "%20", 200, `"transaction_token":"`},
		{"company_token=&company_token=", 400, "is required"},
		{"company_token=A&company_token=" + company, 400, "sent twice with different values"},
		{"company_token=" + company + "&metadata=&metadata[channel]=web", 200, `"transaction_token":"`},
	} {
		if status, body := postForm(t, env, m, "/v5/transaction_token", tt.form); status != tt.status || !strings.Contains(body, tt.says) {
			t.Errorf("form %.60q: got %d %s, want %d saying %s", tt.form, status, body, tt.status, tt.says)
		}
	}
}
