package api_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
	"github.com/paylink/paylink/internal/processor"
)

const returnURL = "https://shop.example.com/3ds/return?order=77"

// threeDSPurchase purchases 12.34 with card number, 3-D Secure requested.
func threeDSPurchase(env *apitest.Env, m *apitest.Merchant, number string, mutate ...func(map[string]any)) apitest.Response {
	return env.Post("/v5/purchase", m, env.CardPurchase(m, number, "12.34", append([]func(map[string]any){func(b map[string]any) {
		apitest.Set(b, "customer.should_service_apply_authentication", true)
		apitest.Set(b, "customer.authentication_redirect_url", returnURL)
	}}, mutate...)...))
}

// challengePage is the challenge page as a browser would see it.
type challengePage struct {
	status  int
	csp     string
	body    string
	action  string     // absolute form action
	outcome url.Values // the values the form's submit buttons post
}

var (
	formTag   = regexp.MustCompile(`<form method="post" action="([^"]*)">`)
	buttonTag = regexp.MustCompile(`<button type="submit" name="([^"]+)" value="([^"]+)">`)
	styleTag  = regexp.MustCompile(`(?s)<style>(.*?)</style>`)
)

// noRedirects is a client that returns redirects instead of following them.
func noRedirects(env *apitest.Env) *http.Client {
	c := *env.Server.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &c
}

// fetchChallenge GETs the challenge page and parses its form.
func fetchChallenge(t *testing.T, env *apitest.Env, pageURL string) challengePage {
	t.Helper()
	res, err := env.Server.Client().Get(pageURL)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	p := challengePage{status: res.StatusCode, csp: res.Header.Get("Content-Security-Policy"), body: string(raw), outcome: url.Values{}}
	if m := formTag.FindStringSubmatch(p.body); m != nil {
		base, _ := url.Parse(pageURL)
		action, err := base.Parse(html.UnescapeString(m[1]))
		if err != nil {
			t.Fatalf("form action %q: %v", m[1], err)
		}
		p.action = action.String()
	}
	for _, m := range buttonTag.FindAllStringSubmatch(p.body, -1) {
		p.outcome.Add(m[1], m[2])
	}
	return p
}

// submit posts the form with one button's value, as a browser does.
func submit(t *testing.T, env *apitest.Env, action, outcome string, headers map[string]string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, action, strings.NewReader(url.Values{"outcome": {outcome}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := noRedirects(env).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res
}

func threeDSRedirect(env *apitest.Env, m *apitest.Merchant, ref string) apitest.Response {
	return env.Post("/v5/purchase/"+ref+"/3dsredirect", m, map[string]any{"company_token": m.Creds.CompanyToken})
}

func TestThreeDSRedirectURLRules(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	tests := []struct {
		name, url  string
		wantStatus int
	}{
		{"missing", "", http.StatusBadRequest},
		{"plain http", "http://shop.example.com/back", http.StatusBadRequest},
		{"relative", "/back", http.StatusBadRequest},
		{"https", "https://shop.example.com/back", http.StatusOK},
		{"IPv4 host", "https://203.0.113.7:8443/back", http.StatusOK},
		{"internationalised name as xn--", "https://xn--bcher-kva.example/back", http.StatusOK},
		// The challenge page's form-action could not name these, and the
		// customer was kept there after answering (spec sweep).
		{"internationalised name", "https://bücher.example/back", http.StatusBadRequest},
		{"IPv6 host", "https://[2001:db8::1]/back", http.StatusBadRequest},
		// Nor names at all (security sweep).
		{"a dot", "https://./back", http.StatusBadRequest},
		{"dots", "https://..../back", http.StatusBadRequest},
		{"a hyphen", "https://-/back", http.StatusBadRequest},
		{"an empty label", "https://shop..example/back", http.StatusBadRequest},
		{"a final dot", "https://shop.example./back", http.StatusOK},
		// A browser takes a last label that is a number for an IPv4
		// address, rewriting it or refusing it (fourth verification sweep).
		{"a short IPv4", "https://127.1/back", http.StatusBadRequest},
		{"hex IPv4", "https://0x7f.0.0.1/back", http.StatusBadRequest},
		{"IPv4 with a final dot", "https://127.0.0.1./back", http.StatusBadRequest},
		{"a number last", "https://shop.123/back", http.StatusBadRequest},
		{"five numbers", "https://1.2.3.4.5/back", http.StatusBadRequest},
		{"over 255", "https://256.1.1.1/back", http.StatusBadRequest},
		{"a hex last label", "https://shop.0xff/back", http.StatusBadRequest},
		// Longer than the spec's 128, up to 2048 (docs/api.md, "Where
		// paylink differs from the spec").
		{"2048 characters", "https://shop.example.com/back?s=" + strings.Repeat("a", 2048-32), http.StatusOK},
		{"2049 characters", "https://shop.example.com/back?s=" + strings.Repeat("a", 2049-32), http.StatusBadRequest},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := threeDSPurchase(env, m, processor.CardThreeDSChallenge, func(b map[string]any) {
				apitest.Set(b, "customer.authentication_redirect_url", tc.url)
			})
			if r.Status != tc.wantStatus {
				t.Fatalf("got %d %s, want %d", r.Status, r.Raw, tc.wantStatus)
			}
			fields, _ := r.Get("fields").(map[string]any)
			if _, named := fields["customer.authentication_redirect_url"]; tc.wantStatus != http.StatusOK && !named {
				t.Errorf("error does not name the field: got %s", r.Raw)
			}
		})
	}
}

