package paylink

import "context"

// Dashboard actions (capture, cancel, refund) run through the same Service
// methods as the API, but a signed-in staff user has neither the
// merchant's company token (only its hash is stored) nor a transaction
// token. Their session, checked role, CSRF token and idempotency key take
// those tokens' places: StaffContext marks a context as carrying that
// authority, for one merchant and one permission, and the token checks of
// the actions accept it instead. The mark's key is unexported, so only
// StaffContext can set it.

// staffAuthKey keys a staffAuth in a context.
type staffAuthKey struct{}

// staffAuth is the authority StaffContext grants.
type staffAuth struct {
	merchantID string
	perm       Permission
}

// StaffContext returns ctx carrying ss's authority to act on its own
// merchant with permission p, or a 403 when ss's role lacks p.
func (s *Service) StaffContext(ctx context.Context, ss *StaffSession, p Permission) (context.Context, error) {
	if ss == nil {
		return nil, permit(nil, p)
	}
	if err := permit(ss.User, p); err != nil {
		return nil, err
	}
	return context.WithValue(ctx, staffAuthKey{}, staffAuth{merchantID: ss.User.MerchantID, perm: p}), nil
}

// staffMay reports whether ctx carries staff authority over m for p.
func staffMay(ctx context.Context, m *Merchant, p Permission) bool {
	return hasStaffAuthority(ctx, m.ID, p)
}

// hasStaffAuthority reports whether ctx carries staff authority over
// merchant mid for p (StaffContext).
func hasStaffAuthority(ctx context.Context, mid string, p Permission) bool {
	a, ok := ctx.Value(staffAuthKey{}).(staffAuth)
	return ok && a.merchantID == mid && a.perm == p
}

// checkStaff refuses a dashboard user acting on merchant mid without
// staff authority for p: the dashboard's route gives it (StaffContext)
// to a role that has p. The API, by its key, and the CLI, the operator,
// act by their own authority.
func checkStaff(ctx context.Context, mid string, p Permission) error {
	if ActorFrom(ctx).Kind != ActorStaff || hasStaffAuthority(ctx, mid, p) {
		return nil
	}
	return permit(nil, p)
}

// checkCaller checks the company token of an API call, or accepts the
// staff authority of a dashboard action for p.
func (s *Service) checkCaller(ctx context.Context, m *Merchant, companyToken string, p Permission) error {
	if staffMay(ctx, m, p) {
		return nil
	}
	return s.CheckCompanyToken(ctx, m, companyToken)
}

// spendToken uses up the transaction token of an API call inside tx, as
// spent by operation ref; a dashboard action with staff authority for p
// has none to spend.
func (s *Service) spendToken(ctx context.Context, tx Tx, m *Merchant, token string, p Permission, ref string) error {
	if staffMay(ctx, m, p) {
		return nil
	}
	return s.consumeToken(tx, m, token, ref)
}

// tokenOf is the transaction token an operation with permission p spends:
// none for a dashboard action with staff authority (see spendToken).
func tokenOf(ctx context.Context, m *Merchant, token string, p Permission) string {
	if staffMay(ctx, m, p) {
		return ""
	}
	return token
}
