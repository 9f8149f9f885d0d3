package paylink

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
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

// UserByEmail loads the staff user with that email, whichever merchant's
// (emails are unique across merchants): the command line's view, as
// CreateUser is. An unknown email is not_found.
func (s *Service) UserByEmail(ctx context.Context, email string) (*User, error) {
	key, err := NormalizeEmail(email)
	if err != nil {
		return nil, err
	}
	var u *User
	err = s.store.View(ctx, func(tx Tx) error {
		var err error
		u, err = tx.UserByEmail(key)
		return err
	})
	switch {
	case errors.Is(err, ErrNotFound):
		return nil, Errorf(KindNotFound, CodeNotFound, "no user %s", key)
	case err != nil:
		return nil, Internal("load user", err)
	}
	return u, nil
}

// PasswordMatches reports whether password is u's, without opening a
// session or counting a failure. It is for the command line, which holds
// the database anyway (paylink demo checking the password it kept);
// a caller over the network signs in with SignIn, under its throttle.
func (s *Service) PasswordMatches(u *User, password string) (bool, error) {
	if s.passwords == nil {
		return false, Internal("check password", errNoHasher)
	}
	ok, err := s.passwords.Verify(u.PasswordHash, password)
	if err != nil {
		return false, Internal("check password", err)
	}
	return ok, nil
}