func TestThreeDSChallengeFlowThroughThePage(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	tests := []struct {
		name        string
		preAuth     bool
		outcome     string
		wantStatus  string
		wantResult  string
		wantPreAuth string
	}{
		{"authenticated purchase", false, "success", "APPROVED", paylink.ThreeDSAuthenticated, "0"},
		{"authenticated hold", true, "success", "PRE_AUTHORISED", paylink.ThreeDSAuthenticated, "12.34"},
		{"failed authentication", false, "failure", "DECLINED", paylink.ThreeDSFailed, "0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := threeDSPurchase(env, m, processor.CardThreeDSChallenge, func(b map[string]any) {
				apitest.Set(b, "purchase.should_service_apply_pre_authorisation", tc.preAuth)
			})
			ref, pageURL := r.Str("purchase.purchase_reference"), r.Str("customer.authentication_redirect_url")
			if r.Str("purchase.status") != "REQUIRES_AUTHENTICATION" || r.Get("purchase.transaction_time_utc") != nil ||
				r.Get("purchase.total_amount") != nil || !strings.HasPrefix(pageURL, env.Server.URL+paylink.ChallengePath) {
				t.Fatalf("purchase: got %s, want REQUIRES_AUTHENTICATION, null time and total, our challenge page", r.Raw)
			}
			if r.Get("purchase.pre_authorised") != false || r.Str("purchase.pre_authorised_amount") != "0.00" {
				t.Errorf("awaiting the challenge: got %s, want nothing held yet", r.Raw)
			}
			expectError(t, threeDSRedirect(env, m, ref), http.StatusConflict, paylink.CodeAuthenticationPending)

			page := fetchChallenge(t, env, pageURL)
			for _, want := range []string{"Acme Coffee", "12.34 AUD", "400000******3220"} {
				if !strings.Contains(page.body, want) {
					t.Errorf("page does not show %q", want)
				}
			}
			if page.status != http.StatusOK || page.action != pageURL || len(page.outcome["outcome"]) != 2 {
				t.Fatalf("page: got %d action %q buttons %v, want 200, its own URL, two outcome buttons", page.status, page.action, page.outcome)
			}
			res := submit(t, env, page.action, tc.outcome, map[string]string{"Origin": env.Server.URL, "Sec-Fetch-Site": "same-origin"})
			back, _ := url.Parse(res.Header.Get("Location"))
			if res.StatusCode != http.StatusSeeOther || back.Host != "shop.example.com" ||
				back.Query().Get("purchase_reference") != ref || back.Query().Get("order") != "77" {
				t.Fatalf("answer: got %d to %q, want 303 to the return URL with purchase_reference", res.StatusCode, back)
			}

			done := threeDSRedirect(env, m, ref)
			if done.Status != http.StatusOK || done.Str("purchase.status") != tc.wantStatus ||
				done.Str("purchase.pre_authorised_amount") != tc.wantPreAuth {
				t.Fatalf("3dsredirect: got %d %s, want %s with pre_authorised_amount %s", done.Status, done.Raw, tc.wantStatus, tc.wantPreAuth)
			}
			if _, isNumber := done.Get("purchase.pre_authorised_amount").(string); isNumber {
				t.Errorf("pre_authorised_amount is a string in the 3dsredirect response: %s", done.Raw)
			}
			d := stored(t, env, m, ref).Details.ThreeDS
			if d == nil || d.Result != tc.wantResult || d.ChallengeIndicator != "challenge" || d.Version != processor.ThreeDSVersion || d.DSTransID == "" {
				t.Errorf("3DS record: got %+v, want result %s, challenge, version and ds_trans_id", d, tc.wantResult)
			}
			expectError(t, threeDSRedirect(env, m, ref), http.StatusConflict, paylink.CodeAuthenticationComplete)
			if replay := submit(t, env, page.action, "success", nil); replay.StatusCode != http.StatusGone {
				t.Errorf("replayed answer: got %d, want 410", replay.StatusCode)
			}
			if again := fetchChallenge(t, env, pageURL); again.status != http.StatusGone || again.action != "" {
				t.Errorf("page after answer: got %d with form %q, want 410 without a form", again.status, again.action)
			}
		})
	}
}

