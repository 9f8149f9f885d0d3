package paylink

import (
	"context"
	"errors"
	"slices"
	"strings"
)

// Two-factor sign-in: enrolment, the second step of sign-in, recovery
// codes and the merchant-wide requirement.

// recoveryCodeCount is how many one-time recovery codes a user gets.
const recoveryCodeCount = 10

// BeginTOTP gives the user a new, not yet enabled TOTP secret, sealed by
// the vault, and returns it for the set-up page.
func (s *Service) BeginTOTP(ctx context.Context, ss *StaffSession) ([]byte, error) {
	if ss.User.TOTPEnabled {
		return nil, Errorf(KindConflict, CodeInvalidState, "two-factor sign-in is on already")
	}
	secret := make([]byte, 20)
	if _, err := s.random.Read(secret); err != nil {
		return nil, Internal("totp secret", err)
	}
	sealed, err := s.vault.Seal(secret)
	if err != nil {
		return nil, Internal("seal totp secret", err)
	}
	u := *ss.User
	u.TOTP, u.UpdatedAt = sealed, s.now()
	if err := s.store.Update(ctx, func(tx Tx) error { return tx.UpdateUser(&u) }); err != nil {
		return nil, Internal("begin totp", err)
	}
	*ss.User = u
	return secret, nil
}

// PendingTOTPSecret opens the secret BeginTOTP stored, for showing it
// again while set-up is unconfirmed.
func (s *Service) PendingTOTPSecret(ss *StaffSession) ([]byte, error) {
	if ss.User.TOTPEnabled || len(ss.User.TOTP.Ciphertext) == 0 {
		return nil, nil
	}
	secret, err := s.vault.Open(ss.User.TOTP)
	if err != nil {
		return nil, Internal("open totp secret", err)
	}
	return secret, nil
}

// ConfirmTOTP enables two-factor sign-in once the user typed a valid
// code of the new secret, and returns the recovery codes, shown once.
func (s *Service) ConfirmTOTP(ctx context.Context, ss *StaffSession, code string) ([]string, error) {
	secret, err := s.PendingTOTPSecret(ss)
	if err != nil {
		return nil, err
	}
	if secret == nil {
		return nil, Errorf(KindConflict, CodeInvalidState, "start two-factor set-up first")
	}
	if !totpValid(secret, strings.TrimSpace(code), s.now()) {
		return nil, &Error{Kind: KindInvalid, Code: CodeTOTPInvalid, Message: "code: not right; check the time on your phone",
			Fields: map[string]string{"code": "not right"}}
	}
	codes := make([]string, recoveryCodeCount)
	hashes := make([]string, recoveryCodeCount)
	for i := range codes {
		c, err := s.token(10)
		if err != nil {
			return nil, Internal("recovery code", err)
		}
		codes[i] = strings.ToLower(c[:5] + "-" + c[5:])
		hashes[i] = hexHash(codes[i])
	}
	u := *ss.User
	u.TOTPEnabled, u.RecoveryCodes, u.UpdatedAt = true, hashes, s.now()
	err = s.updateUserAudited(ctx, &u, AuditTOTPEnable, "")
	if err != nil {
		return nil, err
	}
	*ss.User = u
	return codes, nil
}

// DisableTOTP turns two-factor sign-in off after checking the password;
// refused while the merchant requires it.
func (s *Service) DisableTOTP(ctx context.Context, ss *StaffSession, password string) error {
	if ss.Merchant.Settings.Dashboard.RequireTOTP {
		return Errorf(KindConflict, CodeTOTPRequired, "your merchant requires two-factor sign-in")
	}
	if s.passwords == nil {
		return Internal("disable totp", errNoHasher)
	}
	ok, err := s.passwords.Verify(ss.User.PasswordHash, password)
	if err != nil {
		return Internal("verify password", err)
	}
	if !ok {
		return &Error{Kind: KindInvalid, Code: CodeSignInFailed, Message: "password: not right",
			Fields: map[string]string{"password": "not right"}}
	}
	u := *ss.User
	u.TOTP, u.TOTPEnabled, u.RecoveryCodes, u.UpdatedAt = SealedSecret{}, false, nil, s.now()
	if err := s.updateUserAudited(ctx, &u, AuditTOTPDisable, ""); err != nil {
		return err
	}
	*ss.User = u
	return nil
}

