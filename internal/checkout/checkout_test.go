package checkout_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
	"github.com/paylink/paylink/internal/processor"
)

const (
	cardOK      = "4111111111111111"
	cardDecline = "4000000000000002"
)

// pageURLs returns the link's hosted page and virtual terminal URLs.
func pageURLs(r apitest.Response) (string, string) {
	return r.Str("url"), r.Str("virtual_terminal_url")
}

// linkState looks the link up through the API.
func linkState(t *testing.T, env *apitest.Env, m *apitest.Merchant, id string) apitest.Response {
	t.Helper()
	return env.Post("/v5/payment-links/"+id, m, nil)
}

// transaction loads a transaction through the service.
func transaction(t *testing.T, env *apitest.Env, m *apitest.Merchant, ref string) *paylink.Transaction {
	t.Helper()
	tr, err := env.Service.TransactionStatus(context.Background(), m.Merchant, ref)
	if err != nil {
		t.Fatalf("transaction %q: %v", ref, err)
	}
	return tr
}

// TestTerminalTurnsAutocompleteOff: the virtual terminal's card and
// customer fields carry autocomplete="off" (the browser is the agent's:
// its saved cards are not the customer's, and it would offer to save each
// customer's card); the hosted page keeps the tokens that fill in the
// customer's own details.
func TestTerminalTurnsAutocompleteOff(t *testing.T) {
	env := start(t)
	hpp, vt := pageURLs(link(t, env, env.Onboard(), "10.50", nil))
	b := newBrowser(t, env)
	inputs, idOf, tokenOf := regexp.MustCompile(`<input [^>]*>`), regexp.MustCompile(` id="([^"]+)"`), regexp.MustCompile(` autocomplete="([^"]*)"`)
	for _, tt := range []struct {
		url  string
		want map[string]string // autocomplete by field id
	}{
		{hpp, map[string]string{"card_number": "cc-number", "card_expiry": "cc-exp", "card_cvc": "cc-csc", "card_holder": "cc-name",
			"first_name": "given-name", "email": "email", "postcode": "postal-code"}},
		{vt, map[string]string{"card_number": "off", "card_expiry": "off", "card_cvc": "off", "card_holder": "off",
			"first_name": "off", "last_name": "off", "email": "off", "phone": "off", "address": "off", "address2": "off",
			"city": "off", "state": "off", "postcode": "off", "country_code": "off", "customer_reference": "off", "invoice_number": "off"}},
	} {
		got := map[string]string{}
		for _, in := range inputs.FindAllString(b.get(tt.url).body, -1) {
			id, token := idOf.FindStringSubmatch(in), tokenOf.FindStringSubmatch(in)
			if id != nil && token != nil {
				got[id[1]] = token[1]
			}
		}
		for id, want := range tt.want {
			if got[id] != want {
				t.Errorf("%s: #%s autocomplete got %q, want %q", tt.url, id, got[id], want)
			}
		}
	}
}

// TestCardNumberLimitIsTheAPIs: the page's card number field takes as
// many characters as the API does (paylink.MaxCardNumberInput: a number
// spelled with the separators people type), where its own maxlength of
// 23 cut "4111 - 1111 - 1111 - 1111" short and called it invalid; longer
// is refused as the API refuses it (the code review sweep).
func TestCardNumberLimitIsTheAPIs(t *testing.T) {
	env := start(t)
	m := env.Onboard()
	b := newBrowser(t, env)
	hpp, _ := pageURLs(link(t, env, m, "10.50", nil))
	p := b.get(hpp)
	want := fmt.Sprintf(`maxlength="%d"`, paylink.MaxCardNumberInput)
	field := regexp.MustCompile(`<input id="card_number"[^>]*>`).FindString(p.body)
	if !strings.Contains(field, want) || !strings.Contains(p.body, `id="card_holder" name="card_holder" required maxlength="128"`) {
		t.Errorf("the card fields: %s, want %s", field, want)
	}
	long := b.post(hpp, cardForm(p.csrf(t), "4111 - 1111 - 1111 - 1111 - 00000"))
	if long.status != http.StatusBadRequest || !strings.Contains(long.body, "This card number is not valid.") {
		t.Errorf("a number of %d characters: got %d, want the card number refused", len("4111 - 1111 - 1111 - 1111 - 00000"), long.status)
	}
	paid := b.post(hpp, cardForm(b.get(hpp).csrf(t), "4111 - 1111 - 1111 - 1111"))
	if paid.status != http.StatusSeeOther && paid.status != http.StatusOK || strings.Contains(paid.body, "not valid") {
		t.Errorf("a number typed with spaced dashes: got %d %s, want it paid", paid.status, paid.body)
	}
}

// TestPagesLoadTheirBuildsScript: a page loads the script at an address
// naming its content's digest, so that a browser holding an earlier
// build's script (cached for an hour) fetches this build's, and the
// address serves it, cached by whether it names this build's.
func TestPagesLoadTheirBuildsScript(t *testing.T) {
	env := start(t)
	hpp, _ := pageURLs(link(t, env, env.Onboard(), "10.50", nil))
	b := newBrowser(t, env)
	script := b.get(env.Server.URL + "/checkout/static/app.js").body
	sum := sha256.Sum256([]byte(script))
	version := hex.EncodeToString(sum[:6])
	want := `src="/checkout/static/app.js?v=` + version + `"`
	if page := b.get(hpp).body; !strings.Contains(page, want) {
		t.Fatalf("the page does not load its script as %s", want)
	}
	// Kept a year at its own address; not kept at another build's (an
	// older page asking this instance mid-upgrade, or a newer page asking
	// an older instance: the file must not be kept under the other's
	// address); an hour at the bare path of pages before versions.
	for v, want := range map[string]string{version: "public, max-age=31536000, immutable", "000000000000": "no-store", "": "public, max-age=3600"} {
		got := b.get(env.Server.URL + "/checkout/static/app.js?v=" + v)
		if got.body != script || got.header.Get("Cache-Control") != want {
			t.Errorf("v=%q: got Cache-Control %q (the script %v), want %q", v, got.header.Get("Cache-Control"), got.body == script, want)
		}
	}
}

func TestPagesRenderSafely(t *testing.T) {
	env := start(t)
	m := env.Onboard(func(n *paylink.NewMerchant) { n.TradingName = `Bob's <b>Bikes</b> & "Co"` })
	r := link(t, env, m, "10.50", map[string]any{"merchantReference": `<img src=x onerror=alert(1)>`,
		"customer": map[string]any{"first_name": `"><script>alert(1)</script>`, "email": "jo@example.com"}})
	hpp, vt := pageURLs(r)
	b := newBrowser(t, env)
	script := b.get(env.Server.URL + "/checkout/static/app.js").body
	if !strings.Contains(script, "addEventListener") {
		t.Fatalf("script not served: %q", script)
	}
	tests := []struct {
		name     string
		url      string
		want     []string
		wantNot  []string
		wantCode int
	}{
		{"hosted page", hpp,
			[]string{"Bob&#39;s &lt;b&gt;Bikes&lt;/b&gt; &amp; &#34;Co&#34;", "&lt;img src=x onerror=alert(1)&gt;",
				`value="&#34;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"`, "AUD 10.50", "Apple Pay", "Google Pay", "Zip",
				`value="jo@example.com"`, `for="card_number"`, "Billing address"},
			[]string{"<script>alert", "<b>Bikes", "<img src=x", "invoice_number"}, 200},
		{"virtual terminal", vt,
			[]string{"Virtual terminal", `name="invoice_number"`, `name="customer_reference"`, "AUD 10.50"},
			[]string{"Apple Pay", "Google Pay", "/zip", "<script>alert"}, 200},
		{"unknown token", env.Server.URL + "/pay/" + strings.Repeat("x", 32), []string{"No payment link"}, nil, 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := b.get(tt.url)
			if p.status != tt.wantCode {
				t.Fatalf("got status %d, want %d", p.status, tt.wantCode)
			}
			for _, w := range tt.want {
				if !strings.Contains(p.body, w) {
					t.Errorf("page lacks %q", w)
				}
			}
			for _, w := range tt.wantNot {
				if strings.Contains(p.body, w) {
					t.Errorf("page contains %q", w)
				}
			}
			csp := p.header.Get("Content-Security-Policy")
			for _, w := range []string{"script-src 'nonce-", "frame-ancestors 'none'", "default-src 'none'", "form-action 'self'"} {
				if !strings.Contains(csp, w) {
					t.Errorf("CSP %q lacks %q", csp, w)
				}
			}
			if strings.Contains(csp, "unsafe-inline") || p.header.Get("Referrer-Policy") != "no-referrer" || p.header.Get("X-Frame-Options") != "DENY" {
				t.Errorf("got headers %v, want a strict CSP, Referrer-Policy no-referrer and X-Frame-Options DENY", p.header)
			}
			if strings.Contains(p.body, " onclick=") || strings.Contains(p.body, " onload=") {
				t.Errorf("page has an inline event handler")
			}
			if weight := len(p.body) + len(script); weight > 100<<10 {
				t.Errorf("page and script weigh %d bytes, want under 100 KB", weight)
			}
		})
	}
}