func TestChallengePageSecurity(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m, other := env.Onboard(), env.Onboard()
	r := threeDSPurchase(env, m, processor.CardThreeDSChallenge)
	ref, pageURL := r.Str("purchase.purchase_reference"), r.Str("customer.authentication_redirect_url")
	page := fetchChallenge(t, env, pageURL)
	t.Run("strict CSP that allows exactly the page's style", func(t *testing.T) {
		style := styleTag.FindStringSubmatch(page.body)
		if style == nil {
			t.Fatal("no style element")
		}
		sum := sha256.Sum256([]byte(style[1]))
		for _, want := range []string{"default-src 'none'", "frame-ancestors 'none'", "form-action 'self' https://shop.example.com",
			"style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"} {
			if !strings.Contains(page.csp, want) {
				t.Errorf("CSP: got %q, want it to contain %q", page.csp, want)
			}
		}
		if strings.Contains(page.body, "<script") || strings.Contains(page.body, "http://") || strings.Contains(page.body, "https://") {
			t.Errorf("page loads scripts or external resources")
		}
	})
	t.Run("cross-site post is refused", func(t *testing.T) {
		for _, h := range []map[string]string{{"Sec-Fetch-Site": "cross-site"}, {"Origin": "https://evil.example"}} {
			if res := submit(t, env, page.action, "success", h); res.StatusCode != http.StatusForbidden {
				t.Errorf("post with %v: got %d, want 403", h, res.StatusCode)
			}
		}
		if got := stored(t, env, m, ref).Details.ThreeDS.ChallengeDone; got {
			t.Errorf("a refused post completed the challenge")
		}
	})
	t.Run("unknown or forged capability", func(t *testing.T) {
		forged := pageURL[:len(pageURL)-1] + "x"
		if strings.HasSuffix(pageURL, "x") {
			forged = pageURL[:len(pageURL)-1] + "y"
		}
		for _, u := range []string{forged, env.Server.URL + paylink.ChallengePath + "nope"} {
			if p := fetchChallenge(t, env, u); p.status != http.StatusNotFound {
				t.Errorf("GET %s: got %d, want 404", u, p.status)
			}
		}
	})
	t.Run("invalid outcome", func(t *testing.T) {
		if res := submit(t, env, page.action, "maybe", nil); res.StatusCode != http.StatusBadRequest {
			t.Errorf("got %d, want 400", res.StatusCode)
		}
	})
	t.Run("another merchant cannot complete it", func(t *testing.T) {
		expectError(t, threeDSRedirect(env, other, ref), http.StatusNotFound, paylink.CodeNotFound)
		r := env.Post("/v5/purchase/"+ref+"/3dsredirect", m, map[string]any{"company_token": other.Creds.CompanyToken})
		expectError(t, r, http.StatusForbidden, paylink.CodeCompanyTokenMismatch)
	})
	t.Run("a purchase without 3-D Secure has no challenge", func(t *testing.T) {
		plain := env.Post("/v5/purchase", m, env.CardPurchase(m, visa, "1.00"))
		expectError(t, threeDSRedirect(env, m, plain.Str("purchase.purchase_reference")), http.StatusConflict, paylink.CodeInvalidState)
	})
}

