package paylink

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"time"
)

// The Service's operations on dashboard users, sessions and invites.
// Every change writes its audit row, with the staff user as the actor,
// in the same store transaction as the change.

// NewUser is a staff user to create from the command line.
type NewUser struct {
	MerchantID string
	Email      string
	Role       Role
	Password   string
}

// SignedIn is the result of a correct password: the session and the
// secret token for the browser's cookie, which is never stored.
type SignedIn struct {
	User    *User
	Session *Session
	Token   string
}

// StaffSession is a live session with its user and merchant, loaded for
// each dashboard request.
type StaffSession struct {
	User     *User
	Merchant *Merchant
	Session  *Session
}

// errNoHasher reports a Service wired without Deps.Passwords.
var errNoHasher = errors.New("no password hasher configured")

// permit refuses u an action its role does not allow.
func permit(u *User, p Permission) error {
	if u == nil || !u.Role.Can(p) {
		return Errorf(KindForbidden, CodePermissionDenied, "your role may not do this")
	}
	return nil
}

// staffActor returns ctx with u as the acting staff user, keeping the
// source address and request id the adapter put there.
func staffActor(ctx context.Context, u *User) context.Context {
	a := ActorFrom(ctx)
	a.Kind, a.ID = ActorStaff, u.ID
	return WithActor(ctx, a)
}

// hashSecret is how session ids, invite tokens and recovery codes are
// stored: SHA-256, so a copy of the table opens nothing.
func hashSecret(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// hashPassword checks the password rules and hashes the password.
func (s *Service) hashPassword(password, email string) (string, error) {
	if err := CheckPassword(password, email); err != nil {
		return "", err
	}
	if s.passwords == nil {
		return "", Internal("hash password", errNoHasher)
	}
	h, err := s.passwords.Hash(password)
	if err != nil {
		return "", Internal("hash password", err)
	}
	return h, nil
}

// CreateUser creates a staff user of an existing merchant (the
// `paylink user create` command).
func (s *Service) CreateUser(ctx context.Context, n NewUser) (*User, error) {
	email, err := NormalizeEmail(n.Email)
	if err != nil {
		return nil, err
	}
	if !n.Role.Valid() {
		return nil, &Error{Kind: KindInvalid, Code: CodeInvalidRequest, Message: "role: must be admin, staff or viewer",
			Fields: map[string]string{"role": "must be admin, staff or viewer"}}
	}
	hash, err := s.hashPassword(n.Password, email)
	if err != nil {
		return nil, err
	}
	id, err := s.reference("usr_")
	if err != nil {
		return nil, Internal("user id", err)
	}
	now := s.now()
	u := &User{ID: id, MerchantID: n.MerchantID, Email: email, Role: n.Role, PasswordHash: hash, CreatedAt: now, UpdatedAt: now}
	err = s.store.Update(ctx, func(tx Tx) error {
		if _, err := tx.Merchant(n.MerchantID); err != nil {
			return err
		}
		if err := tx.CreateUser(u); err != nil {
			return err
		}
		return s.audit(ctx, tx, AuditEvent{MerchantID: u.MerchantID, Action: AuditUserCreate, ObjectType: ObjectUser,
			ObjectID: u.ID, Outcome: OutcomeSuccess, Detail: string(u.Role)})
	})
	switch {
	case errors.Is(err, ErrNotFound):
		return nil, Errorf(KindNotFound, CodeNotFound, "no merchant %s", n.MerchantID)
	case errors.Is(err, ErrConflict):
		return nil, emailTaken()
	case err != nil:
		return nil, Internal("create user", err)
	}
	return u, nil
}

func emailTaken() error {
	return &Error{Kind: KindConflict, Code: CodeEmailTaken, Message: "a user with this email exists",
		Fields: map[string]string{"email": "a user with this email exists"}}
}

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
	if len(key) > 254 || len(password) > MaxPasswordLength {
		return nil, errSignInFailed()
	}
	var u *User
	var throttled error
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		if throttled, err = s.signInThrottled(ctx, tx, key); err != nil || throttled != nil {
			return err
		}
		u, err = tx.UserByEmail(key)
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		return err
	})
	if err != nil {
		return nil, Internal("sign in", err)
	}
	if throttled != nil {
		return nil, throttled
	}
	encoded := ""
	if u != nil {
		encoded = u.PasswordHash
	}
	ok, err := s.passwords.Verify(encoded, password) // also for an unknown email: the same work, the same time
	if err != nil {
		return nil, Internal("verify password", err)
	}
	if u == nil || !ok {
		return nil, s.signInFailed(ctx, key, u, "password")
	}
	return s.openSession(ctx, u)
}

