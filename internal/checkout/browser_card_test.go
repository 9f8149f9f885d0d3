package checkout_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
	"github.com/paylink/paylink/internal/browsertest"
)

// brandLabels are the brands as the page names them.
var brandLabels = map[string]string{
	paylink.BrandVisa: "Visa", paylink.BrandMastercard: "Mastercard", paylink.BrandAmex: "American Express",
	paylink.BrandJCB: "JCB", paylink.BrandDiscover: "Discover", paylink.BrandDiners: "Diners",
	paylink.BrandUnionPay: "UnionPay", "": "",
}

// withLuhnDigit pads prefix with zeros to 15 digits and appends the
// digit that makes the Luhn check pass.
func withLuhnDigit(prefix string) string {
	s := prefix + strings.Repeat("0", 15-len(prefix))
	sum := 0
	for i := len(s) - 1; i >= 0; i-- {
		d := int(s[i] - '0')
		if (len(s)-i)%2 == 1 { // doubled once the check digit is appended
			if d *= 2; d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return s + strconv.Itoa((10-sum%10)%10)
}

// brandCases are Luhn-valid numbers at both ends of every one of
// BrandOf's ranges and just outside them, the numbers a sweep found the
// page and the server disagreeing on, and numbers at lengths their brand
// issues and does not (a 14-digit Visa, a 16-digit Amex).
func brandCases() []string {
	out := []string{"3095000000000000", "6445644564456445", "8171999927660000", "6221260000000000", "9999999999999995",
		"4222222222222", "40000000000002", "4000000000000000006", "378282246310005", "30569309025904", "37000000000000002"}
	for _, r := range paylink.IINRanges() {
		for _, p := range []int{r.Low - 1, r.Low, r.High, r.High + 1} {
			if s := strconv.Itoa(p); len(s) == r.Digits {
				out = append(out, withLuhnDigit(s))
			}
		}
	}
	return out
}

// TestBrowserBrandAgreesWithServer: the page's script names the brand of
// every number as paylink.BrandOf does, and refuses as not valid exactly
// the Luhn-valid numbers paylink.ParseCardNumber refuses: of no brand the
// server knows, or at a length their brand does not issue. The script once
// kept its own copy of the ranges and refused Diners 309, Discover
// 644-649 and UnionPay 81 cards the server takes.
func TestBrowserBrandAgreesWithServer(t *testing.T) {
	chromium.Need(t)
	env := start(t)
	m := env.Onboard()
	r := link(t, env, m, "10.50", nil)
	ctx := tab(t, true)
	browsertest.Navigate(t, ctx, r.Str("url"))
	numbers := brandCases()
	arg, _ := json.Marshal(numbers)
	got, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`(`+string(arg)+`).map(n => {
		const el = document.getElementById("card_number");
		el.value = n;
		el.dispatchEvent(new Event("input"));
		el.dispatchEvent(new Event("blur"));
		return document.getElementById("brand").textContent + "|" + document.getElementById("card_number-err").textContent;
	})`))
	if err != nil || len(got) != len(numbers) {
		t.Fatalf("run the page's checks: got %d results (%v), want %d", len(got), err, len(numbers))
	}
	for i, n := range numbers {
		brand := paylink.BrandOf(n)
		label, ok := brandLabels[brand]
		if !ok {
			t.Fatalf("no label for brand %q: add it to brandLabels", brand)
		}
		want := label + "|"
		if _, _, err := paylink.ParseCardNumber(n); err != nil {
			want += "This card number is not valid."
		}
		if got[i] != want {
			t.Errorf("%s: got brand|error %q from the page, want %q (BrandOf %q)", n, got[i], want, brand)
		}
	}
}

