package paylink

import (
	"context"
	"encoding/hex"
	"errors"
)

// The Service's operations on dashboard users: creating them, passwords
// and the compare-and-set every change goes through (sessions are in
// user_session.go, invites in user_invite.go, the team in user_team.go).
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
		return Errorf(KindForbidden, CodePermissionDenied, "%s", roleRefusal(u))
	}
	return nil
}

// roleRefusal says why u may not do something, and who may.
func roleRefusal(u *User) string {
	if u == nil {
		return "only a signed-in member of the team may do this"
	}
	return "your role (" + string(u.Role) + ") may not do this; an admin of your team can, or can change your role"
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
		return "", asServiceError("hash password", err) // a busy hasher's 503 as it is
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
	u, err := s.newUser(n.MerchantID, email, n.Role, n.Password)
	if err != nil {
		return nil, err
	}
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
		return false, asServiceError("check password", err) // a busy hasher's 503 as it is
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

// hexString is lower-case hex.
func hexString(b []byte) string { return hex.EncodeToString(b) }

// newUser is a staff user of merchantID to insert, with a new id and
// password's hash (CreateUser, AcceptInvite).
func (s *Service) newUser(merchantID, email string, role Role, password string) (*User, error) {
	hash, err := s.hashPassword(password, email)
	if err != nil {
		return nil, err
	}
	id, err := s.reference("usr_")
	if err != nil {
		return nil, Internal("user id", err)
	}
	now := s.now()
	return &User{ID: id, MerchantID: merchantID, Email: email, Role: role, PasswordHash: hash, CreatedAt: now, UpdatedAt: now}, nil
}