// signInThrottled is the refusal of a sign-in attempt for email when the
// email has SignInFailureLimit failures within SignInFailureWindow, or the
// request's source address SignInIPFailureLimit; nil when it may go on.
// Failures count for unknown emails too, so neither answer tells whether
// an email has an account.
func (s *Service) signInThrottled(ctx context.Context, tx Tx, email string) (throttled, err error) {
	since := s.now().Add(-SignInFailureWindow)
	n, err := tx.CountSignInFailures(email, since)
	if err != nil {
		return nil, err
	}
	if n >= SignInFailureLimit {
		return Errorf(KindRateLimited, CodeSignInThrottled, "too many failed sign-ins for this email; try again in %d minutes",
			int(SignInFailureWindow/time.Minute)), nil
	}
	ip := ActorFrom(ctx).IP
	if ip == "" {
		return nil, nil
	}
	if n, err = tx.CountSignInFailuresFromIP(ip, since); err != nil {
		return nil, err
	}
	if n >= SignInIPFailureLimit {
		return Errorf(KindRateLimited, CodeSignInThrottled, "too many failed sign-ins from this network address; try again in %d minutes",
			int(SignInFailureWindow/time.Minute)), nil
	}
	return nil, nil
}

// signInFailed records a failed attempt for the email, and its audit row,
// in one transaction, and returns the sign-in error.
func (s *Service) signInFailed(ctx context.Context, key string, u *User, factor string) error {
	e := AuditEvent{Action: AuditSignInFailed, ObjectType: ObjectUser, Outcome: OutcomeDenied, Detail: factor}
	if u != nil {
		ctx = staffActor(ctx, u)
		e.MerchantID, e.ObjectID = u.MerchantID, u.ID
	} else {
		a := ActorFrom(ctx)
		a.Kind, a.ID = ActorStaff, ""
		ctx, e.Detail = WithActor(ctx, a), "unknown_email"
	}
	now := s.now()
	err := s.store.Update(ctx, func(tx Tx) error {
		if err := tx.AddSignInFailure(key, ActorFrom(ctx).IP, now, now.Add(-SignInFailureWindow)); err != nil {
			return err
		}
		return s.audit(ctx, tx, e)
	})
	if err != nil {
		return Internal("record sign-in failure", err)
	}
	if factor == "password" {
		return errSignInFailed()
	}
	return Errorf(KindUnauthorized, CodeTOTPInvalid, "the code is not right")
}

// openSession creates a session for u after a correct password.
func (s *Service) openSession(ctx context.Context, u *User) (*SignedIn, error) {
	token, err := s.token(43) // 256 bits
	if err != nil {
		return nil, Internal("session id", err)
	}
	csrf, err := s.token(43)
	if err != nil {
		return nil, Internal("csrf token", err)
	}
	now := s.now()
	sess := &Session{IDHash: hashSecret(token), UserID: u.ID, MerchantID: u.MerchantID, CSRF: csrf,
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
	if token == "" || len(token) > 128 {
		return nil, errSessionExpired()
	}
	if idle <= 0 {
		idle = SessionIdleDefault
	}
	hash, now := hashSecret(token), s.now()
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
	case errors.Is(err, ErrNotFound), expired && err == nil:
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

// ChangePassword sets a new password after checking the current one, and
// revokes every session of the user, this one included: whoever knew the
// old password is signed out everywhere.
func (s *Service) ChangePassword(ctx context.Context, ss *StaffSession, current, next string) error {
	if s.passwords == nil {
		return Internal("change password", errNoHasher)
	}
	ok, err := s.passwords.Verify(ss.User.PasswordHash, current)
	if err != nil {
		return Internal("verify password", err)
	}
	if !ok {
		return &Error{Kind: KindInvalid, Code: CodeSignInFailed, Message: "current password: not right",
			Fields: map[string]string{"current_password": "not right"}}
	}
	hash, err := s.hashPassword(next, ss.User.Email)
	if err != nil {
		return err
	}
	u := *ss.User
	u.PasswordHash, u.UpdatedAt = hash, s.now()
	ctx = staffActor(ctx, &u)
	err = s.store.Update(ctx, func(tx Tx) error {
		if err := tx.UpdateUser(&u); err != nil {
			return err
		}
		if err := tx.DeleteUserSessions(u.ID); err != nil {
			return err
		}
		return s.audit(ctx, tx, AuditEvent{MerchantID: u.MerchantID, Action: AuditPasswordChange, ObjectType: ObjectUser,
			ObjectID: u.ID, Outcome: OutcomeSuccess})
	})
	if err != nil {
		return Internal("change password", err)
	}
	return nil
}

// Team lists the users of actor's merchant.
func (s *Service) Team(ctx context.Context, actor *User) ([]*User, error) {
	if err := permit(actor, PermTeam); err != nil {
		return nil, err
	}
	var out []*User
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		out, err = tx.Users(actor.MerchantID)
		return err
	})
	if err != nil {
		return nil, Internal("list team", err)
	}
	return out, nil
}

