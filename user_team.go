package paylink

import (
	"context"
	"errors"
	"slices"
	"strings"
)

// The team: its list, role changes and removals, never leaving a
// merchant without an admin.

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
			return s.dropInvites(ctx, tx, u.MerchantID, madeBy(u, inviterDemoted))
		}
		return nil
	})
}

// RemoveUser deletes a user of actor's merchant, ends its sessions and
// deletes the unused invites it made and those of its email (a second
// invite of a removed member's address would bring them back). The last
// admin cannot be removed.
func (s *Service) RemoveUser(ctx context.Context, actor *User, userID string) error {
	if err := permit(actor, PermTeam); err != nil {
		return err
	}
	ctx = staffActor(ctx, actor)
	return s.changeTeamMember(ctx, actor, userID, true, func(tx Tx, u *User) error {
		// Invites first, as AcceptInvite locks its invite before it
		// inserts the user: the same order, no deadlock.
		made, theirs := madeBy(u, inviterRemoved), invitesFor(u, inviteeRemoved)
		if err := s.dropInvites(ctx, tx, u.MerchantID, func(inv *Invite) string {
			if why := made(inv); why != "" {
				return why
			}
			return theirs(inv)
		}); err != nil {
			return err
		}
		if err := tx.DeleteUser(u.MerchantID, u.ID); err != nil {
			return err
		}
		return s.audit(ctx, tx, AuditEvent{MerchantID: u.MerchantID, Action: AuditUserRemove, ObjectType: ObjectUser,
			ObjectID: u.ID, Outcome: OutcomeSuccess, Detail: u.Email})
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