func TestCardPaymentDeclineThenApprove(t *testing.T) {
	env := start(t)
	m := env.Onboard(func(n *paylink.NewMerchant) { n.Settings.Webhook.Domains = []string{"hooks.example.com"} })
	r := link(t, env, m, "10.50", map[string]any{"webhook_url": "https://hooks.example.com/pay"})
	hpp, _ := pageURLs(r)
	b := newBrowser(t, env)
	csrf := b.get(hpp).csrf(t)

	declined := b.post(hpp, cardForm(csrf, cardDecline))
	if declined.status != 200 || !strings.Contains(declined.body, "your card was declined by your bank") || !strings.Contains(declined.body, `role="alert"`) {
		t.Fatalf("decline: got %d, want 200 with the decline announced:\n%s", declined.status, declined.body)
	}
	if strings.Contains(declined.body, "Ask the customer") {
		t.Errorf("the customer is shown the processor's words for the merchant:\n%s", declined.body)
	}
	if strings.Contains(declined.body, cardDecline) {
		t.Errorf("the card number was rendered back into the page")
	}
	if got := linkState(t, env, m, r.Str("id")); got.Str("status") != "unpaid" || got.Str("attempts") != "1" {
		t.Errorf("after decline: got %s, want unpaid with 1 attempt", got.Raw)
	}
	// A processing error says so once, in the page's words, with one piece
	// of advice: not the processor's "Try again later." followed by "Check
	// the details and try again".
	failed := b.post(hpp, cardForm(csrf, processor.CardProcessingError))
	wantFailed := "Payment not completed: the payment processor could not process it. No money was taken. " +
		"Try again in a few minutes, or use another card or payment method.</div>"
	if failed.status != 200 || !strings.Contains(failed.body, wantFailed) || strings.Contains(failed.body, "Try again later") {
		t.Errorf("processing error: got %d, want 200 with %q alone:\n%s", failed.status, wantFailed, failed.body)
	}

	ok := b.post(hpp, cardForm(csrf, cardOK))
	if ok.status != http.StatusSeeOther || ok.header.Get("Location") != strings.TrimPrefix(hpp, env.Server.URL) {
		t.Fatalf("approve: got %d to %q, want 303 to the page", ok.status, ok.header.Get("Location"))
	}
	paid := b.get(hpp)
	st := linkState(t, env, m, r.Str("id"))
	ref := st.Str("transaction_reference")
	if st.Str("status") != "paid" || ref == "" || !strings.Contains(paid.body, ref) || !strings.Contains(paid.body, "AUD 10.63") {
		t.Fatalf("after approval: link %s, page lacks reference %q or total AUD 10.63", st.Raw, ref)
	}
	tr := transaction(t, env, m, ref)
	want := paylink.Transaction{Channel: paylink.ChannelHPP, PaymentType: paylink.PaymentTypeCard, PaymentLinkID: r.Str("id"),
		InvoiceNumber: "ORDER-42", Status: paylink.StatusApproved, Amount: 1050, Surcharge: 13, Total: 1063}
	if tr.Channel != want.Channel || tr.PaymentType != want.PaymentType || tr.PaymentLinkID != want.PaymentLinkID ||
		tr.InvoiceNumber != want.InvoiceNumber || tr.Status != want.Status || tr.Total != want.Total || tr.Surcharge != want.Surcharge ||
		tr.Details.WebhookURL != "https://hooks.example.com/pay" || tr.Details.Customer.Reference != "CUST-7" ||
		tr.Details.Customer.IPAddress != "127.0.0.1" || tr.Details.Customer.Timezone != "UTC" {
		t.Errorf("got transaction %+v (details %+v), want %+v with the link's webhook and customer reference", tr, tr.Details, want)
	}

	again := b.post(hpp, cardForm(csrf, cardOK))
	if again.status != http.StatusConflict || !strings.Contains(again.body, "already been paid") || !strings.Contains(again.body, ref) {
		t.Errorf("second payment: got %d, want 409 showing the link paid", again.status)
	}
	logs := env.LogText()
	tok := strings.TrimPrefix(hpp, env.Server.URL+"/pay/")
	for _, secret := range []string{cardOK, cardDecline, tok, "card_cvc"} {
		if strings.Contains(logs, secret) {
			t.Errorf("logs contain %q", secret)
		}
	}
}

// TestPaymentFromAZonedIPv6Address: a customer on an IPv6 link-local
// address with a zone (fe80::1%eth0) pays on the hosted page, and the
// transaction keeps the address without the zone (it was a 500).
func TestPaymentFromAZonedIPv6Address(t *testing.T) {
	env := start(t)
	m := env.Onboard()
	r, hpp, b, csrf := openPage(t, env, m)
	paid := b.postFrom(env, "[fe80::1%eth0]:52100", hpp, cardForm(csrf, cardOK))
	if paid.status != http.StatusSeeOther {
		t.Fatalf("pay: got %d, want 303 to the page:\n%s", paid.status, paid.body)
	}
	st := linkState(t, env, m, r.Str("id"))
	tr := transaction(t, env, m, st.Str("transaction_reference"))
	if tr.Status != paylink.StatusApproved || tr.Details.Customer.IPAddress != "fe80::1" {
		t.Errorf("got %s from %q, want APPROVED from fe80::1", tr.Status, tr.Details.Customer.IPAddress)
	}
}

// TestFormErrorsListTheDetailsToo: a form without its card, whose email
// and country would be refused, lists those with the card's problems at
// once (hosted page sweep: only the card's were listed, and the details
// were refused a round later, the typed card cleared with them).
func TestFormErrorsListTheDetailsToo(t *testing.T) {
	env := start(t)
	hpp, _ := pageURLs(link(t, env, env.Onboard(), "10.50", nil))
	b := newBrowser(t, env)
	f := url.Values{"csrf": {b.get(hpp).csrf(t)}, "first_name": {"Jo"}, "email": {"not-an-email"}, "country_code": {"uk"}}
	p := b.post(hpp, f)
	if p.status != http.StatusBadRequest {
		t.Fatalf("got %d, want 400", p.status)
	}
	for _, w := range []string{`href="#card_number"`, `href="#email"`, `href="#country_code"`} {
		if !strings.Contains(p.body, w) {
			t.Errorf("the error summary lacks %q:\n%s", w, p.body)
		}
	}
}

// TestEveryCardProblemIsListedAtOnce: without JavaScript, a form with an
// empty field and a card number and expiry that are not valid lists all
// of them in one answer, so that the customer, who types the card again
// after each (card fields are never written back), learns of each once
// (the accessibility sweep found the number's and expiry's problems
// shown only after the next submit).
func TestEveryCardProblemIsListedAtOnce(t *testing.T) {
	env := start(t)
	m := env.Onboard()
	hpp, _ := pageURLs(link(t, env, m, "10.50", nil))
	b := newBrowser(t, env)
	f := cardForm(b.get(hpp).csrf(t), "4111111111111112")
	f.Set("card_expiry", "13/20")
	f.Del("card_holder")
	f.Del("card_cvc")
	p := b.post(hpp, f)
	if p.status != http.StatusBadRequest {
		t.Fatalf("got %d, want 400", p.status)
	}
	for _, w := range []string{`href="#card_number">Card number: This card number is not valid.`,
		`href="#card_expiry">Expiry: Enter the expiry date as MM/YY.`, `href="#card_holder">`, `href="#card_cvc">`} {
		if !strings.Contains(p.body, w) {
			t.Errorf("the error summary lacks %q", w)
		}
	}
}

