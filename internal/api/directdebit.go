package api

import (
	"net/http"

	"github.com/paylink/paylink"
)

// bankAccount reads bank_account; the number keeps its digits as sent
// (a JSON number loses leading zeros, so clients should send a string).
func (b *body) bankAccount() paylink.BankAccount {
	return paylink.BankAccount{
		Number:     b.str(maxField, "bank_account.number"),
		HolderName: b.str(maxField, "bank_account.holder_name"),
		BSB:        b.str(maxField, "bank_account.bsb"),
	}
}

// directDebitFee: POST /v5/direct_debit_fee (4.14).
func (s *Server) directDebitFee(w http.ResponseWriter, r *http.Request, m *paylink.Merchant, b *body) (any, error) {
	b.checkPlacement(&debitFeePlacement)
	company := b.companyToken("token.company_token")
	amount, currency := b.money("purchase.amount", "purchase.currency")
	if err := b.err(); err != nil {
		return nil, err
	}
	q, err := s.svc.PreviewDirectDebitFee(r.Context(), m, company, amount, currency)
	if err != nil {
		return nil, err
	}
	cur, _ := paylink.LookupCurrency(q.Currency)
	return map[string]any{
		"fee": map[string]any{
			"amount":       number(q.Fee, cur),
			"total_amount": number(q.Total, cur),
			"fee_percent":  rawNumber(q.Config.Percent.String()),
			"fee_fixed":    number(q.Config.Fixed, cur),
			"fee_capped":   number(q.Config.Cap, cur),
			"currency":     q.Currency,
		},
		"response_code":    paylink.CodeSuccess,
		"response_message": msgSuccess,
	}, nil
}

// directDebit: POST /v5/direct_debit (4.13).
func (s *Server) directDebit(w http.ResponseWriter, r *http.Request, m *paylink.Merchant, b *body) (any, error) {
	b.checkPlacement(&directDebitPlacement)
	req := paylink.DirectDebitRequest{
		CompanyToken:     b.companyToken("token.company_token"),
		TransactionToken: b.transactionToken(),
		Account:          b.bankAccount(),
		Customer:         b.customer(),
		InvoiceNumber:    b.str(paylink.MaxInvoiceLength, "purchase.invoice_number"),
		ApplyFee:         b.boolean(debitFee.paths...),
		PreAuth:          b.boolean(purchasePreAuth.paths...),
		Metadata:         b.metadata(),
	}
	req.Amount, req.Currency = b.money("purchase.amount", "purchase.currency")
	if err := b.err(); err != nil {
		return nil, err
	}
	t, err := s.svc.DirectDebit(r.Context(), m, req)
	if err != nil {
		return nil, err
	}
	noteReference(r, t.Reference)
	return directDebitResult(t), nil
}

// bankAccountResult is the obfuscated account of a debit. Responses carry
// it under bank_account (the spec's field list) and, identically, under
// card (the spec's sample response), so clients written for either read it.
func bankAccountResult(t *paylink.Transaction) map[string]any {
	a := t.Details.BankAccount
	if a == nil {
		a = &paylink.BankAccountInfo{}
	}
	return map[string]any{"number": a.Masked, "holder_name": a.HolderName, "bsb": a.BSB}
}

// directDebitResult is the direct debit response of spec 4.13.
func directDebitResult(t *paylink.Transaction) map[string]any {
	cur, _ := paylink.LookupCurrency(t.Currency)
	account := bankAccountResult(t)
	return map[string]any{
		"bank_account": account,
		"card":         account,
		"purchase": map[string]any{
			"transaction_time_utc": nullable(paylink.FormatSpecTime(t.ProcessedAt)),
			"status":               t.Status.Public(),
			"purchase_reference":   t.Reference,
			"invoice_number":       t.InvoiceNumber,
			"amount":               number(t.Amount, cur),
			"fee_amount":           number(t.Fee, cur),
			"total_amount":         number(t.Total, cur),
			"currency":             t.Currency,
		},
		"response_code":    responseCode(t.Status),
		"response_message": t.Details.Message,
	}
}

// directDebitRefund: POST /v5/direct_debit/{ref}/refund (4.15).
func (s *Server) directDebitRefund(w http.ResponseWriter, r *http.Request, m *paylink.Merchant, b *body) (any, error) {
	req, err := b.refundRequest()
	if err != nil {
		return nil, err
	}
	rf, t, err := s.svc.RefundDirectDebit(r.Context(), m, pathValue(r, "ref"), req)
	if err != nil {
		return nil, err
	}
	noteReference(r, rf.Reference)
	account := bankAccountResult(t)
	return map[string]any{
		"bank_account":     account,
		"card":             account,
		"refund":           refundResult(rf),
		"response_code":    responseCode(rf.Status),
		"response_message": rf.Details.Message,
	}, nil
}
