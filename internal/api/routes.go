package api

import "net/http"

// Register lists the whole /v5 surface of the API on the site's mux.
// Every /v5 call takes Authorization: Bearer <API_KEY>; all are POST
// with a JSON body (status and link look-ups also answer GET) except the
// ledger's, which are GET only. The OpenAPI description is public. The customer-facing pages register on the same
// mux from their own packages (internal/site composes them): /pay/ and
// /vt/ by internal/checkout, /acs/challenge/ by internal/acs.
func (s *Server) Register(mux *http.ServeMux) {
	mux.HandleFunc("GET /healthz", s.health)
	mux.HandleFunc("GET /readyz", s.ready)
	mux.HandleFunc("GET /v5/openapi.json", s.openAPI)

	// Tokens, purchases, surcharge and status.
	mux.Handle("POST /v5/transaction_token", s.authed(s.transactionToken))
	mux.Handle("POST /v5/purchase", s.authed(s.purchase))
	mux.Handle("POST /v5/surcharge", s.authed(s.surcharge))
	mux.Handle("POST /v5/purchase/{ref}", s.authed(s.purchaseStatus))
	mux.Handle("GET /v5/purchase/{ref}", s.authed(s.purchaseStatus))

	// Card lifecycle: holds, refunds, 3-D Secure.
	mux.Handle("POST /v5/purchase/{ref}/capture", s.authed(s.capture))
	mux.Handle("POST /v5/purchase/{ref}/cancel", s.authed(s.cancel))
	mux.Handle("POST /v5/purchase/{ref}/refund", s.authed(s.refund))
	mux.Handle("POST /v5/purchase/{ref}/3dsredirect", s.authed(s.threeDSRedirect))
	mux.Handle("POST /v5/refund/{ref}", s.authed(s.refundStatus))
	mux.Handle("GET /v5/refund/{ref}", s.authed(s.refundStatus))

	// Card tokens.
	mux.Handle("POST /v5/tokenize_card", s.authed(s.tokenizeCard))
	mux.Handle("POST /v5/card", s.authed(s.cardLookup))
	mux.Handle("POST /v5/invalidate_card_token", s.authed(s.invalidateCard))
	mux.Handle("POST /v5/invalidate_card", s.authed(s.invalidateCard))

	// Direct debit.
	mux.Handle("POST /v5/direct_debit_fee", s.authed(s.directDebitFee))
	mux.Handle("POST /v5/direct_debit", s.authed(s.directDebit))
	mux.Handle("POST /v5/direct_debit/{ref}/refund", s.authed(s.directDebitRefund))

	// Payment links.
	mux.Handle("POST /v5/payment-links", s.authed(s.createLink))
	mux.Handle("POST /v5/payment-links/{id}", s.authed(s.linkByID))
	mux.Handle("GET /v5/payment-links/{id}", s.authed(s.linkByID))
	mux.Handle("POST /v5/payment-links/{id}/cancel", s.authed(s.cancelLink))

	// Ledger: balances, balance transactions, payouts, settlement reports.
	mux.Handle("GET /v5/balance", s.authed(s.balance))
	mux.Handle("GET /v5/balance_transactions", s.authed(s.balanceTransactions))
	mux.Handle("GET /v5/payouts", s.authed(s.payouts))
	mux.Handle("GET /v5/reports/settlement", s.authed(s.settlementReport))
}