func TestFormErrorsKeepDetails(t *testing.T) {
	env := start(t)
	m := env.Onboard()
	hpp, _ := pageURLs(link(t, env, m, "10.50", nil))
	b := newBrowser(t, env)
	csrf := b.get(hpp).csrf(t)
	f := cardForm(csrf, "4111111111111112")
	f.Set("card_expiry", "13/30")
	f.Set("email", "not-an-email")
	f.Set("city", "Newtown")
	p := b.post(hpp, f)
	if p.status != http.StatusBadRequest {
		t.Fatalf("got %d, want 400", p.status)
	}
	for _, w := range []string{`id="errsum"`, `href="#card_number"`, `href="#card_expiry"`, `value="Newtown"`, `aria-invalid="true"`} {
		if !strings.Contains(p.body, w) {
			t.Errorf("page lacks %q", w)
		}
	}
	if strings.Contains(p.body, "4111111111111112") {
		t.Errorf("the card number was rendered back into the page")
	}
	// The summary lists the problems in the page's reading order (not by
	// field name), each naming its field.
	var got []string
	for _, m := range summaryItemRE.FindAllStringSubmatch(p.body, -1) {
		got = append(got, m[1])
	}
	want := []string{`href="#email">Email: `, `href="#card_number">Card number: This card number is not valid.`,
		`href="#card_expiry">Expiry: Enter the expiry date as MM/YY.`}
	if len(got) != len(want) {
		t.Fatalf("error summary: got %q, want %d items starting %q", got, len(want), want)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("error summary item %d: got %q, want it to start %q", i, got[i], want[i])
		}
	}
	// The card fields' problems are in the page's words (the script's),
	// not the API's ("card number is not valid (Luhn check failed)").
	f = cardForm(p.csrf(t), cardOK)
	f.Set("card_expiry", "01/20")
	f.Set("card_cvc", "12a")
	p = b.post(hpp, f)
	for _, w := range []string{`id="card_expiry-err" aria-live="polite">This card has expired.<`,
		`id="card_cvc-err" aria-live="polite">Enter the card&#39;s 3-digit security code.<`} {
		if !strings.Contains(p.body, w) {
			t.Errorf("expired card, bad security code: got %d, page lacks %q", p.status, w)
		}
	}
	if strings.Contains(p.body, "Luhn") || strings.Contains(p.body, "Must be 3") {
		t.Errorf("the page shows the API's words for a card field")
	}
}

// TestEveryDetailsFieldShowsItsOwnError: a problem with any of the
// customer's fields (hosted page and virtual terminal) is shown next to
// the field, which is marked invalid and described by it, as well as in
// the summary: without JavaScript that is the only way a screen reader
// user on the field hears what is wrong with it.
func TestEveryDetailsFieldShowsItsOwnError(t *testing.T) {
	env := start(t)
	m := env.Onboard()
	hpp, vt := pageURLs(link(t, env, m, "10.50", nil))
	fields := map[string][]string{
		hpp: {"first_name", "last_name", "email", "phone", "address", "address2", "city", "state", "postcode", "country_code"},
		vt:  {"customer_reference", "invoice_number", "first_name", "postcode"},
	}
	for u, names := range fields {
		b := newBrowser(t, env)
		for _, name := range names {
			f := cardForm(b.get(u).csrf(t), cardOK)
			f.Set(name, "4000 0000 0000 0002")
			p := b.post(u, f)
			if p.status != http.StatusBadRequest {
				t.Fatalf("%s: got %d, want 400", name, p.status)
			}
			for _, w := range []string{`aria-invalid="true" aria-describedby="` + name + `-err"`, `<span class="err" id="` + name + `-err">This looks like a card number`} {
				if !strings.Contains(p.body, w) {
					t.Errorf("%s: the page lacks %q", name, w)
				}
			}
		}
	}
}

// summaryItemRE matches an item of the error summary.
var summaryItemRE = regexp.MustCompile(`<li><a (href="#[a-z_0-9]+">[^<]*)</a></li>`)

// A card number typed into another field is refused before the payment
// and never written back into the page.
func TestCardNumberInAnotherFieldIsNotShownBack(t *testing.T) {
	env := start(t)
	m := env.Onboard()
	r := link(t, env, m, "10.50", nil)
	hpp, _ := pageURLs(r)
	b := newBrowser(t, env)
	f := cardForm(b.get(hpp).csrf(t), cardOK)
	f.Set("address", "4000 0000 0000 0002")
	f.Set("city", "Newtown")
	p := b.post(hpp, f)
	if p.status != http.StatusBadRequest || !strings.Contains(p.body, `href="#address"`) || !strings.Contains(p.body, `value="Newtown"`) {
		t.Fatalf("got %d, want 400 naming the address and keeping the city:\n%s", p.status, p.body)
	}
	if strings.Contains(p.body, "4000 0000 0000 0002") || strings.Contains(p.body, "4000000000000002") {
		t.Errorf("the card number typed into the address was written back into the page")
	}
	if got := linkState(t, env, m, r.Str("id")); got.Str("attempts") != "0" {
		t.Errorf("attempts: got %s, want 0 (refused before the payment)", got.Str("attempts"))
	}
}

// A field the Service refuses (an email or a country code it does not
// take, here in the shapes of a card number the detector does not look
// for) is shown again empty with its message, like one refused before
// the payment.
func TestRefusedFieldIsNotShownBack(t *testing.T) {
	env := start(t)
	_, hpp, b, _ := openPage(t, env, env.Onboard())
	for field, value := range map[string]string{"email": "4111,1111,1111,1111", "country_code": "ZZ"} {
		f := cardForm(b.get(hpp).csrf(t), cardOK)
		f.Set(field, value)
		p := b.post(hpp, f)
		if p.status != http.StatusBadRequest || !strings.Contains(p.body, `href="#`+field+`"`) {
			t.Fatalf("%s %q: got %d, want 400 naming the field:\n%s", field, value, p.status, p.body)
		}
		if strings.Contains(p.body, `value="`+value+`"`) {
			t.Errorf("%s: the refused value %q was written back into the page", field, value)
		}
	}
}

func TestCSRFRejected(t *testing.T) {
	env := start(t)
	m := env.Onboard()
	r := link(t, env, m, "10.50", nil)
	hpp, vt := pageURLs(r)
	victim, attacker := newBrowser(t, env), newBrowser(t, env)
	victim.get(hpp)
	attackerToken := attacker.get(hpp).csrf(t)
	vtToken := victim.get(vt).csrf(t)
	tests := []struct {
		name string
		url  string
		csrf string
	}{
		{"no token", hpp, ""},
		{"another browser's token", hpp, attackerToken},
		{"the virtual terminal's token on the hosted page", hpp, vtToken},
		{"forged token", hpp, strings.Repeat("A", 43)},
		{"wallet without token", hpp + "/wallet/applepay", ""},
		{"zip confirm without token", hpp + "/zip/confirm", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := victim.post(tt.url, cardForm(tt.csrf, cardOK))
			if p.status != http.StatusForbidden || !strings.Contains(p.body, "Reload the page") || !strings.Contains(p.body, backLink(hpp)) {
				t.Errorf("got %d, want 403 asking to reload, with a link back to the page:\n%s", p.status, p.body)
			}
		})
	}
	// A browser that keeps no cookie posts the token of the page it was
	// shown without the cookie it was made for: it is told that the form
	// needs the cookie, since reloading alone never helps it (hosted page
	// sweep: "Reload the page and try again", again and again).
	cookieless := &browser{t: t, c: &http.Client{CheckRedirect: victim.c.CheckRedirect}, origin: env.Server.URL}
	p := cookieless.post(hpp, cardForm(cookieless.get(hpp).csrf(t), cardOK))
	if p.status != http.StatusForbidden || !strings.Contains(p.body, "did not send this payment page") || !strings.Contains(p.body, backLink(hpp)) {
		t.Errorf("a browser without cookies: got %d, want 403 saying the form needs the cookie:\n%s", p.status, p.body)
	}
	req, _ := http.NewRequest(http.MethodPost, hpp+"/surcharge", strings.NewReader(`{"card_number":"4111111111111111"}`))
	if p := victim.do(req); p.status != http.StatusForbidden {
		t.Errorf("surcharge without token: got %d, want 403", p.status)
	}
	if got := linkState(t, env, m, r.Str("id")); got.Str("attempts") != "0" || got.Str("status") != "unpaid" {
		t.Errorf("after rejected posts: got %s, want unpaid with 0 attempts", got.Raw)
	}
}

