package api

// routes lists the whole /v5 surface of the API. Every /v5 call is a POST
// with a JSON body and Authorization: Bearer <API_KEY> (status and link
// look-ups also answer GET). The customer-facing pages are mounted on the
// same server by their own packages: /pay/ and /vt/ by internal/checkout,
// /acs/challenge/ by internal/acs.
func (s *Server) routes() {
	s.mux.HandleFunc("GET /healthz", s.health)
	s.mux.HandleFunc("GET /readyz", s.ready)

	// Tokens, purchases, surcharge and status.
	s.mux.Handle("POST /v5/transaction_token", s.authed(s.transactionToken))
	s.mux.Handle("POST /v5/purchase", s.authed(s.purchase))
	s.mux.Handle("POST /v5/surcharge", s.authed(s.surcharge))
	s.mux.Handle("POST /v5/purchase/{ref}", s.authed(s.purchaseStatus))
	s.mux.Handle("GET /v5/purchase/{ref}", s.authed(s.purchaseStatus))

	// Card lifecycle: holds, refunds, 3-D Secure.
	s.mux.Handle("POST /v5/purchase/{ref}/capture", s.authed(s.capture))
	s.mux.Handle("POST /v5/purchase/{ref}/cancel", s.authed(s.cancel))
	s.mux.Handle("POST /v5/purchase/{ref}/refund", s.authed(s.refund))
	s.mux.Handle("POST /v5/purchase/{ref}/3dsredirect", s.authed(s.threeDSRedirect))
	s.mux.Handle("POST /v5/refund/{ref}", s.authed(s.refundStatus))

	// Card tokens.
	s.mux.Handle("POST /v5/tokenize_card", s.authed(s.tokenizeCard))
	s.mux.Handle("POST /v5/card", s.authed(s.cardLookup))
	s.mux.Handle("POST /v5/invalidate_card_token", s.authed(s.invalidateCard))
	s.mux.Handle("POST /v5/invalidate_card", s.authed(s.invalidateCard))

	// Direct debit.
	s.mux.Handle("POST /v5/direct_debit_fee", s.authed(s.directDebitFee))
	s.mux.Handle("POST /v5/direct_debit", s.authed(s.directDebit))
	s.mux.Handle("POST /v5/direct_debit/{ref}/refund", s.authed(s.directDebitRefund))

	// Payment links.
	s.mux.Handle("POST /v5/payment-links", s.authed(s.createLink))
	s.mux.Handle("POST /v5/payment-links/{id}", s.authed(s.linkByID))
	s.mux.Handle("GET /v5/payment-links/{id}", s.authed(s.linkByID))
	s.mux.Handle("POST /v5/payment-links/{id}/cancel", s.authed(s.cancelLink))

	// Ledger: balances, balance transactions, payouts, settlement reports.
	s.mux.Handle("GET /v5/balance", s.authed(s.balance))
	s.mux.Handle("GET /v5/balance_transactions", s.authed(s.balanceTransactions))
	s.mux.Handle("GET /v5/payouts", s.authed(s.payouts))
	s.mux.Handle("GET /v5/reports/settlement", s.authed(s.settlementReport))

	s.mux.HandleFunc("/", s.notFound)
}