// CreateInvite invites email to actor's merchant with a role and returns
// the one-time token of the invite link; only its hash is kept.
func (s *Service) CreateInvite(ctx context.Context, actor *User, email string, role Role) (string, *Invite, error) {
	if err := permit(actor, PermTeam); err != nil {
		return "", nil, err
	}
	email, err := NormalizeEmail(email)
	if err != nil {
		return "", nil, err
	}
	if !role.Valid() {
		return "", nil, &Error{Kind: KindInvalid, Code: CodeInvalidRequest, Message: "role: must be admin, staff or viewer",
			Fields: map[string]string{"role": "must be admin, staff or viewer"}}
	}
	token, err := s.token(43)
	if err != nil {
		return "", nil, Internal("invite token", err)
	}
	now := s.now()
	inv := &Invite{TokenHash: hashSecret(token), MerchantID: actor.MerchantID, Email: email, Role: role, CreatedBy: actor.ID,
		CreatedAt: now, ExpiresAt: now.Add(InviteTTL)}
	ctx = staffActor(ctx, actor)
	err = s.store.Update(ctx, func(tx Tx) error {
		if _, err := tx.UserByEmail(email); err == nil {
			return ErrConflict
		} else if !errors.Is(err, ErrNotFound) {
			return err
		}
		if err := tx.CreateInvite(inv); err != nil {
			return err
		}
		return s.audit(ctx, tx, AuditEvent{MerchantID: actor.MerchantID, Action: AuditInviteCreate, ObjectType: ObjectUser,
			ObjectID: email, Outcome: OutcomeSuccess, Detail: string(role)})
	})
	switch {
	case errors.Is(err, ErrConflict):
		return "", nil, emailTaken()
	case err != nil:
		return "", nil, Internal("create invite", err)
	}
	return token, inv, nil
}

func errInviteInvalid() error {
	return Errorf(KindNotFound, CodeInviteInvalid, "this invite link is not valid: it was used, expired or never existed")
}

// InviteByToken loads an unused, unexpired invite (the accept page).
func (s *Service) InviteByToken(ctx context.Context, token string) (*Invite, error) {
	var inv *Invite
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		inv, err = tx.Invite(hashSecret(token))
		return err
	})
	switch {
	case errors.Is(err, ErrNotFound):
		return nil, errInviteInvalid()
	case err != nil:
		return nil, Internal("load invite", err)
	case !inv.UsedAt.IsZero() || !s.now().Before(inv.ExpiresAt):
		return nil, errInviteInvalid()
	}
	return inv, nil
}