func TestAttemptRateLimit(t *testing.T) {
	env := start(t)
	m := env.Onboard()
	hpp, _ := pageURLs(link(t, env, m, "10.50", nil))
	b := newBrowser(t, env)
	csrf := b.get(hpp).csrf(t)
	for i := range paylink.LinkAttemptLimit {
		if p := b.post(hpp, cardForm(csrf, cardDecline)); p.status != http.StatusOK {
			t.Fatalf("attempt %d: got %d, want 200 (declined)", i+1, p.status)
		}
	}
	// 100 s into the window, it ends in 800 s: the page says the wait in
	// minutes, rounded up, as Retry-After says it in seconds.
	env.Clock.Advance(100 * time.Second)
	p := b.post(hpp, cardForm(csrf, cardOK))
	if p.status != http.StatusTooManyRequests || !strings.Contains(p.body, "Too many payment attempts on this link: wait 14 minutes before trying again.") {
		t.Fatalf("attempt %d: got %d, want 429 saying to wait 14 minutes:\n%s", paylink.LinkAttemptLimit+1, p.status, p.body)
	}
	if got, want := p.header.Get("Retry-After"), strconv.Itoa(int(paylink.LinkAttemptWindow.Seconds())-100); got != want {
		t.Errorf("Retry-After: got %q, want %s (the attempt window's end)", got, want)
	}
	// A wallet's sheet or Zip's page is not opened either, only for its
	// approval to be refused (hosted page sweep: the sheet offered
	// "Approve and pay", which answered 429).
	for _, method := range []string{"/wallet/applepay", "/wallet/googlepay", "/zip"} {
		p := b.post(hpp+method, url.Values{"csrf": {csrf}})
		if p.status != http.StatusTooManyRequests || !strings.Contains(p.body, "Too many payment attempts on this link") ||
			strings.Contains(p.body, "Approve and pay") {
			t.Errorf("%s past the attempts: got %d, want 429 with the link's page and no sheet:\n%s", method, p.status, p.body)
		}
	}
	env.Clock.Advance(paylink.LinkAttemptWindow - 100*time.Second)
	if p := b.post(hpp, cardForm(csrf, cardOK)); p.status != http.StatusSeeOther {
		t.Errorf("after the window: got %d, want 303 (approved)", p.status)
	}
}

// TestLastAttemptHeldByAChallenge: the fifth attempt of the window waits
// for its 3-D Secure challenge; the customer reloads the page in the same
// browser: the page is shown (its form, the open attempt replaceable),
// and a card or wallet tried then gets the 429 page with Retry-After
// (second verification sweep: checking the attempts in CheckLinkPayable
// made the page itself a bare 429 error, without Retry-After, whose link
// back led to itself).
func TestLastAttemptHeldByAChallenge(t *testing.T) {
	env := start(t)
	hpp, _ := pageURLs(link(t, env, env.Onboard(), "10.50", nil))
	b := newBrowser(t, env)
	csrf := b.get(hpp).csrf(t)
	for i := range paylink.LinkAttemptLimit - 1 {
		if p := b.post(hpp, cardForm(csrf, cardDecline)); p.status != http.StatusOK {
			t.Fatalf("attempt %d: got %d, want 200 (declined)", i+1, p.status)
		}
	}
	if p := b.post(hpp, cardForm(csrf, card3DS)); p.status != http.StatusSeeOther {
		t.Fatalf("the last attempt: got %d, want 303 to its challenge", p.status)
	}
	if p := b.get(hpp); p.status != http.StatusOK || !strings.Contains(p.body, `name="card_number"`) {
		t.Errorf("the page while its own challenge holds the last attempt: got %d, want 200 with the form", p.status)
	}
	for _, post := range []struct {
		path string
		form url.Values
	}{{hpp, cardForm(csrf, cardOK)}, {hpp + "/wallet/applepay", url.Values{"csrf": {csrf}}}} {
		p := b.post(post.path, post.form)
		if p.status != http.StatusTooManyRequests || p.header.Get("Retry-After") == "" || !strings.Contains(p.body, "Too many payment attempts on this link") {
			t.Errorf("POST %s past the attempts: got %d (Retry-After %q), want the 429 page with Retry-After", post.path, p.status, p.header.Get("Retry-After"))
		}
	}
}

// TestTwoTabsPayAtOnce races payments on one link: exactly one is taken,
// on SQLite and on PostgreSQL.
func TestTwoTabsPayAtOnce(t *testing.T) {
	engines := []struct {
		name  string
		start func(testing.TB) *apitest.Env
	}{{"sqlite", start}, {"postgres", startPostgres}}
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			env := e.start(t)
			racePayments(t, env)
		})
	}
}

func racePayments(t *testing.T, env *apitest.Env) {
	m := env.Onboard()
	r := link(t, env, m, "10.50", nil)
	hpp, _ := pageURLs(r)
	const tabs = 8
	var wg sync.WaitGroup
	statuses := make(chan int, tabs)
	type tab struct {
		b    *browser
		csrf string
	}
	var open []tab
	for range tabs {
		b := newBrowser(t, env)
		open = append(open, tab{b, b.get(hpp).csrf(t)})
	}
	for _, tb := range open {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses <- tb.b.post(hpp, cardForm(tb.csrf, cardOK)).status
		}()
	}
	wg.Wait()
	close(statuses)
	counts := map[int]int{}
	for s := range statuses {
		counts[s]++
	}
	if counts[http.StatusSeeOther] != 1 || counts[http.StatusConflict] != tabs-1 {
		t.Errorf("got statuses %v, want exactly one 303 and %d 409", counts, tabs-1)
	}
	if got := linkState(t, env, m, r.Str("id")); got.Str("status") != "paid" || got.Str("attempts") != "1" {
		t.Errorf("got link %s, want paid after exactly 1 attempt", got.Raw)
	}
}

func TestWalletsAndZip(t *testing.T) {
	env := start(t)
	m := env.Onboard()
	tests := []struct {
		name, path, paymentType string
		total                   int64
		brand                   string
	}{
		{"Apple Pay", "/wallet/applepay", paylink.PaymentTypeApplePay, 1063, paylink.BrandVisa},
		{"Google Pay", "/wallet/googlepay", paylink.PaymentTypeGooglePay, 1063, paylink.BrandMastercard},
		{"Zip", "/zip", paylink.PaymentTypeZip, 1050, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := link(t, env, m, "10.50", nil)
			hpp, _ := pageURLs(r)
			b := newBrowser(t, env)
			f := url.Values{"csrf": {b.get(hpp).csrf(t)}, "first_name": {"Sam"}, "email": {"sam@example.com"}}
			sheet := b.post(hpp+tt.path, f)
			if sheet.status != 200 || !strings.Contains(sheet.body, tt.name+" (sandbox)") || !strings.Contains(sheet.body, `value="Sam"`) {
				t.Fatalf("sheet: got %d, want 200 with the %s sandbox sheet carrying the customer", sheet.status, tt.name)
			}
			done := b.post(hpp+tt.path+"/confirm", f)
			if done.status != http.StatusSeeOther {
				t.Fatalf("confirm: got %d, want 303:\n%s", done.status, done.body)
			}
			st := linkState(t, env, m, r.Str("id"))
			tr := transaction(t, env, m, st.Str("transaction_reference"))
			brand := ""
			if tr.Details.Card != nil {
				brand = tr.Details.Card.Brand
			}
			if st.Str("status") != "paid" || tr.PaymentType != tt.paymentType || tr.Total != tt.total || brand != tt.brand ||
				tr.Channel != paylink.ChannelHPP || tr.Details.Customer.FirstName != "Sam" || tr.PaymentLinkID != r.Str("id") {
				t.Errorf("got link %s and transaction %+v, want paid by %s total %d brand %q", st.Raw, tr, tt.paymentType, tt.total, tt.brand)
			}
			if p := b.get(hpp); !strings.Contains(p.body, "paid with "+tt.name) {
				t.Errorf("paid page does not name %s", tt.name)
			}
		})
	}
}

