package client

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
)

// Balance is a merchant's balance in one currency, from the ledger:
// decimal strings in major units.
type Balance struct {
	Currency  string `json:"currency"`
	Pending   string `json:"pending"`   // captured, not yet settled
	Available string `json:"available"` // settled, not yet paid out
	PaidOut   string `json:"paid_out"`  // paid out so far
}

// BalanceTransaction is one movement of the merchant's balance.
type BalanceTransaction struct {
	ID              string `json:"id"`
	Type            string `json:"type"`
	Reference       string `json:"reference"`
	RefundReference string `json:"refund_reference,omitempty"`
	Currency        string `json:"currency"`
	Amount          string `json:"amount"` // gross, signed
	Fee             string `json:"fee"`
	Net             string `json:"net"`
	Status          string `json:"status"` // pending or available
	SettlementBatch string `json:"settlement_batch,omitempty"`
	CreatedAt       string `json:"created_at"`
}

// Payout took a merchant's available balance in one currency to its bank.
type Payout struct {
	ID                  string   `json:"id"`
	Currency            string   `json:"currency"`
	Amount              string   `json:"amount"`
	SettlementBatches   []string `json:"settlement_batches"`
	BalanceTransactions []string `json:"balance_transactions"`
	CreatedAt           string   `json:"created_at"`
}

// Page names a page of a newest-first list: the id of the last item of
// the page before ("" for the first page) and how many items (0 for the
// server's default of 20; at most 100, paylink answers 400 above; a
// negative count is an error).
type Page struct {
	StartingAfter string
	Limit         int
}

// query is the page's query string.
func (p Page) query() (string, error) {
	if p.Limit < 0 {
		return "", fmt.Errorf("paylink: page limit %d: want 0 (the server's default) or more", p.Limit)
	}
	q := url.Values{}
	if p.StartingAfter != "" {
		q.Set("starting_after", p.StartingAfter)
	}
	if p.Limit > 0 {
		q.Set("limit", strconv.Itoa(p.Limit))
	}
	if len(q) == 0 {
		return "", nil
	}
	return "?" + q.Encode(), nil
}

// Balances is the merchant's balances, one per currency.
type Balances struct {
	Result
	Balances []Balance `json:"balances"`
}

// List is one page of a newest-first list, and whether more follow
// (read the next with Page{StartingAfter: the last item's ID}).
type List[T any] struct {
	Result
	Data    []T  `json:"data"`
	HasMore bool `json:"has_more"`
}

// Balances is GET /v5/balance: one balance per currency.
func (c *Client) Balances(ctx context.Context, opts ...CallOption) (*Balances, error) {
	var out Balances
	if err := c.get(ctx, "/v5/balance", &out, opts); err != nil {
		return nil, err
	}
	return &out, nil
}

// BalanceTransactions is GET /v5/balance_transactions: a page of the
// merchant's balance movements, newest first.
func (c *Client) BalanceTransactions(ctx context.Context, p Page, opts ...CallOption) (*List[BalanceTransaction], error) {
	return list[BalanceTransaction](ctx, c, "/v5/balance_transactions", p, opts)
}

// Payouts is GET /v5/payouts: a page of payouts, newest first.
func (c *Client) Payouts(ctx context.Context, p Page, opts ...CallOption) (*List[Payout], error) {
	return list[Payout](ctx, c, "/v5/payouts", p, opts)
}

// list reads one page of a newest-first list at path.
func list[T any](ctx context.Context, c *Client, path string, p Page, opts []CallOption) (*List[T], error) {
	q, err := p.query()
	if err != nil {
		return nil, err
	}
	var out List[T]
	if err := c.get(ctx, path+q, &out, opts); err != nil {
		return nil, err
	}
	return &out, nil
}

// maxReport bounds the settlement report SettlementReport reads into
// memory: about 1.7 million balance transactions in a day.
const maxReport = 256 << 20

// SettlementReport is GET /v5/reports/settlement: the settlement report
// of a UTC day (YYYY-MM-DD) as CSV, at most 256 MiB (an error beyond;
// WriteSettlementReport streams a report of any size).
func (c *Client) SettlementReport(ctx context.Context, day string, opts ...CallOption) ([]byte, error) {
	path := reportPath(day)
	res, err := c.openRetrying(ctx, reads, http.MethodGet, path, nil, opts)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	data, err := readAtMost(res.Body, maxReport, "response")
	if err != nil {
		return nil, fmt.Errorf("paylink: GET %s: %w (WriteSettlementReport streams a report of any size)", path, err)
	}
	return data, nil
}

// WriteSettlementReport is SettlementReport streamed into w, whatever its
// size, with what the answer's headers say (its Result has no response
// code: the report is CSV). An error part-way leaves part of the report
// in w.
func (c *Client) WriteSettlementReport(ctx context.Context, day string, w io.Writer, opts ...CallOption) (*Result, error) {
	path := reportPath(day)
	res, err := c.openRetrying(ctx, reads, http.MethodGet, path, nil, opts)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if _, err := io.Copy(w, res.Body); err != nil {
		return nil, fmt.Errorf("paylink: GET %s: %w", path, err)
	}
	var out Result
	out.fromHeaders(res.Header)
	return &out, nil
}

// reportPath is the settlement report's address for day.
func reportPath(day string) string { return "/v5/reports/settlement?date=" + url.QueryEscape(day) }

// get sends a GET to path and decodes the JSON answer into out.
func (c *Client) get(ctx context.Context, path string, out any, opts []CallOption) error {
	data, h, err := c.send(ctx, reads, http.MethodGet, path, nil, opts)
	if err != nil {
		return err
	}
	return decodeAnswer(data, h, out)
}