// SetPassword gives u a new password from the command line (paylink demo
// when its admin's kept password no longer signs in) and, as
// ChangePassword does, revokes every session of the user.
func (s *Service) SetPassword(ctx context.Context, u *User, password string) error {
	hash, err := s.hashPassword(password, u.Email)
	if err != nil {
		return err
	}
	_, err = s.changeUser(ctx, u, func(tx Tx, fresh *User) error {
		fresh.PasswordHash, fresh.UpdatedAt = hash, s.now()
		if err := tx.DeleteUserSessions(fresh.ID); err != nil {
			return err
		}
		return s.audit(ctx, tx, userEvent(fresh, AuditPasswordChange))
	})
	return err
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

// ChangePassword sets a new password after checking the current one, and
// revokes every session of the user, this one included: whoever knew the
// old password is signed out everywhere. A wrong current password counts
// as a failed sign-in of the user's email, under the same throttle.
func (s *Service) ChangePassword(ctx context.Context, ss *StaffSession, current, next string) error {
	if s.passwords == nil {
		return Internal("change password", errNoHasher)
	}
	if err := s.checkOwnPassword(ctx, ss.User, "current_password", current); err != nil {
		return err
	}
	hash, err := s.hashPassword(next, ss.User.Email)
	if err != nil {
		return err
	}
	ctx = staffActor(ctx, ss.User)
	_, err = s.changeUser(ctx, ss.User, func(tx Tx, u *User) error {
		if u.PasswordHash != ss.User.PasswordHash { // changed since this request checked it
			return errUserChanged()
		}
		u.PasswordHash, u.UpdatedAt = hash, s.now()
		if err := tx.DeleteUserSessions(u.ID); err != nil {
			return err
		}
		return s.audit(ctx, tx, userEvent(u, AuditPasswordChange))
	})
	return err
}

// checkOwnPassword checks a signed-in user's password before a change
// to their account (field names the form field), as a guarded attempt.
func (s *Service) checkOwnPassword(ctx context.Context, u *User, field, password string) error {
	ok, err := s.attempt(ctx, u.Email, u, field, func() (bool, error) { return s.passwords.Verify(u.PasswordHash, password) })
	if err != nil {
		return err
	}
	if !ok {
		return &Error{Kind: KindInvalid, Code: CodeSignInFailed, Message: field + ": not right",
			Fields: map[string]string{field: "not right"}}
	}
	return nil
}

// errUserChanged answers a change to a user that another request changed
// in the meantime (on PostgreSQL; SQLite's writer runs them one after
// the other).
func errUserChanged() error {
	return Errorf(KindConflict, CodeOperationInProgress, "this account was changed by another request meanwhile; try again")
}

// changeUser reads user u afresh, applies change to the fresh copy and
// writes it back, in one transaction with whatever else change writes.
// The write is a compare-and-set on the user's version (Tx.UpdateUser):
// a request's session carries the user as it was when the request
// began, and writing that copy would undo what other requests changed
// since (a new password, a demotion, a spent recovery code). change's
// refusals (*Error) are returned as they are; a user changed meanwhile
// is errUserChanged.
func (s *Service) changeUser(ctx context.Context, u *User, change func(Tx, *User) error) (*User, error) {
	var fresh *User
	err := s.store.Update(ctx, func(tx Tx) error {
		var err error
		if fresh, err = tx.User(u.MerchantID, u.ID); err != nil {
			return err
		}
		if err := change(tx, fresh); err != nil {
			return err
		}
		return tx.UpdateUser(fresh)
	})
	var refused *Error
	switch {
	case errors.As(err, &refused):
		return nil, refused
	case errors.Is(err, ErrConflict):
		return nil, errUserChanged()
	case errors.Is(err, ErrNotFound):
		return nil, errSessionExpired() // the user was removed
	case err != nil:
		return nil, Internal("change user", err)
	}
	return fresh, nil
}

// userEvent is the audit row of a change to u.
func userEvent(u *User, action string) AuditEvent {
	return AuditEvent{MerchantID: u.MerchantID, Action: action, ObjectType: ObjectUser, ObjectID: u.ID,
		Outcome: OutcomeSuccess}
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
	token, err := s.randomToken(43)
	if err != nil {
		return "", nil, Internal("invite token", err)
	}
	now := s.now()
	inv := &Invite{TokenHash: HashSecret(token), MerchantID: actor.MerchantID, Email: email, Role: role, CreatedBy: actor.ID,
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

// ID names an invite in the dashboard's revoke form: the hex of its
// token's hash, which does not open the invite.
func (i *Invite) ID() string { return hex.EncodeToString(i.TokenHash) }

// Invites lists actor's merchant's outstanding invites: unused and not
// expired, newest first.
func (s *Service) Invites(ctx context.Context, actor *User) ([]*Invite, error) {
	if err := permit(actor, PermTeam); err != nil {
		return nil, err
	}
	var out []*Invite
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		out, err = tx.Invites(actor.MerchantID, s.now())
		return err
	})
	if err != nil {
		return nil, Internal("list invites", err)
	}
	return out, nil
}

// RevokeInvite deletes an unused invite of actor's merchant, named by its
// ID, so that its link no longer works, and returns it.
func (s *Service) RevokeInvite(ctx context.Context, actor *User, id string) (*Invite, error) {
	if err := permit(actor, PermTeam); err != nil {
		return nil, err
	}
	notFound := Errorf(KindNotFound, CodeNotFound, "no such invite: it was used, revoked or never made")
	hash, err := hex.DecodeString(id)
	if err != nil || len(hash) != sha256.Size {
		return nil, notFound
	}
	var inv *Invite
	ctx = staffActor(ctx, actor)
	err = s.store.Update(ctx, func(tx Tx) error {
		var err error
		if inv, err = tx.Invite(hash); err != nil {
			return err
		}
		if err := tx.DeleteInvite(actor.MerchantID, hash); err != nil {
			return err
		}
		return s.audit(ctx, tx, AuditEvent{MerchantID: actor.MerchantID, Action: AuditInviteRevoke, ObjectType: ObjectUser,
			ObjectID: inv.Email, Outcome: OutcomeSuccess, Detail: string(inv.Role)})
	})
	switch {
	case errors.Is(err, ErrNotFound):
		return nil, notFound
	case err != nil:
		return nil, Internal("revoke invite", err)
	}
	return inv, nil
}

func errInviteInvalid() error {
	return Errorf(KindNotFound, CodeInviteInvalid, "this invite link is not valid: it was used, expired or never existed")
}

// Why an unused, unexpired invite no longer works (the audit row's
// detail): the admin who made it was removed, or is no longer an admin.
const (
	inviterRemoved = "inviter_removed"
	inviterDemoted = "inviter_demoted"
)

// InviteByToken loads an unused, unexpired invite (the accept page) whose
// maker may still invite.
func (s *Service) InviteByToken(ctx context.Context, token string) (*Invite, error) {
	inv, gone, err := s.loadInvite(ctx, token)
	if err != nil {
		return nil, err
	}
	if gone != "" {
		return nil, errInviteInvalid()
	}
	return inv, nil
}

// loadInvite loads an unused, unexpired invite and says whether its maker
// is gone (inviterGone).
func (s *Service) loadInvite(ctx context.Context, token string) (*Invite, string, error) {
	var inv *Invite
	var gone string
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		if inv, err = tx.Invite(HashSecret(token)); err != nil {
			return err
		}
		gone, err = inviterGone(tx, inv)
		return err
	})
	switch {
	case errors.Is(err, ErrNotFound):
		return nil, "", errInviteInvalid()
	case err != nil:
		return nil, "", Internal("load invite", err)
	case !inv.UsedAt.IsZero() || !s.now().Before(inv.ExpiresAt):
		return nil, "", errInviteInvalid()
	}
	return inv, gone, nil
}

