package paylink

import (
	"context"
	"errors"
	"strings"
	"time"
)

// Staff sign-in and sessions: SignIn, StaffSession, SignOut and the
// session clean-up job. Failed attempts and the throttle are in
// user_attempt.go.

// errSignInFailed is the one answer for an unknown email and a wrong
// password, so sign-in never tells whether an address has an account.
func errSignInFailed() error {
	return Errorf(KindUnauthorized, CodeSignInFailed, "the email or password is not right")
}

// SignIn checks an email and password. Past SignInFailureLimit failures
// for the email within SignInFailureWindow it refuses every attempt,
// right or wrong, until the window passes. A correct password opens a
// session, pending the second factor when the user has one.
func (s *Service) SignIn(ctx context.Context, email, password string) (*SignedIn, error) {
	if s.passwords == nil {
		return nil, Internal("sign in", errNoHasher)
	}
	key := strings.ToLower(strings.TrimSpace(email))
	if len(key) > MaxEmailLength || len(password) > MaxPasswordLength {
		return nil, errSignInFailed()
	}
	var u *User
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		u, err = tx.UserByEmail(key)
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		return err
	})
	if err != nil {
		return nil, Internal("sign in", err)
	}
	encoded := ""
	if u != nil {
		encoded = u.PasswordHash
	}
	ok, err := s.attempt(ctx, key, u, factorPassword, func() (bool, error) {
		ok, err := s.passwords.Verify(encoded, password) // also for an unknown email: the same work, the same time
		return ok && u != nil, err
	})
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errSignInFailed()
	}
	return s.openSession(ctx, u)
}

// sessionTokenLength is the length of a dashboard session id and of its
// CSRF token: 43 characters of [A-Za-z0-9], 256 bits.
const sessionTokenLength = 43

// openSession creates a session for u after a correct password.
func (s *Service) openSession(ctx context.Context, u *User) (*SignedIn, error) {
	token, err := s.randomToken(sessionTokenLength)
	if err != nil {
		return nil, Internal("session id", err)
	}
	csrf, err := s.randomToken(sessionTokenLength)
	if err != nil {
		return nil, Internal("csrf token", err)
	}
	now := s.now()
	sess := &Session{IDHash: HashSecret(token), UserID: u.ID, MerchantID: u.MerchantID, CSRF: csrf,
		PendingTOTP: u.TOTPEnabled, CreatedAt: now, LastSeenAt: now, ExpiresAt: now.Add(SessionMaxAge)}
	ctx = staffActor(ctx, u)
	err = s.store.Update(ctx, func(tx Tx) error {
		if err := tx.CreateSession(sess); err != nil {
			return err
		}
		if sess.PendingTOTP { // audited once the second factor is in
			return nil
		}
		return s.audit(ctx, tx, AuditEvent{MerchantID: u.MerchantID, Action: AuditSignIn, ObjectType: ObjectUser,
			ObjectID: u.ID, Outcome: OutcomeSuccess, Detail: "password"})
	})
	if err != nil {
		return nil, Internal("open session", err)
	}
	return &SignedIn{User: u, Session: sess, Token: token}, nil
}

// errSessionExpired is the answer for a missing, expired or revoked
// session.
func errSessionExpired() error {
	return Errorf(KindUnauthorized, CodeSessionExpired, "please sign in")
}

// StaffSession loads the session of a browser's token, ending it when it
// was idle for longer than idle or is past its absolute end, and records
// this use. Any instance on the same database can serve it.
func (s *Service) StaffSession(ctx context.Context, token string, idle time.Duration) (*StaffSession, error) {
	if len(token) != sessionTokenLength {
		return nil, errSessionExpired()
	}
	if idle <= 0 {
		idle = SessionIdleDefault
	}
	hash, now := HashSecret(token), s.now()
	var out StaffSession
	expired := false
	err := s.store.Update(ctx, func(tx Tx) error {
		sess, err := tx.Session(hash)
		if err != nil {
			return err
		}
		if now.Sub(sess.LastSeenAt) > idle || !now.Before(sess.ExpiresAt) {
			expired = true
			return tx.DeleteSession(hash)
		}
		if out.User, err = tx.User(sess.MerchantID, sess.UserID); err != nil {
			return err
		}
		if out.Merchant, err = tx.Merchant(sess.MerchantID); err != nil {
			return err
		}
		sess.LastSeenAt, out.Session = now, sess
		return tx.TouchSession(hash, now, sess.PendingTOTP)
	})
	switch {
	// ErrConflict: the session was deleted between its read and its touch
	// (its user removed, or signed out, by another request at that moment).
	case errors.Is(err, ErrNotFound), errors.Is(err, ErrConflict), expired && err == nil:
		return nil, errSessionExpired()
	case err != nil:
		return nil, Internal("load session", err)
	}
	return &out, nil
}

// CleanupSessions deletes sessions past their absolute end and sign-in
// failures older than the throttle window (a background job). A session
// that ended by idleness is refused when presented and deleted then, or
// here once its absolute end passes.
func (s *Service) CleanupSessions(ctx context.Context) (int64, error) {
	now := s.now()
	var n int64
	err := s.store.Update(ctx, func(tx Tx) error {
		var err error
		n, err = tx.DeleteExpiredSessions(now, now.Add(-SignInFailureWindow))
		return err
	})
	if err != nil {
		return 0, Internal("clean up sessions", err)
	}
	return n, nil
}

// SignOut ends a session.
func (s *Service) SignOut(ctx context.Context, ss *StaffSession) error {
	ctx = staffActor(ctx, ss.User)
	err := s.store.Update(ctx, func(tx Tx) error {
		if err := tx.DeleteSession(ss.Session.IDHash); err != nil {
			return err
		}
		return s.audit(ctx, tx, AuditEvent{MerchantID: ss.User.MerchantID, Action: AuditSignOut, ObjectType: ObjectUser,
			ObjectID: ss.User.ID, Outcome: OutcomeSuccess})
	})
	if err != nil {
		return Internal("sign out", err)
	}
	return nil
}
