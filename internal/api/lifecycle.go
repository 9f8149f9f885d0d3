package api

import (
	"net/http"

	"github.com/paylink/paylink"
)

// capture: POST /v5/purchase/{ref}/capture (4.4).
func (s *Server) capture(w http.ResponseWriter, r *http.Request, m *paylink.Merchant, b *body) (any, error) {
	b.checkPlacement(&capturePlacement)
	req := paylink.CaptureRequest{
		CompanyToken:     b.companyToken("token.company_token"),
		TransactionToken: b.transactionToken(),
		ApplySurcharge:   b.boolean(captureSurcharge.paths...),
		Metadata:         b.metadata(),
	}
	req.Amount, req.Currency = b.money("capture.amount", "capture.currency")
	if err := b.err(); err != nil {
		return nil, err
	}
	t, err := s.svc.Capture(r.Context(), m, pathValue(r, "ref"), req)
	if err != nil {
		return nil, err
	}
	noteReference(r, t.Reference)
	return transactionResult(t, false), nil
}

// cancel: POST /v5/purchase/{ref}/cancel (4.5).
func (s *Server) cancel(w http.ResponseWriter, r *http.Request, m *paylink.Merchant, b *body) (any, error) {
	b.checkPlacement(&cancelPlacement)
	req := paylink.CancelRequest{
		CompanyToken:     b.companyToken("token.company_token"),
		TransactionToken: b.transactionToken(),
		Metadata:         b.metadata(),
	}
	if err := b.err(); err != nil {
		return nil, err
	}
	t, err := s.svc.Cancel(r.Context(), m, pathValue(r, "ref"), req)
	if err != nil {
		return nil, err
	}
	noteReference(r, t.Reference)
	return transactionResult(t, false), nil
}

// refundRequest reads the body of card and direct debit refunds.
func (b *body) refundRequest() (paylink.RefundRequest, error) {
	b.checkPlacement(&refundPlacement)
	req := paylink.RefundRequest{
		CompanyToken:     b.companyToken("token.company_token"),
		TransactionToken: b.transactionToken(),
		Customer:         b.customer(),
		InvoiceNumber:    b.str(paylink.MaxInvoiceLength, "refund.invoice_number"),
		Metadata:         b.metadata(),
	}
	req.Amount, req.Currency = b.moneyWith(paylink.ParseTotal, "refund.amount", "refund.currency")
	return req, b.err()
}

// refund: POST /v5/purchase/{ref}/refund (4.7), answered with the refund
// result object (2.5).
func (s *Server) refund(w http.ResponseWriter, r *http.Request, m *paylink.Merchant, b *body) (any, error) {
	req, err := b.refundRequest()
	if err != nil {
		return nil, err
	}
	rf, t, err := s.svc.Refund(r.Context(), m, pathValue(r, "ref"), req)
	if err != nil {
		return nil, err
	}
	noteReference(r, rf.Reference)
	var card any = map[string]any{}
	if t.Details.Card != nil {
		card = cardHolder(*t.Details.Card)
	}
	return map[string]any{
		"card":             card,
		"refund":           refundResult(rf),
		"response_code":    responseCode(rf.Status),
		"response_message": rf.Details.Message,
	}, nil
}

// refundStatus: POST (or GET) /v5/refund/{refund_reference|invoice_number|purchase_reference} (4.8).
func (s *Server) refundStatus(w http.ResponseWriter, r *http.Request, m *paylink.Merchant, b *body) (any, error) {
	if err := s.statusCaller(r, m, b); err != nil {
		return nil, err
	}
	rf, err := s.svc.RefundStatus(r.Context(), m, pathValue(r, "ref"))
	if err != nil {
		return nil, err
	}
	noteReference(r, rf.Reference)
	cur, _ := paylink.LookupCurrency(rf.Currency)
	return map[string]any{
		"transaction_time_utc": paylink.FormatSpecTime(rf.CreatedAt),
		"status":               rf.Status.Public(),
		"refund_reference":     rf.Reference,
		"purchase_reference":   rf.TransactionReference,
		"invoice_number":       rf.InvoiceNumber,
		"amount":               number(rf.Amount, cur),
		"currency":             rf.Currency,
		"response_code":        paylink.CodeSuccess,
		"response_message":     msgSuccess,
	}, nil
}

// threeDSRedirect: POST /v5/purchase/{ref}/3dsredirect (4.9).
func (s *Server) threeDSRedirect(w http.ResponseWriter, r *http.Request, m *paylink.Merchant, b *body) (any, error) {
	if err := s.companyToken(r, m, b); err != nil {
		return nil, err
	}
	t, err := s.svc.CompleteThreeDS(r.Context(), m, pathValue(r, "ref"))
	if err != nil {
		return nil, err
	}
	noteReference(r, t.Reference)
	return transactionResult(t, true), nil
}

// statusCaller authorises a status look-up: a POST presents the company
// token (spec 4.8); a GET (or HEAD), for polling without a body, has the
// API key alone.
func (s *Server) statusCaller(r *http.Request, m *paylink.Merchant, b *body) error {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return nil
	}
	return s.companyToken(r, m, b)
}

// companyToken checks the body's company_token (or token.company_token).
func (s *Server) companyToken(r *http.Request, m *paylink.Merchant, b *body) error {
	b.checkPlacement(&tokenPlacement)
	company := b.companyToken("company_token")
	if err := b.err(); err != nil {
		return err
	}
	return s.svc.CheckCompanyToken(r.Context(), m, company)
}