// updateUserAudited writes u and its audit row in one transaction.
func (s *Service) updateUserAudited(ctx context.Context, u *User, action, detail string) error {
	ctx = staffActor(ctx, u)
	err := s.store.Update(ctx, func(tx Tx) error {
		if err := tx.UpdateUser(u); err != nil {
			return err
		}
		return s.audit(ctx, tx, AuditEvent{MerchantID: u.MerchantID, Action: action, ObjectType: ObjectUser,
			ObjectID: u.ID, Outcome: OutcomeSuccess, Detail: detail})
	})
	if err != nil {
		return Internal(action, err)
	}
	return nil
}

// VerifySecondFactor completes a sign-in pending its second factor with
// a TOTP code or an unused recovery code (which is then spent). Wrong
// codes count as sign-in failures of the email, so the same throttle
// bounds guessing.
func (s *Service) VerifySecondFactor(ctx context.Context, ss *StaffSession, code string) error {
	if !ss.Session.PendingTOTP {
		return nil
	}
	var throttled error
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		throttled, err = s.signInThrottled(ctx, tx, ss.User.Email)
		return err
	})
	if err != nil {
		return Internal("verify second factor", err)
	}
	if throttled != nil {
		return throttled
	}
	secret, err := s.vault.Open(ss.User.TOTP)
	if err != nil {
		return Internal("open totp secret", err)
	}
	code = strings.ToLower(strings.TrimSpace(code))
	u, how := *ss.User, "password+totp"
	if !totpValid(secret, code, s.now()) {
		i := slices.Index(u.RecoveryCodes, hexHash(code))
		if i < 0 {
			return s.signInFailed(ctx, u.Email, &u, "totp")
		}
		u.RecoveryCodes, how = slices.Delete(slices.Clone(u.RecoveryCodes), i, i+1), "password+recovery_code"
	}
	ctx = staffActor(ctx, &u)
	err = s.store.Update(ctx, func(tx Tx) error {
		if how == "password+recovery_code" {
			if err := tx.UpdateUser(&u); err != nil {
				return err
			}
		}
		if err := tx.TouchSession(ss.Session.IDHash, s.now(), false); err != nil {
			return err
		}
		return s.audit(ctx, tx, AuditEvent{MerchantID: u.MerchantID, Action: AuditSignIn, ObjectType: ObjectUser,
			ObjectID: u.ID, Outcome: OutcomeSuccess, Detail: how})
	})
	if errors.Is(err, ErrConflict) {
		return errSessionExpired()
	}
	if err != nil {
		return Internal("verify second factor", err)
	}
	ss.Session.PendingTOTP, *ss.User = false, u
	return nil
}

// SetTOTPRequired makes two-factor sign-in mandatory (or optional) for
// every staff user of actor's merchant.
func (s *Service) SetTOTPRequired(ctx context.Context, actor *User, require bool) error {
	if err := permit(actor, PermTeam); err != nil {
		return err
	}
	ctx = staffActor(ctx, actor)
	err := s.store.Update(ctx, func(tx Tx) error {
		m, err := tx.Merchant(actor.MerchantID)
		if err != nil {
			return err
		}
		m.Settings.Dashboard.RequireTOTP = require
		if err := tx.UpdateMerchantSettings(m.ID, m.Settings); err != nil {
			return err
		}
		detail := "optional"
		if require {
			detail = "required"
		}
		return s.audit(ctx, tx, AuditEvent{MerchantID: m.ID, Action: AuditTOTPRequirement, ObjectType: ObjectMerchant,
			ObjectID: m.ID, Outcome: OutcomeSuccess, Detail: detail})
	})
	if err != nil {
		return Internal("set totp requirement", err)
	}
	return nil
}

// hexHash is the stored form of a recovery code.
func hexHash(code string) string { return hexString(hashSecret(code)) }