// inviterGone says why inv's maker no longer stands behind it, "" while
// they do: removed since (inviterRemoved) or no longer allowed to manage
// the team (inviterDemoted). An invite is the authority of the admin who
// made it, so it must not outlive that authority: a removed admin could
// otherwise come back through an invite to another address of theirs.
// An invite without a maker stands (the dashboard's are all made by an
// admin; none are made otherwise today).
func inviterGone(tx Tx, inv *Invite) (string, error) {
	if inv.CreatedBy == "" {
		return "", nil
	}
	u, err := tx.User(inv.MerchantID, inv.CreatedBy)
	switch {
	case errors.Is(err, ErrNotFound):
		return inviterRemoved, nil
	case err != nil:
		return "", fmt.Errorf("load inviter: %w", err)
	case !u.Role.Can(PermTeam):
		return inviterDemoted, nil
	}
	return "", nil
}

// refuseInvite deletes inv, whose maker is gone (why), and audits the
// refused acceptance, in the acceptance's transaction. An invite used or
// revoked meanwhile is ErrConflict, as UseInvite answers.
func (s *Service) refuseInvite(ctx context.Context, tx Tx, inv *Invite, why string) error {
	if err := tx.DeleteInvite(inv.MerchantID, inv.TokenHash); errors.Is(err, ErrNotFound) {
		return ErrConflict
	} else if err != nil {
		return err
	}
	a := ActorFrom(ctx)
	a.Kind, a.ID = ActorStaff, ""
	return s.audit(WithActor(ctx, a), tx, AuditEvent{MerchantID: inv.MerchantID, Action: AuditInviteAccept, ObjectType: ObjectUser,
		ObjectID: inv.Email, Outcome: OutcomeDenied, Detail: why})
}

// refuseInviteOf refuses inv, whose maker is gone (why), in a transaction
// of its own, and answers the error for the invited person.
func (s *Service) refuseInviteOf(ctx context.Context, inv *Invite, why string) error {
	err := s.store.Update(ctx, func(tx Tx) error { return s.refuseInvite(ctx, tx, inv, why) })
	if err != nil && !errors.Is(err, ErrConflict) {
		return Internal("refuse invite", err)
	}
	return errInviteInvalid()
}

// dropInvitesOf deletes the unused invites u made, now that u was
// removed or may no longer manage the team (why), each audited as a
// revocation by ctx's actor.
func (s *Service) dropInvitesOf(ctx context.Context, tx Tx, u *User, why string) error {
	list, err := tx.Invites(u.MerchantID, s.now())
	if err != nil {
		return err
	}
	for _, inv := range list {
		if inv.CreatedBy != u.ID {
			continue
		}
		if err := tx.DeleteInvite(inv.MerchantID, inv.TokenHash); errors.Is(err, ErrNotFound) {
			continue // used meanwhile
		} else if err != nil {
			return err
		}
		if err := s.audit(ctx, tx, AuditEvent{MerchantID: inv.MerchantID, Action: AuditInviteRevoke, ObjectType: ObjectUser,
			ObjectID: inv.Email, Outcome: OutcomeSuccess, Detail: why}); err != nil {
			return err
		}
	}
	return nil
}