// TestBrowserBackClearsTheCard: Back from the 3-D Secure challenge or from
// a decline brings the hosted page back with Chromium restoring what the
// form held. The script clears the card number, expiry and security code,
// and puts the brand, the summary and the Pay button back as the page
// came (no surcharge shown), so a shared device never shows the card
// again and what is shown matches what Pay would charge.
func TestBrowserBackClearsTheCard(t *testing.T) {
	chromium.Need(t)
	env := start(t)
	m := env.Onboard()
	for _, card := range []string{card3DS, cardDecline} {
		t.Run(card, func(t *testing.T) {
			// Chromium restores the form on most Backs, not all: a Back
			// that restored nothing (the holder's name empty) shows
			// nothing about the script and is tried again.
			for range 3 {
				got, err := backAfterPay(t, env, m, card)
				if err == nil && got[0] == "" {
					continue
				}
				want := []string{"Jo Citizen", "", "", "", "", "Shown when you enter your card", "AUD 10.50", "AUD 10.50 + card surcharge"}
				if err != nil || strings.Join(got, "|") != strings.Join(want, "|") {
					t.Errorf("after Back: got holder, number, expiry, code, brand, surcharge, total and Pay %q (%v), want %q", got, err, want)
				}
				return
			}
			t.Error("after Back: Chromium restored no field of the form in 3 tries")
		})
	}
}

// backAfterPay pays a new link of m with card in a new tab, goes Back to
// the page and returns its card fields' values and its summary's texts.
func backAfterPay(t *testing.T, env *apitest.Env, m *apitest.Merchant, card string) ([]string, error) {
	r := link(t, env, m, "10.50", nil)
	ctx := tab(t, true)
	browsertest.Navigate(t, ctx, r.Str("url"))
	fillCard(t, ctx, card)
	waitTotal(t, ctx, "AUD 10.63")
	browsertest.Submit(t, ctx, "pay")
	back, cancel := context.WithTimeout(ctx, 5*time.Second)
	chromedp.Do(back, chromedp.NavigateBack()) // may time out waiting for the load; the poll below waits for it
	cancel()
	waitBack(t, ctx)
	return chromedp.Run(ctx, chromedp.Evaluate[[]string](`["card_holder", "card_number", "card_expiry", "card_cvc"].map(id => document.getElementById(id).value)
		.concat(["brand", "surcharge", "total", "pay-total"].map(id => document.getElementById(id).textContent))`))
}

// waitBack waits until the tab shows the hosted page's form again after a
// Back, loaded in full (its pageshow handlers run).
func waitBack(t *testing.T, ctx context.Context) {
	t.Helper()
	restored := `document.readyState === "complete" && performance.getEntriesByType("navigation")[0].type === "back_forward" && !!document.getElementById("card_number")`
	var err error
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		var ok bool
		if ok, err = chromedp.Run(ctx, chromedp.Evaluate[bool](restored)); err == nil && ok {
			return
		}
	}
	t.Fatalf("the hosted page after Back: not shown (%v)", err)
}

// TestBrowserSecurityCodeLengthFollowsTheBrand: the script refuses a
// security code of the wrong length for the brand typed, in the page's
// words, before the form is sent (no attempt on the link), and clears the
// message once the number is of a brand the code fits.
func TestBrowserSecurityCodeLengthFollowsTheBrand(t *testing.T) {
	chromium.Need(t)
	env := start(t)
	m := env.Onboard()
	tests := []struct{ number, cvc, want string }{
		{"378282246310005", "123", "Enter the card's 4-digit security code."},
		{cardOK, "1234", "Enter the card's 3-digit security code."},
		{"9999999999999995", "12", "Enter the 3 or 4 digit security code."},
	}
	for _, tt := range tests {
		t.Run(tt.number, func(t *testing.T) {
			r := link(t, env, m, "10.50", nil)
			ctx := tab(t, true)
			browsertest.Navigate(t, ctx, r.Str("url"))
			fillCard(t, ctx, tt.number)
			browsertest.Run(t, ctx, "type the code and pay", clearField("card_cvc"),
				chromedp.SendKeys(chromedp.ID("card_cvc"), tt.cvc), chromedp.Click(chromedp.ID("pay")))
			got, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("card_cvc-err")))
			if err != nil || got != tt.want {
				t.Errorf("security code error: got %q (%v), want %q", got, err, tt.want)
			}
			if st := linkState(t, env, m, r.Str("id")); st.Str("attempts") != "0" {
				t.Errorf("got %s attempts, want 0: the form must not be sent", st.Str("attempts"))
			}
		})
	}
	// A code refused for one brand is accepted once the number is of a
	// brand it fits: 4 digits, and the Visa number edited into an Amex.
	r := link(t, env, m, "10.50", nil)
	ctx := tab(t, true)
	browsertest.Navigate(t, ctx, r.Str("url"))
	fillCard(t, ctx, cardOK)
	browsertest.Run(t, ctx, "type 4 digits and pay", clearField("card_cvc"),
		chromedp.SendKeys(chromedp.ID("card_cvc"), "1234"), chromedp.Click(chromedp.ID("pay")))
	if got, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("card_cvc-err"))); err != nil || got != "Enter the card's 3-digit security code." {
		t.Errorf("4 digits on a Visa: got security code error %q (%v), want the 3-digit one", got, err)
	}
	browsertest.Run(t, ctx, "edit the number into an Amex", clearField("card_number"),
		chromedp.SendKeys(chromedp.ID("card_number"), "378282246310005"))
	if got, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("card_cvc-err"))); err != nil || got != "" {
		t.Errorf("after the number is edited into an Amex: got security code error %q (%v), want none", got, err)
	}
	browsertest.Submit(t, ctx, "pay")
	browsertest.WantText(t, ctx, "paid", "Thank you, this link has been paid")
}