func TestVirtualTerminal(t *testing.T) {
	env := start(t)
	m := env.Onboard()
	r := link(t, env, m, "10.50", nil)
	_, vt := pageURLs(r)
	b := newBrowser(t, env)
	csrf := b.get(vt).csrf(t)
	// Methods that need the customer are not offered to an agent (spec 1.1).
	for _, method := range []string{"/wallet/applepay", "/wallet/googlepay", "/zip"} {
		if p := b.post(vt+method, url.Values{"csrf": {csrf}}); p.status != http.StatusNotFound {
			t.Errorf("%s in the virtual terminal: got %d, want 404", method, p.status)
		}
	}
	// A card that always asks for a challenge is paid without one: 3-D
	// Secure needs the cardholder, who is not at the agent's screen.
	// An invoice number takes what the API takes (MaxInvoiceLength), more
	// than another field's 128 characters.
	if p := b.get(vt); !strings.Contains(p.body, fmt.Sprintf(`name="invoice_number" value="" maxlength="%d"`, paylink.MaxInvoiceLength)) {
		t.Errorf("the invoice number's maxlength is not MaxInvoiceLength:\n%s", p.body)
	}
	// Every other text field takes the API's 128 characters (a postcode
	// had 16).
	page := b.get(vt).body
	for _, name := range []string{"customer_reference", "first_name", "last_name", "email", "phone", "address", "address2", "city", "state", "postcode"} {
		m := regexp.MustCompile(`name="` + name + `"[^>]* maxlength="(\d+)"`).FindStringSubmatch(page)
		if m == nil || m[1] != strconv.Itoa(paylink.MaxFieldLength) {
			t.Errorf("%s's maxlength: got %q, want %d", name, m, paylink.MaxFieldLength)
		}
	}
	// An invoice number follows the API's rule: ".." could never be
	// looked up by invoice.
	dots := cardForm(csrf, cardOK)
	dots.Set("invoice_number", "..")
	if p := b.post(vt, dots); p.status != http.StatusBadRequest || !strings.Contains(p.body, `id="invoice_number-err"`) {
		t.Errorf("invoice number ..: got %d, want 400 naming the invoice number", p.status)
	}
	invoice := "INV-777-" + strings.Repeat("X", 192)
	f := cardForm(csrf, card3DS)
	f.Set("customer_reference", "PHONE-CUST-1")
	f.Set("invoice_number", invoice)
	if p := b.post(vt, f); p.status != http.StatusSeeOther {
		t.Fatalf("pay: got %d, want 303:\n%s", p.status, p.body)
	}
	st := linkState(t, env, m, r.Str("id"))
	tr := transaction(t, env, m, st.Str("transaction_reference"))
	if tr.Channel != paylink.ChannelVT || tr.InvoiceNumber != invoice || tr.Details.Customer.Reference != "PHONE-CUST-1" ||
		tr.Details.ThreeDS != nil || tr.PaymentType != paylink.PaymentTypeCard {
		t.Errorf("got transaction %+v (details %+v), want VT, the 200-character invoice, PHONE-CUST-1, no 3-D Secure", tr, tr.Details)
	}
}

