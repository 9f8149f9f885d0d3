package paylink

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// Invites: an admin invites an email with a role, and its holder
// accepts once, becoming a staff user.

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
// detail): the admin who made it was removed, or is no longer an admin;
// the person it invites was removed from the team.
const (
	inviterRemoved = "inviter_removed"
	inviterDemoted = "inviter_demoted"
	inviteeRemoved = "invitee_removed"
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

// dropInvites deletes the merchant's unused invites for which why gives
// a reason (the audit row's detail; "" keeps the invite), each audited
// as a revocation by ctx's actor.
func (s *Service) dropInvites(ctx context.Context, tx Tx, merchantID string, why func(*Invite) string) error {
	list, err := tx.Invites(merchantID, s.now())
	if err != nil {
		return err
	}
	for _, inv := range list {
		reason := why(inv)
		if reason == "" {
			continue
		}
		if err := tx.DeleteInvite(inv.MerchantID, inv.TokenHash); errors.Is(err, ErrNotFound) {
			continue // used meanwhile
		} else if err != nil {
			return err
		}
		if err := s.audit(ctx, tx, AuditEvent{MerchantID: inv.MerchantID, Action: AuditInviteRevoke, ObjectType: ObjectUser,
			ObjectID: inv.Email, Outcome: OutcomeSuccess, Detail: reason}); err != nil {
			return err
		}
	}
	return nil
}

// madeBy gives reason for the invites u made: an invite carries the
// authority of the admin who made it, and ends with it.
func madeBy(u *User, reason string) func(*Invite) string {
	return func(inv *Invite) string {
		if inv.CreatedBy == u.ID {
			return reason
		}
		return ""
	}
}

// invitesFor gives reason for the invites of u's email: once u is
// removed from the team, no other invite of theirs may make them a
// member again. (While u is a member, acceptance refuses the email as
// taken; deleting the others at acceptance would lock them after the new
// user's row, the opposite order of a second acceptance, a deadlock on
// PostgreSQL.)
func invitesFor(u *User, reason string) func(*Invite) string {
	return func(inv *Invite) string {
		if strings.EqualFold(inv.Email, u.Email) {
			return reason
		}
		return ""
	}
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
	u, err := s.newUser(inv.MerchantID, inv.Email, inv.Role, password)
	if err != nil {
		return nil, err
	}
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
