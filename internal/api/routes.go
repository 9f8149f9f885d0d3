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

	// Payment links (issue 5).
	s.mux.Handle("POST /v5/payment-links", s.authed(s.createLink))
	s.mux.Handle("POST /v5/payment-links/{id}", s.authed(s.linkByID))
	s.mux.Handle("GET /v5/payment-links/{id}", s.authed(s.linkByID))
	s.mux.Handle("POST /v5/payment-links/{id}/cancel", s.authed(s.cancelLink))

	s.mux.HandleFunc("/", s.notFound)
}