func TestChallengeExpires(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	r := threeDSPurchase(env, m, processor.CardThreeDSChallenge)
	ref, pageURL := r.Str("purchase.purchase_reference"), r.Str("customer.authentication_redirect_url")
	page := fetchChallenge(t, env, pageURL)
	env.Clock.Advance(paylink.ChallengeTTL + time.Second)
	if p := fetchChallenge(t, env, pageURL); p.status != http.StatusGone || !strings.Contains(p.body, "has expired") {
		t.Errorf("expired page: got %d, want 410 saying it expired", p.status)
	}
	if res := submit(t, env, page.action, "success", nil); res.StatusCode != http.StatusGone {
		t.Errorf("answer after expiry: got %d, want 410", res.StatusCode)
	}
	done := threeDSRedirect(env, m, ref)
	d := stored(t, env, m, ref).Details.ThreeDS
	if done.Str("purchase.status") != "DECLINED" || d.Result != paylink.ThreeDSFailed || d.Reason != paylink.ThreeDSAbandoned {
		t.Errorf("3dsredirect after expiry: got %s with %+v, want DECLINED failed/abandoned", done.Raw, d)
	}
}

// TestThreeDSRedirectAfterTheAttemptLifetime: the HTTP contract of a
// 3dsredirect call after the attempt's lifetime (the rule itself is tested
// at the Service level on both engines): a 409 authentication_expired
// error (expectError also checks there is no purchase key), and the
// purchase FAILED.
func TestThreeDSRedirectAfterTheAttemptLifetime(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	r := threeDSPurchase(env, m, processor.CardThreeDSChallenge)
	ref := r.Str("purchase.purchase_reference")
	passChallenge(t, env, r)
	env.Clock.Advance(paylink.DefaultAuthenticationTimeout)
	done := threeDSRedirect(env, m, ref)
	expectError(t, done, http.StatusConflict, paylink.CodeAuthenticationExpired)
	if st := stored(t, env, m, ref); st.Status != paylink.StatusFailed {
		t.Errorf("status after: got %s, want FAILED", st.Status)
	}
}

func TestThreeDSFrictionlessAndUnrequested(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	t.Run("frictionless card is approved at once", func(t *testing.T) {
		r := threeDSPurchase(env, m, processor.CardThreeDSFrictionless)
		if r.Str("purchase.status") != "APPROVED" || r.Get("customer.authentication_redirect_url") != nil {
			t.Fatalf("got %s, want APPROVED without a redirect", r.Raw)
		}
		d := stored(t, env, m, r.Str("purchase.purchase_reference")).Details.ThreeDS
		want := paylink.ThreeDS{Result: "authenticated", ChallengeIndicator: "frictionless", ECI: "05", Version: "2.2.0"}
		if d == nil || d.Result != want.Result || d.ChallengeIndicator != want.ChallengeIndicator || d.ECI != want.ECI ||
			d.Version != want.Version || d.DSTransID == "" {
			t.Errorf("3DS record: got %+v, want %+v with a ds_trans_id", d, want)
		}
	})
	t.Run("challenge card without the flag has no challenge", func(t *testing.T) {
		r := env.Post("/v5/purchase", m, env.CardPurchase(m, processor.CardThreeDSChallenge, "5.00"))
		if r.Str("purchase.status") != "APPROVED" || r.Get("customer.authentication_redirect_url") != nil {
			t.Errorf("got %s, want APPROVED without a redirect", r.Raw)
		}
		if d := stored(t, env, m, r.Str("purchase.purchase_reference")).Details.ThreeDS; d != nil {
			t.Errorf("3DS record: got %+v, want none", d)
		}
	})
}

func TestAuthorisationResultsAreRecorded(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	tests := []struct {
		name, cvc, wantCVV string
	}{
		{"with CVC", "123", "pass"},
		{"without CVC", "", "unchecked"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := env.Post("/v5/purchase", m, env.CardPurchase(m, visa, "5.00", func(b map[string]any) {
				apitest.Set(b, "card.cvc", tc.cvc)
			}))
			d := stored(t, env, m, r.Str("purchase.purchase_reference")).Details
			if d.CVVResult != tc.wantCVV || d.AVSResult == "" || !regexp.MustCompile(`^\d{6}$`).MatchString(d.AuthCode) {
				t.Errorf("got cvv %q avs %q auth code %q, want cvv %q, an AVS result and a 6-digit code", d.CVVResult, d.AVSResult, d.AuthCode, tc.wantCVV)
			}
		})
	}
	t.Run("CVV result survives the authorisation after a challenge", func(t *testing.T) {
		r := threeDSPurchase(env, m, processor.CardThreeDSChallenge)
		passChallenge(t, env, r)
		ref := r.Str("purchase.purchase_reference")
		threeDSRedirect(env, m, ref)
		if d := stored(t, env, m, ref).Details; d.CVVResult != "pass" || d.AuthCode == "" {
			t.Errorf("got cvv %q auth code %q, want pass and a code", d.CVVResult, d.AuthCode)
		}
	})
}