// AcceptInvite uses an invite once: it creates the user with the
// password chosen on the invite page.
func (s *Service) AcceptInvite(ctx context.Context, token, password string) (*User, error) {
	inv, err := s.InviteByToken(ctx, token)
	if err != nil {
		return nil, err
	}
	hash, err := s.hashPassword(password, inv.Email)
	if err != nil {
		return nil, err
	}
	id, err := s.reference("usr_")
	if err != nil {
		return nil, Internal("user id", err)
	}
	now := s.now()
	u := &User{ID: id, MerchantID: inv.MerchantID, Email: inv.Email, Role: inv.Role, PasswordHash: hash, CreatedAt: now, UpdatedAt: now}
	ctx = staffActor(ctx, u)
	var taken bool
	err = s.store.Update(ctx, func(tx Tx) error {
		if err := tx.UseInvite(inv.TokenHash, now); err != nil {
			return err
		}
		if err := tx.CreateUser(u); errors.Is(err, ErrConflict) {
			taken = true
			return err
		} else if err != nil {
			return err
		}
		return s.audit(ctx, tx, AuditEvent{MerchantID: u.MerchantID, Action: AuditInviteAccept, ObjectType: ObjectUser,
			ObjectID: u.ID, Outcome: OutcomeSuccess, Detail: string(u.Role)})
	})
	switch {
	case taken:
		return nil, emailTaken()
	case errors.Is(err, ErrConflict):
		return nil, errInviteInvalid()
	case err != nil:
		return nil, Internal("accept invite", err)
	}
	return u, nil
}

// ChangeRole gives a user of actor's merchant another role. A merchant
// always keeps one admin: the last one cannot be demoted.
func (s *Service) ChangeRole(ctx context.Context, actor *User, userID string, role Role) error {
	if err := permit(actor, PermTeam); err != nil {
		return err
	}
	if !role.Valid() {
		return &Error{Kind: KindInvalid, Code: CodeInvalidRequest, Message: "role: must be admin, staff or viewer",
			Fields: map[string]string{"role": "must be admin, staff or viewer"}}
	}
	ctx = staffActor(ctx, actor)
	return s.changeTeamMember(ctx, actor, userID, role != RoleAdmin, func(tx Tx, u *User) error {
		old := u.Role
		u.Role, u.UpdatedAt = role, s.now()
		if err := tx.UpdateUser(u); err != nil {
			return err
		}
		return s.audit(ctx, tx, AuditEvent{MerchantID: u.MerchantID, Action: AuditRoleChange, ObjectType: ObjectUser,
			ObjectID: u.ID, Outcome: OutcomeSuccess, Detail: string(old) + "->" + string(role)})
	})
}

// RemoveUser deletes a user of actor's merchant and ends its sessions.
// The last admin cannot be removed.
func (s *Service) RemoveUser(ctx context.Context, actor *User, userID string) error {
	if err := permit(actor, PermTeam); err != nil {
		return err
	}
	ctx = staffActor(ctx, actor)
	return s.changeTeamMember(ctx, actor, userID, true, func(tx Tx, u *User) error {
		if err := tx.DeleteUser(u.MerchantID, u.ID); err != nil {
			return err
		}
		return s.audit(ctx, tx, AuditEvent{MerchantID: u.MerchantID, Action: AuditUserRemove, ObjectType: ObjectUser,
			ObjectID: u.ID, Outcome: OutcomeSuccess, Detail: u.Email})
	})
}

// changeTeamMember loads a user of actor's merchant and applies change in
// one transaction; when losesAdmin and the user is the merchant's only
// admin, it refuses.
func (s *Service) changeTeamMember(ctx context.Context, actor *User, userID string, losesAdmin bool, change func(Tx, *User) error) error {
	var lastAdmin bool
	err := s.store.Update(ctx, func(tx Tx) error {
		u, err := tx.User(actor.MerchantID, userID)
		if err != nil {
			return err
		}
		if losesAdmin && u.Role == RoleAdmin {
			all, err := tx.Users(actor.MerchantID)
			if err != nil {
				return err
			}
			if countRole(all, RoleAdmin) < 2 {
				lastAdmin = true
				return ErrConflict
			}
		}
		return change(tx, u)
	})
	switch {
	case lastAdmin:
		return Errorf(KindConflict, CodeLastAdmin, "a merchant needs at least one admin")
	case errors.Is(err, ErrNotFound):
		return Errorf(KindNotFound, CodeNotFound, "no such user")
	case err != nil:
		return Internal("change team member", err)
	}
	return nil
}

func countRole(users []*User, r Role) int {
	n := 0
	for _, u := range users {
		if u.Role == r {
			n++
		}
	}
	return n
}

// hexString is lower-case hex.
func hexString(b []byte) string { return hex.EncodeToString(b) }
