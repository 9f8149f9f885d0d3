package client_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/paylink/paylink/client"
)

// TestFormattedValuesHideSecrets formats and logs every value of the
// client that holds a secret, with every verb and both of log/slog's
// handlers, and looks for the secrets in what comes out.
func TestFormattedValuesHideSecrets(t *testing.T) {
	const (
		pan, cvc, cardToken = "4111111111111111", "987", "ct_cardtokensecret"
		apiKey, company     = "pl_sk_apikeysecret", "co_companysecret"
		txToken, account    = "tt_transactiontokensecret", "000123456789"
		whsec               = "whsec_c2lnbmluZ3NlY3JldHNpZ25pbmdzZWNyZXQ="
	)
	secrets := []string{pan, "411111111111", cvc, cardToken, apiKey, company, txToken, account, "c2lnbmluZ3NlY3JldH"}
	card := client.Card{Token: cardToken, Number: pan, ExpiryMonth: "12", ExpiryYear: "30", CVC: cvc, HolderName: "Jo"}
	tokens := client.Tokens{CompanyToken: company, TransactionToken: txToken}
	bank := client.BankAccount{Number: account, HolderName: "Jo", BSB: "062-000"}
	verifier, err := client.NewWebhookVerifier([]string{whsec}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	values := map[string]any{
		"Card": card, "*Card": &card, "Tokens": tokens, "BankAccount": bank,
		"Client":             client.New("https://pay.example", apiKey, company),
		"WebhookVerifier":    verifier,
		"PurchaseRequest":    client.PurchaseRequest{Token: tokens, Card: &card},
		"SurchargeRequest":   client.SurchargeRequest{Card: card, Amount: "1.00", Currency: "AUD"},
		"TokenizeRequest":    client.TokenizeRequest{Card: card},
		"DirectDebitRequest": client.DirectDebitRequest{Token: tokens, BankAccount: bank},
		"CaptureRequest":     client.CaptureRequest{Token: tokens},
		"CancelRequest":      client.CancelRequest{Token: tokens},
		"RefundRequest":      client.RefundRequest{Token: tokens},
	}
	for name, v := range values {
		var out []string
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x"} {
			out = append(out, fmt.Sprintf(verb, v))
		}
		for _, h := range []func(*bytes.Buffer) slog.Handler{
			func(b *bytes.Buffer) slog.Handler { return slog.NewTextHandler(b, noTime) },
			func(b *bytes.Buffer) slog.Handler { return slog.NewJSONHandler(b, noTime) },
		} {
			var b bytes.Buffer
			slog.New(h(&b)).Info("call", "value", v)
			out = append(out, b.String())
		}
		for _, o := range out {
			for _, s := range secrets {
				if strings.Contains(o, s) || strings.Contains(o, fmt.Sprintf("%x", s)) {
					t.Errorf("%s shows a secret (%q) in %s", name, s, o)
				}
			}
		}
	}
	if got := fmt.Sprintf("%+v", card); !strings.Contains(got, "...1111") || !strings.Contains(got, "ExpiryMonth:12") {
		t.Errorf("a card shows its last four digits and expiry; got %s", got)
	}
	wire, err := json.Marshal(client.PurchaseRequest{Token: tokens, Card: &card})
	if err != nil || !strings.Contains(string(wire), pan) || !strings.Contains(string(wire), txToken) {
		t.Errorf("the request as sent keeps its card and token; got %s, %v", wire, err)
	}
}

// noTime leaves the time out of a log line, whose digits could hold a
// three-digit secret by chance (the CVC 987 in "20:21:01.516987636").
var noTime = &slog.HandlerOptions{ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}}