func TestAbandonedChallengesAreDeclinedByTheJob(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	first := threeDSPurchase(env, m, processor.CardThreeDSChallenge)
	abandoned := first.Str("purchase.purchase_reference")
	answered := threeDSPurchase(env, m, processor.CardThreeDSChallenge)
	passChallenge(t, env, answered)
	if n, err := env.Service.ExpireChallenges(context.Background()); err != nil || n != 0 {
		t.Errorf("before expiry: declined %d, %v; want 0", n, err)
	}
	env.Clock.Advance(paylink.ChallengeTTL + time.Second)
	if n, err := env.Service.ExpireChallenges(context.Background()); err != nil || n != 1 {
		t.Fatalf("after expiry: declined %d, %v; want only the unanswered one", n, err)
	}
	if tr := stored(t, env, m, abandoned); tr.Status != paylink.StatusDeclined || tr.Details.ThreeDS.Reason != paylink.ThreeDSAbandoned {
		t.Errorf("abandoned: got %s %+v, want DECLINED abandoned", tr.Status, tr.Details.ThreeDS)
	}
	if p := fetchChallenge(t, env, first.Str("customer.authentication_redirect_url")); p.status != http.StatusGone || !strings.Contains(p.body, "has expired") {
		t.Errorf("the abandoned challenge's page after the job: got %d, want 410 saying it expired (not that it was completed)", p.status)
	}
	if r := threeDSRedirect(env, m, answered.Str("purchase.purchase_reference")); r.Str("purchase.status") != "APPROVED" {
		t.Errorf("answered challenge completed after the job: got %s, want APPROVED", r.Raw)
	}
}

// TestPendingAnswerIsNotKeptWithItsIdempotencyKey: 3dsredirect before the
// customer answered is 409 authentication_pending, a passing state, so
// the same call with the same Idempotency-Key after the answer runs
// again instead of replaying the 409.
func TestPendingAnswerIsNotKeptWithItsIdempotencyKey(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	r := threeDSPurchase(env, m, processor.CardThreeDSChallenge)
	ref, pageURL := r.Str("purchase.purchase_reference"), r.Str("customer.authentication_redirect_url")
	redirect := func() (*http.Response, string) {
		t.Helper()
		return postKeyTo(t, env, m, "/v5/purchase/"+ref+"/3dsredirect", ref+"-3ds", []byte(`{"company_token":"`+m.Creds.CompanyToken+`"}`))
	}
	if res, body := redirect(); res.StatusCode != http.StatusConflict || !strings.Contains(body, paylink.CodeAuthenticationPending) {
		t.Fatalf("before the answer: got %d %s, want 409 %s", res.StatusCode, body, paylink.CodeAuthenticationPending)
	}
	page := fetchChallenge(t, env, pageURL)
	submit(t, env, page.action, "success", map[string]string{"Origin": env.Server.URL, "Sec-Fetch-Site": "same-origin"})
	res, body := redirect()
	if res.StatusCode != http.StatusOK || res.Header.Get("Idempotent-Replayed") != "" || !strings.Contains(body, `"APPROVED"`) {
		t.Fatalf("after the answer, same key: got %d replayed=%q %s, want the call run: 200 APPROVED",
			res.StatusCode, res.Header.Get("Idempotent-Replayed"), body)
	}
	if again, body2 := redirect(); again.Header.Get("Idempotent-Replayed") != "true" || body2 != body {
		t.Errorf("third call: got replayed=%q, want the approval replayed", again.Header.Get("Idempotent-Replayed"))
	}
}

// TestThreeDSRedirectAfterTheCardTokenIsInvalidated: a merchant
// invalidates a stored card while a purchase with it waits for the
// customer's 3-D Secure challenge. The answered challenge no longer
// charges the card: 3dsredirect is 409 card_token_invalid and the
// purchase is FAILED, with nothing authorised.
func TestThreeDSRedirectAfterTheCardTokenIsInvalidated(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	token := tokenize(env, m, processor.CardThreeDSChallenge, withPermission("store_card_permission")).Str("card.token")
	r := threeDSPurchase(env, m, "", func(b map[string]any) { b["card"] = map[string]any{"token": token} })
	ref := r.Str("purchase.purchase_reference")
	if st := stored(t, env, m, ref); st.Status != paylink.StatusRequiresAuthentication {
		t.Fatalf("purchase with the stored card: got %d %s, want a challenge", r.Status, r.Raw)
	}
	passChallenge(t, env, r)
	if inv := env.Post("/v5/invalidate_card_token", m, map[string]any{"company_token": m.Creds.CompanyToken, "card_token": token}); inv.Status != http.StatusOK {
		t.Fatalf("invalidate: got %d %s", inv.Status, inv.Raw)
	}
	done := threeDSRedirect(env, m, ref)
	expectError(t, done, http.StatusConflict, paylink.CodeCardTokenInvalid)
	if st := stored(t, env, m, ref); st.Status != paylink.StatusFailed || st.Details.AuthCode != "" {
		t.Errorf("after: got %s, auth code %q, want FAILED, not authorised", st.Status, st.Details.AuthCode)
	}
}

