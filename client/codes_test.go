package client_test

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/client"
)

// parseGo parses a Go file.
func parseGo(t *testing.T, file string) *ast.File {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// stringConsts reads the string constants declared in a Go file whose
// names start with prefix, by name.
func stringConsts(t *testing.T, file, prefix string) map[string]string {
	t.Helper()
	f := parseGo(t, file)
	out := map[string]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if i >= len(vs.Values) || !strings.HasPrefix(name.Name, prefix) {
					continue
				}
				if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					out[name.Name], _ = strconv.Unquote(lit.Value)
				}
			}
		}
	}
	return out
}

// TestConstantsAreTheServers: every status and response code paylink
// shows an API client has a client constant of the same name and value
// (read from both packages' sources, so a status or code added to
// paylink without the client fails here), and the client has none that
// paylink lacks.
func TestConstantsAreTheServers(t *testing.T) {
	mine := stringConsts(t, "codes.go", "")
	want := map[string]string{"CodeHTTPError": client.CodeHTTPError} // the client's own
	for name, v := range stringConsts(t, "../payment.go", "Status") {
		// PROCESSING is internal, shown as PENDING: no client sees it.
		if string(paylink.Status(v).Public()) == v {
			want[name] = v
		}
	}
	for name, v := range stringConsts(t, "../link.go", "Link") {
		want[name] = v
	}
	notAPI := map[string]bool{
		"CodeClientClosedRequest": true, // logged for a client that hung up: never received
		"CodeCSRFFailed":          true, // the pages'
		"CodeRefundNotApproved":   true, // the dashboard's
	}
	for _, name := range []string{"CodeWeakPassword", "CodeSignInFailed", "CodeSignInThrottled", "CodeSessionExpired", "CodeEmailTaken",
		"CodeInviteInvalid", "CodeLastAdmin", "CodeTOTPRequired", "CodeTOTPInvalid", "CodePermissionDenied"} {
		notAPI[name] = true // the dashboard's staff operations' (error.go keeps every code)
	}
	for name, v := range stringConsts(t, "../error.go", "Code") {
		if !notAPI[name] {
			want[name] = v
		}
	}
	for name, v := range want {
		if got, ok := mine[name]; !ok || got != v {
			t.Errorf("client.%s: got %q (declared %v), want %q as paylink sends it", name, got, ok, v)
		}
	}
	for name, v := range mine {
		if _, ok := want[name]; !ok {
			t.Errorf("client.%s = %q: paylink has no such status or code", name, v)
		}
	}
}

// TestConstantsMatchRealAnswers: the statuses and result codes a real
// paylink answers compare equal to the constants, through the response
// structs' string fields.
func TestConstantsMatchRealAnswers(t *testing.T) {
	c, env := newClient(t)
	ctx := context.Background()
	pay := func(number string, hold bool) *client.TransactionResult {
		t.Helper()
		res, err := c.Purchase(ctx, client.PurchaseRequest{
			Customer: buyer,
			Card:     &client.Card{Number: number, ExpiryMonth: "12", ExpiryYear: year(env), CVC: "123"},
			Purchase: client.PurchaseDetails{Amount: "5.00", Currency: "AUD", ApplyPreAuthorisation: hold},
		})
		if err != nil {
			t.Fatalf("purchase with %s: %v", number[len(number)-4:], err)
		}
		return res
	}
	for _, tc := range []struct {
		number         string
		hold           bool
		status, result string
	}{
		{"4111111111111111", false, client.StatusApproved, client.CodeSuccess},
		{"4000000000000002", false, client.StatusDeclined, client.CodeDeclined},
		{"4000000000000119", false, client.StatusFailed, client.CodeFailed},
		{"4111111111111111", true, client.StatusPreAuthorised, client.CodeSuccess},
	} {
		res := pay(tc.number, tc.hold)
		if res.Purchase.Status != tc.status || res.ResponseCode != tc.result {
			t.Errorf("card ...%s (hold %v): got %s, %s; want %s, %s", tc.number[12:], tc.hold,
				res.Purchase.Status, res.ResponseCode, tc.status, tc.result)
		}
		st, err := c.PurchaseStatus(ctx, res.Purchase.PurchaseReference)
		if err != nil || st.Status != tc.status || st.ResponseCode != client.CodeSuccess {
			t.Errorf("look-up of card ...%s: got %+v, %v; want %s, %s", tc.number[12:], st, err, tc.status, client.CodeSuccess)
		}
	}
	held := pay("4111111111111111", true)
	if res, err := c.Cancel(ctx, held.Purchase.PurchaseReference, client.CancelRequest{}); err != nil || res.Purchase.Status != client.StatusPreAuthorisedReversed {
		t.Errorf("cancel: got %+v, %v; want %s", res, err, client.StatusPreAuthorisedReversed)
	}
	if _, err := c.Cancel(ctx, held.Purchase.PurchaseReference, client.CancelRequest{}); !client.IsCode(err, client.CodeHoldReleased) {
		t.Errorf("second cancel: got %v, want %s", err, client.CodeHoldReleased)
	}
	debit, err := c.DirectDebit(ctx, client.DirectDebitRequest{
		BankAccount: client.BankAccount{Number: "123456789", HolderName: "Jo Citizen", BSB: "062-000"},
		Customer:    buyer,
		Purchase:    client.DirectDebitDetails{Amount: "100.00", Currency: "AUD"},
	})
	if err != nil || debit.Purchase.Status != client.StatusPending || debit.ResponseCode != client.CodeSuccess {
		t.Errorf("direct debit: got %+v, %v; want %s, %s", debit, err, client.StatusPending, client.CodeSuccess)
	}
	link, err := c.CreatePaymentLink(ctx, client.PaymentLinkRequest{Amount: "12.00", Currency: "AUD", MerchantReference: "ORD-1"})
	if err != nil || link.Status != client.LinkUnpaid {
		t.Fatalf("link: got %+v, %v; want %s", link, err, client.LinkUnpaid)
	}
	if link, err = c.CancelPaymentLink(ctx, link.ID); err != nil || link.Status != client.LinkCancelled {
		t.Errorf("cancelled link: got %+v, %v; want %s", link, err, client.LinkCancelled)
	}
	if _, err := c.PurchaseStatus(ctx, "pr_nope"); !client.IsCode(err, client.CodeNotFound) {
		t.Errorf("unknown reference: got %v, want %s", err, client.CodeNotFound)
	}
}