// AcceptInvite uses an invite once: it creates the user with the
// password chosen on the invite page. An invite whose maker was removed
// or is no longer an admin is refused (checked again in the transaction
// that uses it), deleted and audited as a denied acceptance.
func (s *Service) AcceptInvite(ctx context.Context, token, password string) (*User, error) {
	inv, gone, err := s.loadInvite(ctx, token)
	if err != nil {
		return nil, err
	}
	if gone != "" {
		return nil, s.refuseInviteOf(ctx, inv, gone)
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
	err = s.store.Update(ctx, func(tx Tx) error {
		var err error
		gone, err = s.useInvite(ctx, tx, inv, u)
		return err
	})
	var refused *Error
	switch {
	case errors.As(err, &refused):
		return nil, refused
	case errors.Is(err, ErrConflict) || (err == nil && gone != ""):
		return nil, errInviteInvalid()
	case err != nil:
		return nil, Internal("accept invite", err)
	}
	return u, nil
}

// useInvite, in AcceptInvite's transaction, uses inv to create u, or,
// when inv's maker is gone meanwhile, refuses inv and says why.
func (s *Service) useInvite(ctx context.Context, tx Tx, inv *Invite, u *User) (gone string, err error) {
	if gone, err = inviterGone(tx, inv); err != nil {
		return "", err
	} else if gone != "" {
		return gone, s.refuseInvite(ctx, tx, inv, gone)
	}
	if err := tx.UseInvite(inv.TokenHash, u.CreatedAt); err != nil {
		return "", err
	}
	if err := tx.CreateUser(u); errors.Is(err, ErrConflict) {
		return "", emailTaken()
	} else if err != nil {
		return "", err
	}
	return "", s.audit(staffActor(ctx, u), tx, AuditEvent{MerchantID: u.MerchantID, Action: AuditInviteAccept, ObjectType: ObjectUser,
		ObjectID: u.ID, Outcome: OutcomeSuccess, Detail: string(u.Role)})
}

// ChangeRole gives a user of actor's merchant another role. A merchant
// always keeps one admin: the last one cannot be demoted. A user who may
// no longer manage the team loses the unused invites they made.
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
		if err := s.audit(ctx, tx, AuditEvent{MerchantID: u.MerchantID, Action: AuditRoleChange, ObjectType: ObjectUser,
			ObjectID: u.ID, Outcome: OutcomeSuccess, Detail: string(old) + "->" + string(role)}); err != nil {
			return err
		}
		if old.Can(PermTeam) && !role.Can(PermTeam) {
			return s.dropInvitesOf(ctx, tx, u, inviterDemoted)
		}
		return nil
	})
}

// RemoveUser deletes a user of actor's merchant, ends its sessions and
// deletes the unused invites it made. The last admin cannot be removed.
func (s *Service) RemoveUser(ctx context.Context, actor *User, userID string) error {
	if err := permit(actor, PermTeam); err != nil {
		return err
	}
	ctx = staffActor(ctx, actor)
	return s.changeTeamMember(ctx, actor, userID, true, func(tx Tx, u *User) error {
		if err := tx.DeleteUser(u.MerchantID, u.ID); err != nil {
			return err
		}
		if err := s.audit(ctx, tx, AuditEvent{MerchantID: u.MerchantID, Action: AuditUserRemove, ObjectType: ObjectUser,
			ObjectID: u.ID, Outcome: OutcomeSuccess, Detail: u.Email}); err != nil {
			return err
		}
		return s.dropInvitesOf(ctx, tx, u, inviterRemoved)
	})
}

// changeTeamMember loads a user of actor's merchant and applies change in
// one transaction; when losesAdmin and the user is the merchant's only
// admin, it refuses. Two admins demoting or removing each other at once
// must not leave the merchant with none: the change first rewrites every
// admin's row by compare-and-set, in id order (claimAdmins), so of two
// such changes on PostgreSQL the second finds a row changed and is
// refused (errUserChanged).
func (s *Service) changeTeamMember(ctx context.Context, actor *User, userID string, losesAdmin bool, change func(Tx, *User) error) error {
	err := s.store.Update(ctx, func(tx Tx) error {
		u, err := tx.User(actor.MerchantID, userID)
		if err != nil {
			return err
		}
		if losesAdmin && u.Role == RoleAdmin {
			if last, err := claimAdmins(tx, u); err != nil {
				return err
			} else if last {
				return Errorf(KindConflict, CodeLastAdmin, "a merchant needs at least one admin")
			}
		}
		return change(tx, u)
	})
	var refused *Error
	switch {
	case errors.As(err, &refused):
		return refused
	case errors.Is(err, ErrNotFound):
		return Errorf(KindNotFound, CodeNotFound, "no such user")
	case errors.Is(err, ErrConflict):
		return errUserChanged()
	case err != nil:
		return Internal("change team member", err)
	}
	return nil
}

// claimAdmins reports whether admin u is its merchant's last admin;
// otherwise it rewrites every admin's row unchanged (u's through u
// itself, which moves u's version on), in id order so that two claims
// never wait for each other's rows.
func claimAdmins(tx Tx, u *User) (last bool, err error) {
	all, err := tx.Users(u.MerchantID)
	if err != nil {
		return false, err
	}
	if countRole(all, RoleAdmin) < 2 {
		return true, nil
	}
	slices.SortFunc(all, func(a, b *User) int { return strings.Compare(a.ID, b.ID) })
	for _, a := range all {
		if a.ID == u.ID {
			a = u
		}
		if a.Role != RoleAdmin {
			continue
		}
		if err := tx.UpdateUser(a); err != nil {
			return false, err
		}
	}
	return false, nil
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