// clearField empties the input id: chromedp.Clear left the code fillCard
// typed in place, and the code then typed made 1231.
func clearField(id string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](`document.getElementById("` + id + `").value = ""`)
}

// TestBrowserNoSurchargeReadsNone: a card whose surcharge rounds to
// nothing (1.2% of AUD 0.01) shows "None" as the summary's surcharge, as
// the paid page then does, not "AUD 0.00 (1.2%, Visa)", and the hint
// below the Pay button does not say a surcharge is included.
func TestBrowserNoSurchargeReadsNone(t *testing.T) {
	chromium.Need(t)
	env := start(t)
	m := env.Onboard()
	r := link(t, env, m, "0.01", nil)
	ctx := tab(t, true)
	browsertest.Navigate(t, ctx, r.Str("url"))
	fillCard(t, ctx, cardOK)
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById("surcharge").textContent !== "Shown when you enter your card"`,
		chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		t.Fatalf("no quote shown: %v", err)
	}
	for _, step := range []string{"typed", "paid"} {
		if got, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("surcharge"))); err != nil || got != "None" {
			t.Errorf("%s: got surcharge %q (%v), want None", step, got, err)
		}
		if step == "typed" {
			const want = "No card surcharge applies to this card."
			if got, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("pay-hint"))); err != nil || got != want {
				t.Errorf("typed: got the hint %q (%v), want %q", got, err, want)
			}
			browsertest.Submit(t, ctx, "pay")
			browsertest.WantText(t, ctx, "paid", "Thank you, this link has been paid")
		}
	}
}

// TestBrowserScriptWithoutBrandRulesLeavesTheBrandToTheServer: a page
// rendered by an instance older than the brand rules (no data-brands on
// its form, during a rolling upgrade) running this build's script takes
// a valid card number instead of refusing every one (verification sweep).
func TestBrowserScriptWithoutBrandRulesLeavesTheBrandToTheServer(t *testing.T) {
	chromium.Need(t)
	env := start(t)
	r := link(t, env, env.Onboard(), "10.50", nil)
	src := newBrowser(t, env).get(env.Server.URL + "/checkout/static/app.js").body
	ctx := tab(t, true)
	browsertest.Navigate(t, ctx, r.Str("url"))
	got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => {
		const f = document.getElementById("payform");
		const copy = f.cloneNode(true);
		copy.removeAttribute("data-brands");
		f.replaceWith(copy);
		`+src+`
		const el = document.getElementById("card_number");
		el.value = "4111111111111111";
		el.dispatchEvent(new Event("input"));
		el.dispatchEvent(new Event("blur"));
		return document.getElementById("card_number-err").textContent;
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if got != "" {
		t.Errorf("a valid number on a form without brand rules: got the error %q, want none", got)
	}
}