// passChallenge answers r's challenge successfully, as the customer's
// browser does.
func passChallenge(t *testing.T, env *apitest.Env, r apitest.Response) {
	t.Helper()
	page := fetchChallenge(t, env, r.Str("customer.authentication_redirect_url"))
	res := submit(t, env, page.action, "success", nil)
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("answering the challenge: got %d, want 303", res.StatusCode)
	}
}

// answeredAttempt starts paylink with cfg and makes a 3-D Secure purchase
// whose challenge the customer passed: it waits for 3dsredirect.
func answeredAttempt(t *testing.T, cfg paylink.Config) (*apitest.Env, *apitest.Merchant, string) {
	t.Helper()
	env := apitest.Start(t, apitest.Options{Config: cfg})
	m := env.Onboard()
	r := threeDSPurchase(env, m, processor.CardThreeDSChallenge)
	passChallenge(t, env, r)
	return env, m, r.Str("purchase.purchase_reference")
}

// The longest attempt lifetime ends before the card-wipe job may erase a
// challenged card's number: a customer who comes back just before the end
// is charged. A longer lifetime is refused (Validate, NewService, serve).
func TestTheLongestAttemptOutlivesNoCard(t *testing.T) {
	if _, err := paylink.NewService(paylink.Config{AuthenticationTimeout: 2 * time.Hour}, paylink.Deps{}); err == nil {
		t.Error("NewService: got nil for a 2h authentication timeout, want it refused")
	}
	env, m, ref := answeredAttempt(t, paylink.Config{AuthenticationTimeout: paylink.MaxAuthenticationTimeout})
	env.Clock.Advance(paylink.MaxAuthenticationTimeout - time.Second)
	if _, err := env.Service.WipeSpentCards(context.Background()); err != nil {
		t.Fatal(err)
	}
	if x := threeDSRedirect(env, m, ref); x.Status != http.StatusOK || x.Str("purchase.status") != "APPROVED" {
		t.Errorf("3dsredirect a second before the attempt ends: got %d %s, want APPROVED", x.Status, x.Raw)
	}
}

// A card whose number is gone when its attempt completes is refused in
// the database transaction that would have sent it to the processor: the
// purchase is FAILED there and then, with its webhook, not left PROCESSING
// for recovery.
func TestACompletionWithoutTheCardsNumberFails(t *testing.T) {
	env, m, ref := answeredAttempt(t, paylink.Config{})
	err := env.Store.Update(context.Background(), func(tx paylink.Tx) error { // the wipe, early
		_, err := tx.WipeSpentCards(env.Clock.Now().Add(time.Hour), 10)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	expectError(t, threeDSRedirect(env, m, ref), http.StatusConflict, paylink.CodeCardTokenUsed)
	if got := stored(t, env, m, ref).Status; got != paylink.StatusFailed {
		t.Errorf("the purchase: got %s, want FAILED", got)
	}
	expectError(t, threeDSRedirect(env, m, ref), http.StatusConflict, paylink.CodeAuthenticationComplete)
}

// A 3dsredirect retried while the first call's processor answer is
// awaited (it answered PENDING) is told the operation is in progress,
// not that authentication is complete.
func TestARetriedCompletionWhileItsAnswerIsAwaited(t *testing.T) {
	env, m, ref := answeredAttempt(t, paylink.Config{ProcessorTimeout: 50 * time.Millisecond})
	env.Sandbox.SetSilent(true)
	if x := threeDSRedirect(env, m, ref); x.Str("purchase.status") != "PENDING" {
		t.Fatalf("3dsredirect with the acquirer silent: got %s, want PENDING", x.Raw)
	}
	expectError(t, threeDSRedirect(env, m, ref), http.StatusConflict, paylink.CodeOperationInProgress)
}
