package webhook_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
	"github.com/paylink/paylink/internal/processor"
)

// debit submits a direct debit of 25.50 AUD from account and returns its
// reference; want is the status the response must show.
func debit(t *testing.T, env *apitest.Env, m *apitest.Merchant, account, want string) string {
	t.Helper()
	r := env.Post("/v5/direct_debit", m, map[string]any{
		"token":        map[string]any{"company_token": m.Creds.CompanyToken, "transaction_token": env.TransactionToken(m)},
		"bank_account": map[string]any{"number": account, "holder_name": "Jo Citizen", "bsb": "062-000"},
		"customer":     map[string]any{"ip_address": "203.0.113.7", "timezone": "Australia/Sydney", "customer_email": "jo@example.com"},
		"purchase":     map[string]any{"amount": "25.50", "currency": "AUD", "should_service_apply_fee": true},
	})
	if r.Status != http.StatusOK || r.Str("purchase.status") != want {
		t.Fatalf("direct debit: got %d %s, want %s", r.Status, r.Raw, want)
	}
	return r.Str("purchase.purchase_reference")
}

// cardOnlyFields are the webhook fields a bank account has no value for;
// the spec does not mark them nullable, so they are "".
var cardOnlyFields = []string{"card_brand", "card_funding_type", "card_consumer_type", "card_issuer_country",
	"card_region_class", "card_expiry"}

// checkBankAccountWebhook checks the instrument fields of a direct debit
// webhook.
func checkBankAccountWebhook(t *testing.T, w map[string]any, ref, account string) {
	t.Helper()
	if w["transaction_reference"] != ref || w["payment_type"] != "BankAccount" || w["webhook_type"] != "API" {
		t.Errorf("got reference %v payment_type %v webhook_type %v", w["transaction_reference"], w["payment_type"], w["webhook_type"])
	}
	if w["masked_card_number"] == account || w["masked_card_number"] == "" {
		t.Errorf("masked_card_number %v must be the obfuscated account", w["masked_card_number"])
	}
	for _, k := range cardOnlyFields {
		if w[k] != "" {
			t.Errorf("%s: got %v, want \"\"", k, w[k])
		}
	}
}

// downBank is a bank that cannot be reached: the outer edge a real BECS
// connection would be.
type downBank struct{ *processor.Bank }

func (downBank) SubmitDebit(context.Context, paylink.BankDebit) (paylink.BankSubmission, error) {
	return paylink.BankSubmission{}, errors.New("connection refused")
}

// TestFailedDirectDebitWebhook: a debit the bank did not accept is FAILED
// and sends its webhook, without fees.
func TestFailedDirectDebitWebhook(t *testing.T) {
	env := apitest.Start(t, apitest.Options{Bank: downBank{&processor.Bank{}}})
	hook := newReceiver(t, http.StatusOK)
	m := onboard(env, hook.URL+"/hook", nil)
	ref := debit(t, env, m, "123456789", "FAILED")
	waitHit(t, hook)
	got := hook.requests()
	if len(got) != 1 {
		t.Fatalf("got %d webhooks, want one FAILED", len(got))
	}
	w := decode(t, got[0].Body)
	checkBankAccountWebhook(t, w, ref, "123456789")
	lines, _ := w["fee_detail"].(map[string]any)["fee_lines"].([]any)
	if w["status"] != "FAILED" || len(lines) != 0 {
		t.Errorf("got status %v with fee lines %v, want FAILED without fees", w["status"], lines)
	}
}

func TestDirectDebitWebhooks(t *testing.T) {
	tests := []struct {
		name, account, final, processorCode string
	}{
		{name: "cleared", account: "123456789", final: "APPROVED"},
		{name: "dishonoured", account: "987650002", final: "DECLINED", processorCode: "6"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := apitest.Start(t, apitest.Options{})
			hook := newReceiver(t, http.StatusOK)
			m := onboard(env, hook.URL+"/hook", nil)
			ref := debit(t, env, m, tt.account, "PENDING")
			waitHit(t, hook)
			// The PENDING delivery must be recorded before the clock jumps
			// 73 hours, or its lease expires and it is claimed again.
			env.WaitWebhooks()
			env.Clock.Advance(73 * time.Hour)
			if n, err := env.Service.ClearDirectDebits(context.Background()); err != nil || n != 1 {
				t.Fatalf("clearing: moved %d, %v; want 1", n, err)
			}
			waitHit(t, hook)
			got := hook.requests()
			if len(got) != 2 {
				t.Fatalf("got %d webhooks, want PENDING then %s", len(got), tt.final)
			}
			pending, final := decode(t, got[0].Body), decode(t, got[1].Body)
			checkBankAccountWebhook(t, pending, ref, tt.account)
			checkBankAccountWebhook(t, final, ref, tt.account)
			if pending["status"] != "PENDING" || final["status"] != tt.final {
				t.Errorf("got statuses %v then %v, want PENDING then %s", pending["status"], final["status"], tt.final)
			}
			if tt.processorCode != "" && final["processor_error_code"] != tt.processorCode {
				t.Errorf("dishonour: got processor_error_code %v, want %s", final["processor_error_code"], tt.processorCode)
			}
			if tt.final == "APPROVED" {
				lines, _ := final["fee_detail"].(map[string]any)["fee_lines"].([]any)
				if len(lines) != 1 || lines[0].(map[string]any)["fee_code"] != "DD_FEE" || lines[0].(map[string]any)["fee_amount"] != "0.43" {
					t.Errorf("got fee lines %v, want one DD_FEE of 0.43 (0.5%% of 25.50 + 0.30)", lines)
				}
			}
		})
	}
}
