package api

// routes lists the whole HTTP surface of the API. Every /v5 call is a
// POST with a JSON body and Authorization: Bearer <API_KEY>.
func (s *Server) routes() {
	s.mux.HandleFunc("GET /healthz", s.health)
	s.mux.HandleFunc("GET /readyz", s.ready)

	s.mux.Handle("POST /v5/transaction_token", s.authed(s.transactionToken))
	s.mux.Handle("POST /v5/purchase", s.authed(s.purchase))
	s.mux.Handle("POST /v5/surcharge", s.authed(s.surcharge))
	s.mux.Handle("POST /v5/purchase/{ref}", s.authed(s.purchaseStatus))
	s.mux.Handle("GET /v5/purchase/{ref}", s.authed(s.purchaseStatus))

	// Direct debit: fee preview, debit, refund.
	s.mux.Handle("POST /v5/direct_debit_fee", s.authed(s.directDebitFee))
	s.mux.Handle("POST /v5/direct_debit", s.authed(s.directDebit))
	s.mux.Handle("POST /v5/direct_debit/{ref}/refund", s.authed(s.directDebitRefund))
	// Card lifecycle: holds, refunds, 3-D Secure, card tokens.
	s.mux.Handle("POST /v5/purchase/{ref}/capture", s.authed(s.capture))
	s.mux.Handle("POST /v5/purchase/{ref}/cancel", s.authed(s.cancel))
	s.mux.Handle("POST /v5/purchase/{ref}/refund", s.authed(s.refund))
	s.mux.Handle("POST /v5/purchase/{ref}/3dsredirect", s.authed(s.threeDSRedirect))
	s.mux.Handle("POST /v5/refund/{ref}", s.authed(s.refundStatus))
	s.mux.Handle("POST /v5/tokenize_card", s.authed(s.tokenizeCard))
	s.mux.Handle("POST /v5/card", s.authed(s.cardLookup))
	s.mux.Handle("POST /v5/invalidate_card_token", s.authed(s.invalidateCard))
	s.mux.Handle("POST /v5/invalidate_card", s.authed(s.invalidateCard))
	// Payment links (issue 5).
	s.mux.Handle("POST /v5/payment-links", s.authed(s.createLink))
	s.mux.Handle("POST /v5/payment-links/{id}", s.authed(s.linkByID))
	s.mux.Handle("GET /v5/payment-links/{id}", s.authed(s.linkByID))
	s.mux.Handle("POST /v5/payment-links/{id}/cancel", s.authed(s.cancelLink))

	s.mux.HandleFunc("/", s.notFound)
}