// TestFormThatIsNotTextIsRefused: on PostgreSQL, which refuses bytes
// that are not UTF-8 in a text parameter, such a field was a 500 (the
// virtual terminal's invoice number) and such a query value too (the 3-D
// Secure return); both are a 400 now and take no money, while a browser
// whose User-Agent is not UTF-8 still pays.
func TestFormThatIsNotTextIsRefused(t *testing.T) {
	env := startPostgres(t)
	m := env.Onboard()
	r := link(t, env, m, "10.50", nil)
	hpp, vt := pageURLs(r)
	b := newBrowser(t, env)
	f := cardForm(b.get(vt).csrf(t), cardOK)
	f.Set("invoice_number", "INV\xff\xfe")
	if p := b.post(vt, f); p.status != http.StatusBadRequest {
		t.Errorf("invoice number not UTF-8: got %d, want 400:\n%s", p.status, p.body)
	}
	if p := b.get(hpp + "/3ds?purchase_reference=%ff"); p.status != http.StatusBadRequest {
		t.Errorf("3-D Secure return not UTF-8: got %d, want 400", p.status)
	}
	if st := linkState(t, env, m, r.Str("id")); st.Str("transaction_reference") != "" {
		t.Fatalf("got a payment %s, want none", st.Str("transaction_reference"))
	}
	req, _ := http.NewRequest(http.MethodPost, hpp, strings.NewReader(cardForm(b.get(hpp).csrf(t), cardOK).Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("User-Agent", "Mozilla/5.0 \xff\xfe")
	if p := b.do(req); p.status != http.StatusSeeOther {
		t.Fatalf("pay with a User-Agent that is not UTF-8: got %d, want 303:\n%s", p.status, p.body)
	}
	tr := transaction(t, env, m, linkState(t, env, m, r.Str("id")).Str("transaction_reference"))
	if ua := tr.Details.Customer.UserAgent; ua != "Mozilla/5.0 \uFFFD" {
		t.Errorf("got User-Agent %q, want it made UTF-8", ua)
	}
}

// TestSecurityCodeLengthFollowsTheBrand: without JavaScript, the form
// refuses a security code of the wrong length for the card's brand (an
// American Express code has 4 digits, every other brand's 3) in the
// customer's words, with no attempt on the link; the right length pays.
func TestSecurityCodeLengthFollowsTheBrand(t *testing.T) {
	env := start(t)
	m := env.Onboard()
	tests := []struct {
		name, number, cvc, want string
	}{
		{"American Express with 3 digits", "378282246310005", "123", "Enter the card&#39;s 4-digit security code."},
		{"Visa with 4 digits", cardOK, "1234", "Enter the card&#39;s 3-digit security code."},
		{"Mastercard with 4 digits", "5555555555554444", "1234", "Enter the card&#39;s 3-digit security code."},
		{"American Express with 4 digits", "378282246310005", "1234", ""},
		// A code of the wrong shape asks for the brand's length too, as
		// the script does (the verification sweep found "3 or 4").
		{"Visa with 2 digits", cardOK, "12", "Enter the card&#39;s 3-digit security code."},
		{"American Express with a letter", "378282246310005", "12a4", "Enter the card&#39;s 4-digit security code."},
		{"Visa left empty", cardOK, "", "Enter the card&#39;s 3-digit security code."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := link(t, env, m, "10.50", nil)
			hpp, _ := pageURLs(r)
			b := newBrowser(t, env)
			f := cardForm(b.get(hpp).csrf(t), tt.number)
			f.Set("card_cvc", tt.cvc)
			p := b.post(hpp, f)
			st := linkState(t, env, m, r.Str("id"))
			if tt.want == "" {
				if p.status != http.StatusSeeOther || st.Str("status") != "paid" {
					t.Errorf("got %d and link %s, want 303 and paid", p.status, st.Raw)
				}
				return
			}
			if w := `id="card_cvc-err" aria-live="polite">` + tt.want + `<`; p.status != http.StatusBadRequest || !strings.Contains(p.body, w) {
				t.Errorf("got %d, want 400 with %q:\n%s", p.status, w, p.body)
			}
			if st.Str("status") != "unpaid" || st.Str("attempts") != "0" {
				t.Errorf("got link %s, want unpaid with no attempt", st.Raw)
			}
		})
	}
}

// TestNoSurchargeReadsNone: where nothing is added, the live quote, the
// wallet sheet and the paid page all say "None", not "AUD 0.00 (1.2%,
// Visa)" live, "AUD 0.00 (0%)" on the sheet and "None" once paid.
func TestNoSurchargeReadsNone(t *testing.T) {
	env := start(t)
	m := env.Onboard()
	off, _ := pageURLs(link(t, env, m, "10.50", map[string]any{"should_service_apply_surcharge": false}))
	cent, _ := pageURLs(link(t, env, m, "0.01", nil)) // 1.2% of a cent rounds to nothing
	for name, page := range map[string]string{"surcharge off": off, "rounds to zero": cent} {
		t.Run(name, func(t *testing.T) {
			b := newBrowser(t, env)
			csrf := b.get(page).csrf(t)
			if p := b.quote(page, csrf, `{"card_number":"4111111111111111"}`); !strings.Contains(p.body, `"surcharge_label":"None"`) {
				t.Errorf("live quote: got %d %s, want surcharge_label None", p.status, p.body)
			}
			sheet := b.post(page+"/wallet/applepay", url.Values{"csrf": {csrf}})
			if !strings.Contains(sheet.body, `<dd id="surcharge">None</dd>`) {
				t.Errorf("wallet sheet: got %d, want the surcharge None:\n%s", sheet.status, sheet.body)
			}
		})
	}
}

// TestSheetsCheckTheDetailsFirst: a wallet's sheet or Zip's approval is
// offered only for details the payment would take; a mistyped email is
// shown on the form beside its field (400, no attempt), where it used to
// be refused only after the customer approved (a 400 at /zip/confirm).
func TestSheetsCheckTheDetailsFirst(t *testing.T) {
	env := start(t)
	m := env.Onboard()
	for _, method := range []string{"/zip", "/wallet/applepay", "/wallet/googlepay"} {
		t.Run(method, func(t *testing.T) {
			r := link(t, env, m, "10.50", nil)
			hpp, _ := pageURLs(r)
			b := newBrowser(t, env)
			f := url.Values{"csrf": {b.get(hpp).csrf(t)}, "first_name": {"Jo"}, "email": {"not-an-email"}}
			p := b.post(hpp+method, f)
			if p.status != http.StatusBadRequest || strings.Contains(p.body, `id="sheet-pay"`) ||
				!strings.Contains(p.body, `<span class="err" id="email-err">Must be an email address.</span>`) {
				t.Errorf("got %d, want 400 with the form and the email's problem, no sheet:\n%s", p.status, p.body)
			}
			if st := linkState(t, env, m, r.Str("id")); st.Str("attempts") != "0" {
				t.Errorf("got link %s, want no attempt", st.Raw)
			}
			f.Set("email", "jo@example.com")
			if p := b.post(hpp+method, f); p.status != http.StatusOK || !strings.Contains(p.body, `id="sheet-pay"`) {
				t.Errorf("with a good email: got %d, want 200 with the sheet", p.status)
			}
		})
	}
}

func TestSurchargeQuote(t *testing.T) {
	env := start(t)
	m := env.Onboard()
	hpp, _ := pageURLs(link(t, env, m, "10.50", nil))
	noSurcharge, _ := pageURLs(link(t, env, m, "10.50", map[string]any{"should_service_apply_surcharge": false}))
	tests := []struct {
		name, page, number, surcharge, total, label string
		status                                      int
	}{
		{"visa credit 1.2%", hpp, "4111 1111 1111 1111", "AUD 0.13", "AUD 10.63", "AUD 0.13 (1.2%, Visa)", 200},
		{"visa debit 0.5%", hpp, "4000056655665556", "AUD 0.05", "AUD 10.55", "AUD 0.05 (0.5%, Visa)", 200},
		{"amex 2.5%", hpp, "378282246310005", "AUD 0.26", "AUD 10.76", "AUD 0.26 (2.5%, American Express)", 200},
		{"international 2.9%", hpp, "4000008260000000", "AUD 0.30", "AUD 10.80", "AUD 0.30 (2.9%, Visa)", 200},
		{"surcharge off", noSurcharge, "4111111111111111", "AUD 0.00", "AUD 10.50", "None", 200},
		{"invalid number", hpp, "4111111111111112", "", "", "", 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBrowser(t, env)
			csrf := b.get(tt.page).csrf(t)
			p := b.quote(tt.page, csrf, `{"card_number":"`+tt.number+`"}`)
			if p.status != tt.status || !strings.Contains(p.body, `"surcharge":"`+tt.surcharge) || !strings.Contains(p.body, `"total":"`+tt.total) ||
				!strings.Contains(p.body, `"surcharge_label":"`+tt.label) {
				if tt.status == 200 || p.status != tt.status {
					t.Errorf("got %d %s, want %d surcharge %q total %q", p.status, p.body, tt.status, tt.surcharge, tt.total)
				}
			}
		})
	}
}

// TestSurchargeQuoteBody: the live quote's body is one JSON object with
// the number a string (hostile-input sweep: anything after the object was
// ignored, and a number sent as a JSON number was "body must be JSON").
func TestSurchargeQuoteBody(t *testing.T) {
	env := start(t)
	m := env.Onboard()
	hpp, _ := pageURLs(link(t, env, m, "10.00", nil))
	b := newBrowser(t, env)
	csrf := b.get(hpp).csrf(t)
	const visa = "4111111111111111"
	for _, tt := range []struct {
		body, want string
		status     int
	}{
		{`{"card_number":"` + visa + `"} trailing`, `"error_code":"malformed_json"`, 400},
		{`{"card_number":"` + visa + `"}{}`, `"error_code":"malformed_json"`, 400},
		{`{"card_number":"` + visa, `"error_code":"malformed_json"`, 400},
		{`{"card_number":` + visa + `}`, `card_number: must be a string`, 400},
		{`["` + visa + `"]`, `"error_code":"malformed_json"`, 400},
		{`42`, `"error_code":"malformed_json"`, 400},
		{`{"card_number":"` + visa + `","pad":"` + strings.Repeat("a", 20<<10) + `"}`, `"error_code":"body_too_large"`, 413},
		{`{"card_number":"` + visa + `"}` + strings.Repeat(" ", 20<<10), `"error_code":"body_too_large"`, 413},
		{`{"card_number":"` + visa + `","extra":[1]}` + "\n", `"brand":"visa"`, 200},
	} {
		if p := b.quote(hpp, csrf, tt.body); p.status != tt.status || !strings.Contains(p.body, tt.want) || strings.Contains(p.body, visa) {
			t.Errorf("%s: got %d %s, want %d with %s", tt.body, p.status, p.body, tt.status, tt.want)
		}
	}
}

// cancelledAndExpiring makes two AUD 10.50 links of m: one cancelled, one
// expiring in an hour.
func cancelledAndExpiring(t *testing.T, env *apitest.Env, m *apitest.Merchant) (cancelled, expiring apitest.Response) {
	t.Helper()
	cancelled = link(t, env, m, "10.50", nil)
	env.Post("/v5/payment-links/"+cancelled.Str("id")+"/cancel", m, nil)
	expiring = link(t, env, m, "10.50", map[string]any{"expires_at": env.Clock.Now().Add(time.Hour).UTC().Format(time.RFC3339)})
	return cancelled, expiring
}

func TestCancelledAndExpiredLinks(t *testing.T) {
	env := start(t)
	m := env.Onboard()
	cancelled, expiring := cancelledAndExpiring(t, env, m)
	b := newBrowser(t, env)
	expCSRF := b.get(expiring.Str("url")).csrf(t)
	env.Clock.Advance(2 * time.Hour)
	if p := b.get(cancelled.Str("url")); !strings.Contains(p.body, "has been cancelled") || strings.Contains(p.body, `id="payform"`) {
		t.Errorf("cancelled link page: want the cancelled notice and no form")
	}
	// A link that takes no payment shows what was asked, not what would
	// be due: no surcharge, its rates or total due.
	for name, u := range map[string]string{"cancelled": cancelled.Str("url"), "expired": expiring.Str("url")} {
		p := b.get(u)
		for _, gone := range []string{"Card surcharge", "Total due", `id="total"`} {
			if strings.Contains(p.body, gone) {
				t.Errorf("%s link page shows %q", name, gone)
			}
		}
		if !strings.Contains(p.body, "<dt>Subtotal</dt><dd>AUD 10.50</dd>") {
			t.Errorf("%s link page lacks the order's amount", name)
		}
	}
	if p := b.post(expiring.Str("url"), cardForm(expCSRF, cardOK)); p.status != http.StatusConflict || strings.Count(p.body, "has expired") != 1 {
		t.Errorf("paying an expired link: got %d, want 409 saying once that it expired:\n%s", p.status, p.body)
	}
}

