package api

import (
	"bytes"
	"net/http"
	"strconv"
	"time"

	"github.com/paylink/paylink"
)

// Balances, balance transactions, payouts and settlement reports: read
// from the ledger (docs/ledger.md). Every call is a GET.

type balanceJSON struct {
	Currency  string `json:"currency"`
	Pending   string `json:"pending"`
	Available string `json:"available"`
	PaidOut   string `json:"paid_out"`
}

// balance: GET /v5/balance.
func (s *Server) balance(w http.ResponseWriter, r *http.Request, m *paylink.Merchant, b *body) (any, error) {
	bs, err := s.svc.Balances(r.Context(), m)
	if err != nil {
		return nil, err
	}
	out := make([]balanceJSON, 0, len(bs))
	for _, b := range bs {
		out = append(out, balanceJSON{Currency: b.Currency, Pending: paylink.FormatIn(b.Pending, b.Currency),
			Available: paylink.FormatIn(b.Available, b.Currency), PaidOut: paylink.FormatIn(b.PaidOut, b.Currency)})
	}
	return map[string]any{"balances": out, "response_code": paylink.CodeSuccess, "response_message": msgSuccess}, nil
}

type balanceTransactionJSON struct {
	ID              string `json:"id"`
	Type            string `json:"type"`
	Reference       string `json:"reference"`
	RefundReference string `json:"refund_reference,omitempty"`
	Currency        string `json:"currency"`
	Amount          string `json:"amount"`
	Fee             string `json:"fee"`
	Net             string `json:"net"`
	Status          string `json:"status"`
	SettlementBatch string `json:"settlement_batch,omitempty"`
	CreatedAt       string `json:"created_at"`
}

// page reads the keyset pagination parameters limit (default 20) and
// starting_after from the query, read as a body is (queryBody).
func page(r *http.Request) (string, int, error) {
	q, err := queryBody(r, "limit", "starting_after")
	if err != nil {
		return "", 0, err
	}
	limit, v := 20, q.str(maxQueryValue, "limit")
	after := q.str(maxQueryValue, "starting_after")
	if err := q.err(); err != nil {
		return "", 0, err
	}
	problems := paylink.FieldErrors{}
	if v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > paylink.MaxBalanceTransactions {
			problems.Add("limit", "must be a whole number from 1 to "+strconv.Itoa(paylink.MaxBalanceTransactions))
		}
		limit = n
	}
	if len(after) > maxToken {
		problems.Add("starting_after", "is not an id")
	}
	if err := problems.Err(); err != nil {
		return "", 0, err
	}
	return after, limit, nil
}

// maxQueryValue bounds a query parameter's value as read, above what
// any one holds, so that a value too long is refused by its own rule.
const maxQueryValue = 1024

// balanceTransactions: GET /v5/balance_transactions.
func (s *Server) balanceTransactions(w http.ResponseWriter, r *http.Request, m *paylink.Merchant, b *body) (any, error) {
	after, limit, err := page(r)
	if err != nil {
		return nil, err
	}
	ps, more, err := s.svc.BalanceTransactions(r.Context(), m, after, limit)
	if err != nil {
		return nil, err
	}
	out := make([]balanceTransactionJSON, 0, len(ps))
	for _, p := range ps {
		status := "pending"
		if p.SettlementBatch != "" || p.Kind == paylink.PostingPayout {
			status = "available"
		}
		out = append(out, balanceTransactionJSON{ID: p.ID, Type: string(p.Kind), Reference: p.Reference,
			RefundReference: p.RefundReference, Currency: p.Currency, Amount: paylink.FormatIn(p.Amount, p.Currency),
			Fee: paylink.FormatIn(p.Fee, p.Currency), Net: paylink.FormatIn(p.Net, p.Currency), Status: status,
			SettlementBatch: p.SettlementBatch, CreatedAt: p.CreatedAt.Format(time.RFC3339)})
	}
	return map[string]any{"data": out, "has_more": more, "response_code": paylink.CodeSuccess, "response_message": msgSuccess}, nil
}

type payoutJSON struct {
	ID        string   `json:"id"`
	Currency  string   `json:"currency"`
	Amount    string   `json:"amount"`
	Batches   []string `json:"settlement_batches"`
	Covers    []string `json:"balance_transactions"`
	CreatedAt string   `json:"created_at"`
}

// payouts: GET /v5/payouts.
func (s *Server) payouts(w http.ResponseWriter, r *http.Request, m *paylink.Merchant, b *body) (any, error) {
	after, limit, err := page(r)
	if err != nil {
		return nil, err
	}
	ps, more, err := s.svc.Payouts(r.Context(), m, after, limit)
	if err != nil {
		return nil, err
	}
	out := make([]payoutJSON, 0, len(ps))
	for _, p := range ps {
		out = append(out, payoutJSON{ID: p.ID, Currency: p.Currency, Amount: paylink.FormatIn(p.Amount, p.Currency),
			Batches: p.BatchIDs, Covers: p.BalanceTransactionIDs, CreatedAt: p.CreatedAt.Format(time.RFC3339)})
	}
	return map[string]any{"data": out, "has_more": more, "response_code": paylink.CodeSuccess, "response_message": msgSuccess}, nil
}

// csvBody is a handler result sent as text/csv instead of JSON.
type csvBody []byte

// settlementReport: GET /v5/reports/settlement?date=YYYY-MM-DD (text/csv).
func (s *Server) settlementReport(w http.ResponseWriter, r *http.Request, m *paylink.Merchant, b *body) (any, error) {
	q, err := queryBody(r, "date")
	if err != nil {
		return nil, err
	}
	date := q.str(maxQueryValue, "date")
	if err := q.err(); err != nil {
		return nil, err
	}
	rep, err := s.svc.SettlementReport(r.Context(), m, date)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := rep.WriteCSV(&buf); err != nil {
		return nil, paylink.Internal("settlement report", err)
	}
	return csvBody(buf.Bytes()), nil
}