// TestTerminalSpeaksToTheAgent: the virtual terminal's notices are worded
// for the merchant's agent, the hosted page's for the customer: a
// cancelled or expired link asks the agent for a new link rather than
// telling them to contact their own business, and a paid one says where
// its reference leads rather than to keep it for their records.
func TestTerminalSpeaksToTheAgent(t *testing.T) {
	env := start(t)
	m := env.Onboard()
	cancelled, expiring := cancelledAndExpiring(t, env, m)
	paid := link(t, env, m, "10.50", nil)
	b := newBrowser(t, env)
	b.post(paid.Str("url"), cardForm(b.get(paid.Str("url")).csrf(t), cardOK))
	env.Clock.Advance(2 * time.Hour)
	tests := []struct {
		name            string
		r               apitest.Response
		customer, agent string
	}{
		{"cancelled", cancelled, "Contact Acme Coffee for a new link.", "Create a new payment link to take this payment."},
		{"expired", expiring, "Contact Acme Coffee for a new link.", "Create a new payment link to take this payment."},
		{"paid", paid, "Keep this reference for your records.", "The payment is found by this reference in the dashboard and the API."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hpp, vt := b.get(tt.r.Str("url")), b.get(tt.r.Str("virtual_terminal_url"))
			if !strings.Contains(hpp.body, tt.customer) || strings.Contains(hpp.body, tt.agent) {
				t.Errorf("hosted page: got %d, want %q and not %q:\n%s", hpp.status, tt.customer, tt.agent, hpp.body)
			}
			if !strings.Contains(vt.body, tt.agent) || strings.Contains(vt.body, tt.customer) {
				t.Errorf("virtual terminal: got %d, want %q and not %q:\n%s", vt.status, tt.agent, tt.customer, vt.body)
			}
		})
	}
}

// TestAttemptInProgress: a claimed link refuses another attempt until the
// claim times out (a crashed instance or an abandoned 3-D Secure challenge).
func TestAttemptInProgress(t *testing.T) {
	env := start(t)
	m := env.Onboard()
	r := link(t, env, m, "10.50", nil)
	hpp, _ := pageURLs(r)
	b := newBrowser(t, env)
	csrf := b.get(hpp).csrf(t) // the page opened before the claim: it shows no form meanwhile
	err := env.Store.Update(context.Background(), func(tx paylink.Tx) error {
		l, err := tx.PaymentLink(m.ID, r.Str("id"))
		if err != nil {
			return err
		}
		l.ClaimedAt = env.Clock.Now().UTC()
		return tx.UpdatePaymentLink(l)
	})
	if err != nil {
		t.Fatal(err)
	}
	if p := b.get(hpp); !strings.Contains(p.body, "A payment on this link is in progress") || strings.Contains(p.body, `id="payform"`) ||
		!strings.Contains(p.body, fmt.Sprintf("at most %d minutes", int(paylink.DefaultAuthenticationTimeout.Minutes()))) {
		t.Errorf("the page while claimed: got %d, want it to say a payment is in progress, without the form:\n%s", p.status, p.body)
	}
	// Pay pressed meanwhile says it once, in the notice (no alert saying
	// it again), and the summary leaves out the card surcharge and its
	// rates, which no form on the page can give.
	p := b.post(hpp, cardForm(csrf, cardOK))
	if p.status != http.StatusConflict || strings.Count(p.body, "in progress") != 1 || strings.Contains(p.body, `role="alert"`) {
		t.Fatalf("while claimed: got %d, want 409 saying once that a payment is in progress:\n%s", p.status, p.body)
	}
	for _, absent := range []string{"Shown when you enter your card", "Card surcharge rates", "Total due"} {
		if strings.Contains(p.body, absent) {
			t.Errorf("while claimed: the page shows %q with no card form", absent)
		}
	}
	// A wallet or Zip button pressed meanwhile gets the link's page with
	// the notice and its reload link too, not a bare error page.
	for _, method := range []string{"/wallet/applepay", "/wallet/googlepay/confirm", "/zip", "/zip/confirm"} {
		p := b.post(hpp+method, url.Values{"csrf": {csrf}})
		if p.status != http.StatusConflict || !strings.Contains(p.body, "A payment on this link is in progress") || !strings.Contains(p.body, "Reload this page") {
			t.Errorf("%s while claimed: got %d, want 409 with the link's in-progress notice:\n%s", method, p.status, p.body)
		}
	}
	if got := env.Post("/v5/payment-links/"+r.Str("id")+"/cancel", m, nil); got.Status != http.StatusConflict ||
		got.Str("response_code") != paylink.CodeLinkInProgress {
		t.Errorf("cancel while claimed: got %d %s, want 409 %s", got.Status, got.Raw, paylink.CodeLinkInProgress)
	}
	env.Clock.Advance(paylink.DefaultAuthenticationTimeout)
	if p := b.post(hpp, cardForm(csrf, cardOK)); p.status != http.StatusSeeOther {
		t.Errorf("after the claim timeout: got %d, want 303", p.status)
	}
	if got := env.Post("/v5/payment-links/"+r.Str("id")+"/cancel", m, nil); got.Status != http.StatusConflict ||
		got.Str("response_code") != paylink.CodeLinkPaid {
		t.Errorf("cancel when paid: got %d %s, want 409 %s", got.Status, got.Raw, paylink.CodeLinkPaid)
	}
}

// TestThreeDSHandOff: hosted page card payments ask for 3-D Secure with
// the page's own return address, the virtual terminal's do not, and the
// return address only accepts this link's transactions.
func TestThreeDSHandOff(t *testing.T) {
	env := start(t)
	m := env.Onboard()
	r, other := link(t, env, m, "10.50", nil), link(t, env, m, "10.50", nil)
	hpp, _ := pageURLs(r)
	otherPage, _ := pageURLs(other)
	b := newBrowser(t, env)
	b.post(hpp, cardForm(b.get(hpp).csrf(t), cardOK))
	ref := linkState(t, env, m, r.Str("id")).Str("transaction_reference")
	tr := transaction(t, env, m, ref)
	if want := env.Server.URL + paylink.LinkReturnPath + r.Str("id"); tr.Details.ThreeDS == nil || !tr.Details.ThreeDS.Requested ||
		tr.Details.ThreeDS.RedirectURL != want {
		t.Errorf("got 3-D Secure %+v, want requested with return address %s", tr.Details.ThreeDS, want)
	}
	tests := []struct {
		name, url string
		status    int
	}{
		{"own transaction", hpp + "/3ds?purchase_reference=" + ref, http.StatusSeeOther},
		{"another link's transaction", otherPage + "/3ds?purchase_reference=" + ref, http.StatusNotFound},
		{"unknown reference", hpp + "/3ds?purchase_reference=pr_nope", http.StatusNotFound},
		{"no reference", hpp + "/3ds", http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := b.get(tt.url)
			if p.status != tt.status {
				t.Errorf("got %d, want %d", p.status, tt.status)
			}
			// A reference naming no payment of the link is told in the
			// customer's words, with the way back to the page (hosted
			// page sweep: the API's "No transaction with that purchase
			// reference or invoice number.", and no link).
			if strings.HasPrefix(tt.url, hpp) && tt.status == http.StatusNotFound &&
				(!strings.Contains(p.body, "This address names no payment of this link") || !strings.Contains(p.body, backLink(hpp))) {
				t.Errorf("got %s, want the customer's words and a link back to the page", p.body)
			}
		})
	}
}

// backLink is an error page's link back to the link page at pageURL.
func backLink(pageURL string) string {
	u, _ := url.Parse(pageURL)
	return `<a href="` + u.Path + `">Back to the payment page</a>`
}

var nonceAttr = regexp.MustCompile(`nonce="([^"]+)"`)

// TestLinkPageNonceMatchesPolicy: over HTTP, each GET of a link page gets
// its own nonce, the one its Content-Security-Policy allows, in every
// nonce attribute of the page, whether the page came from the cache or
// not. (TestCardPaymentDeclineThenApprove pays with the CSRF token of a
// cached page and then sees the paid page, not the cached unpaid one.)
func TestLinkPageNonceMatchesPolicy(t *testing.T) {
	env := start(t)
	hpp, _ := pageURLs(link(t, env, env.Onboard(), "10.50", nil))
	b := newBrowser(t, env)
	seen := map[string]bool{}
	for range 3 {
		p := b.get(hpp)
		csp := p.header.Get("Content-Security-Policy")
		attrs := nonceAttr.FindAllStringSubmatch(p.body, -1)
		if len(attrs) == 0 {
			t.Fatalf("no nonce attribute in the page")
		}
		for _, a := range attrs {
			if !strings.Contains(csp, "'nonce-"+a[1]+"'") {
				t.Fatalf("page nonce %q is not the one its policy allows: %s", a[1], csp)
			}
		}
		if seen[attrs[0][1]] {
			t.Fatalf("nonce %q served twice", attrs[0][1])
		}
		seen[attrs[0][1]] = true
	}
}

// TestTooLongCardFieldsAreRefused: a holder name over the limit is
// refused with the field's message, as the API refuses it, never cut
// and paid (a raw form post bypasses the input's maxlength).
func TestTooLongCardFieldsAreRefused(t *testing.T) {
	env := start(t)
	m := env.Onboard()
	r := link(t, env, m, "10.50", nil)
	hpp, _ := pageURLs(r)
	b := newBrowser(t, env)
	form := cardForm(b.get(hpp).csrf(t), cardOK)
	form.Set("card_holder", strings.Repeat("A", paylink.MaxFieldLength+72))
	p := b.post(hpp, form)
	if p.status != http.StatusBadRequest || !strings.Contains(p.body, `id="card_holder-err"`) {
		t.Errorf("got %d, want 400 with the holder name's error:\n%s", p.status, p.body)
	}
	if got := linkState(t, env, m, r.Str("id")); got.Str("status") != "unpaid" {
		t.Errorf("after a refused form: got %s, want unpaid", got.Raw)
	}
}

// TestTokenServesOnlyItsOwnPage: a link's page token opens the hosted
// page under /pay/ only, and the virtual terminal's token the terminal
// under /vt/ only.
func TestTokenServesOnlyItsOwnPage(t *testing.T) {
	env := start(t)
	m := env.Onboard()
	hpp, vt := pageURLs(link(t, env, m, "10.50", nil))
	payToken := strings.TrimPrefix(hpp, env.Server.URL+"/pay/")
	vtToken := strings.TrimPrefix(vt, env.Server.URL+"/vt/")
	b := newBrowser(t, env)
	for _, u := range []string{hpp, vt} {
		if p := b.get(u); p.status != http.StatusOK {
			t.Fatalf("%s: got %d, want 200", u, p.status)
		}
	}
	for _, u := range []string{env.Server.URL + "/vt/" + payToken, env.Server.URL + "/pay/" + vtToken, env.Server.URL + "/pay/" + vtToken + "/3ds"} {
		if p := b.get(u); p.status != http.StatusNotFound || !strings.Contains(p.body, "no payment page at this address") {
			t.Errorf("%s: got %d, want 404", u, p.status)
		}
	}
}

// TestALinkPaidInTheVirtualTerminalAnswersToItsReference: a merchant
// whose webhook is missing polls the status by the merchantReference it
// gave the link (spec 4.16.3). Staff who typed another invoice number in
// the virtual terminal stored the payment under that number, and the
// look-up by the link's reference answered 404, or the customer's earlier
// declined attempt on the hosted page: a merchant could have charged
// again. It answers the link's payment now, on both engines: paid, even
// when a clock stamped the declined attempt later (instances' clocks
// differ), and while its answer is awaited or unknown.
func TestALinkPaidInTheVirtualTerminalAnswersToItsReference(t *testing.T) {
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			opts := apitest.Options{Config: paylink.Config{ProcessorTimeout: 50 * time.Millisecond}}
			if engine == "postgres" {
				opts.DSN = pg.Database(t)
			}
			env := apitest.Start(t, opts)
			m := env.Onboard()
			status := func(ref string) apitest.Response {
				return env.Post("/v5/purchase/"+ref, m, map[string]any{"company_token": m.Creds.CompanyToken})
			}
			for _, c := range []struct {
				reference     string
				declinedFirst bool
				skew          time.Duration // the virtual terminal's clock against the page's
				silent        bool          // the processor's answer to the virtual terminal is lost
			}{
				{"ORDER-VT-ONLY", false, 0, false},
				{"ORDER-DECLINED-FIRST", true, time.Second, false},
				{"ORDER-VT-CLOCK-BEHIND", true, -time.Minute, false},
				{"ORDER-VT-IN-DOUBT", true, time.Second, true},
			} {
				l := link(t, env, m, "12.00", map[string]any{"merchantReference": c.reference})
				hpp, vt := pageURLs(l)
				b := newBrowser(t, env)
				if c.declinedFirst {
					if p := b.post(hpp, cardForm(b.get(hpp).csrf(t), cardDecline)); p.status != http.StatusOK && p.status != http.StatusSeeOther {
						t.Fatalf("%s: declined attempt: got %d", c.reference, p.status)
					}
					if r := status(c.reference); r.Str("status") != "DECLINED" {
						t.Fatalf("%s after a decline: got %d %s, want the declined attempt", c.reference, r.Status, r.Raw)
					}
				}
				env.Clock.Advance(c.skew)
				f := cardForm(b.get(vt).csrf(t), cardOK)
				f.Set("invoice_number", "PHONE-INV-"+c.reference)
				env.Sandbox.SetSilent(c.silent)
				p := b.post(vt, f)
				env.Sandbox.SetSilent(false)
				env.Clock.Advance(time.Second)
				want := "APPROVED"
				if c.silent {
					want = "PENDING"
					if !strings.Contains(p.body, "not confirmed yet") {
						t.Fatalf("%s: pay in the virtual terminal with the answer lost: got %d\n%s", c.reference, p.status, p.body)
					}
				} else if p.status != http.StatusSeeOther {
					t.Fatalf("%s: pay in the virtual terminal: got %d, want 303:\n%s", c.reference, p.status, p.body)
				}
				vtRef := status("PHONE-INV-" + c.reference).Str("purchase_reference")
				for _, ref := range []string{c.reference, "PHONE-INV-" + c.reference, vtRef} {
					if r := status(ref); r.Status != http.StatusOK || r.Str("status") != want || r.Str("purchase_reference") != vtRef {
						t.Errorf("%s: status of %s: got %d %s, want the virtual terminal's payment %s %s", c.reference, ref, r.Status, r.Raw, vtRef, want)
					}
				}
				if paid := linkState(t, env, m, l.Str("id")).Str("transaction_reference"); !c.silent && paid != vtRef {
					t.Errorf("%s: the link's payment is %q, want %s", c.reference, paid, vtRef)
				}
				if c.silent { // recovery's inquiry goes unanswered too: UNKNOWN, still the answer
					env.Sandbox.SetSilent(true)
					env.Clock.Advance(paylink.ProcessingTimeout + time.Minute)
					if _, err := env.Service.RecoverInterrupted(context.Background()); err != nil {
						t.Fatal(err)
					}
					env.Sandbox.SetSilent(false)
					if r := status(c.reference); r.Str("status") != "UNKNOWN" || r.Str("purchase_reference") != vtRef {
						t.Errorf("%s after recovery: got %s, want the virtual terminal's payment UNKNOWN", c.reference, r.Raw)
					}
				}
			}
		})
	}
}
