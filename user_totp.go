package paylink

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
)

// Two-factor sign-in: enrolment, the second step of sign-in, recovery
// codes and the merchant-wide requirement.

// recoveryCodeCount is how many one-time recovery codes a user gets.
const recoveryCodeCount = 10

// errTOTPOn refuses a set-up while two-factor sign-in is on.
func errTOTPOn() error {
	return Errorf(KindConflict, CodeInvalidState, "two-factor sign-in is on already")
}

// totpBinding is what u's sealed TOTP secret is bound to (SecretBinding).
func totpBinding(u *User) string { return SecretBinding(SecretTOTP, u.MerchantID, u.ID) }

// BeginTOTP gives the user a new, not yet enabled TOTP secret, sealed by
// the vault, and returns it for the set-up page. Nothing is protected by
// it until ConfirmTOTP, which asks for the password.
func (s *Service) BeginTOTP(ctx context.Context, ss *StaffSession) ([]byte, error) {
	if ss.User.TOTPEnabled {
		return nil, errTOTPOn()
	}
	secret := make([]byte, 20)
	if _, err := s.random.Read(secret); err != nil {
		return nil, Internal("totp secret", err)
	}
	sealed, err := s.vault.Seal(secret, totpBinding(ss.User))
	if err != nil {
		return nil, Internal("seal totp secret", err)
	}
	u, err := s.changeUser(ctx, ss.User, func(_ Tx, u *User) error {
		if u.TOTPEnabled {
			return errTOTPOn()
		}
		u.TOTP, u.UpdatedAt = sealed, s.now()
		return nil
	})
	if err != nil {
		return nil, err
	}
	*ss.User = *u
	return secret, nil
}

// PendingTOTPSecret opens the secret BeginTOTP stored, for showing it
// again while set-up is unconfirmed.
func (s *Service) PendingTOTPSecret(ss *StaffSession) ([]byte, error) {
	if ss.User.TOTPEnabled || len(ss.User.TOTP.Ciphertext) == 0 {
		return nil, nil
	}
	secret, err := s.vault.Open(ss.User.TOTP, totpBinding(ss.User))
	if err != nil {
		return nil, Internal("open totp secret", err)
	}
	return secret, nil
}

// ConfirmTOTP enables two-factor sign-in once the user typed a valid
// code of the new secret and their password (a guarded attempt, like
// sign-in: a session alone, stolen or left open, cannot tie the account
// to another person's authenticator, even one whose set-up the user
// began), and returns the recovery codes, shown once. Every other
// session of the user ends, pending ones included, as at a password
// change: a session opened with the password alone, by whoever else
// knew it, must not outlive the second factor meant to stop them. The
// session that confirmed stays.
func (s *Service) ConfirmTOTP(ctx context.Context, ss *StaffSession, code, password string) ([]string, error) {
	secret, err := s.PendingTOTPSecret(ss)
	if err != nil {
		return nil, err
	}
	if secret == nil {
		return nil, Errorf(KindConflict, CodeInvalidState, "start two-factor set-up first")
	}
	if s.passwords == nil {
		return nil, Internal("confirm totp", errNoHasher)
	}
	if err := s.checkOwnPassword(ctx, ss.User, "password", password); err != nil {
		return nil, err
	}
	step, ok := totpMatch(secret, canonicalCode(code), s.now(), 0)
	if !ok {
		return nil, &Error{Kind: KindInvalid, Code: CodeTOTPInvalid, Message: "code: not right; check the time on your phone",
			Fields: map[string]string{"code": "not right"}}
	}
	codes, hashes, err := s.recoveryCodes()
	if err != nil {
		return nil, err
	}
	pending := ss.User.TOTP
	ctx = staffActor(ctx, ss.User)
	u, err := s.changeUser(ctx, ss.User, func(tx Tx, u *User) error {
		if u.TOTPEnabled || u.TOTP.KeyID != pending.KeyID || !bytes.Equal(u.TOTP.Ciphertext, pending.Ciphertext) {
			return Errorf(KindConflict, CodeInvalidState, "two-factor set-up was changed meanwhile; start it again")
		}
		u.TOTPEnabled, u.RecoveryCodes, u.TOTPLastStep, u.UpdatedAt = true, hashes, step, s.now()
		if err := tx.DeleteOtherUserSessions(u.ID, ss.Session.IDHash); err != nil {
			return err
		}
		return s.audit(ctx, tx, userEvent(u, AuditTOTPEnable))
	})
	if err != nil {
		return nil, err
	}
	*ss.User = *u
	return codes, nil
}

// canonicalCode is a second-factor code as typed, in the form it is
// checked in: without spaces or dashes and in lower case (an app shows
// "123 456"; a recovery code may be typed without its dash), and with
// the dash back in a recovery code's place (ten characters, as made by
// recoveryCodes).
func canonicalCode(typed string) string {
	code := strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || r == '-' {
			return -1
		}
		return unicode.ToLower(r)
	}, typed)
	if len(code) == 10 {
		code = code[:5] + "-" + code[5:]
	}
	return code
}

// recoveryCodes makes a user's one-time recovery codes, as shown once
// and as stored (hashes).
func (s *Service) recoveryCodes() (codes, hashes []string, err error) {
	codes = make([]string, recoveryCodeCount)
	hashes = make([]string, recoveryCodeCount)
	for i := range codes {
		c, err := s.randomToken(10)
		if err != nil {
			return nil, nil, Internal("recovery code", err)
		}
		codes[i] = strings.ToLower(c[:5] + "-" + c[5:])
		hashes[i] = hexHash(codes[i])
	}
	return codes, hashes, nil
}

// RegenerateRecoveryCodes replaces the user's recovery codes, used or
// not, with new ones after checking the password (a guarded attempt, like
// sign-in), and returns them, shown once.
func (s *Service) RegenerateRecoveryCodes(ctx context.Context, ss *StaffSession, password string) ([]string, error) {
	if !ss.User.TOTPEnabled {
		return nil, Errorf(KindConflict, CodeInvalidState, "turn two-factor sign-in on first")
	}
	if s.passwords == nil {
		return nil, Internal("recovery codes", errNoHasher)
	}
	if err := s.checkOwnPassword(ctx, ss.User, "password", password); err != nil {
		return nil, err
	}
	codes, hashes, err := s.recoveryCodes()
	if err != nil {
		return nil, err
	}
	ctx = staffActor(ctx, ss.User)
	u, err := s.changeUser(ctx, ss.User, func(tx Tx, u *User) error {
		if !u.TOTPEnabled {
			return Errorf(KindConflict, CodeInvalidState, "two-factor sign-in was turned off meanwhile")
		}
		u.RecoveryCodes, u.UpdatedAt = hashes, s.now()
		return s.audit(ctx, tx, userEvent(u, AuditRecoveryCodes))
	})
	if err != nil {
		return nil, err
	}
	*ss.User = *u
	return codes, nil
}

// DisableTOTP turns two-factor sign-in off after checking the password
// (a guarded attempt, like sign-in); refused while the merchant requires
// it.
func (s *Service) DisableTOTP(ctx context.Context, ss *StaffSession, password string) error {
	if ss.Merchant.Settings.Dashboard.RequireTOTP {
		return Errorf(KindConflict, CodeTOTPRequired, "your merchant requires two-factor sign-in")
	}
	if s.passwords == nil {
		return Internal("disable totp", errNoHasher)
	}
	if err := s.checkOwnPassword(ctx, ss.User, "password", password); err != nil {
		return err
	}
	ctx = staffActor(ctx, ss.User)
	u, err := s.changeUser(ctx, ss.User, func(tx Tx, u *User) error {
		u.TOTP, u.TOTPEnabled, u.RecoveryCodes, u.UpdatedAt = SealedSecret{}, false, nil, s.now()
		return s.audit(ctx, tx, userEvent(u, AuditTOTPDisable))
	})
	if err != nil {
		return err
	}
	*ss.User = *u
	return nil
}

// VerifySecondFactor completes a sign-in pending its second factor with
// a TOTP code not used before or an unused recovery code, and spends
// it. Each code is a guarded attempt, like a password: wrong codes count
// as sign-in failures of the email, so the same throttle bounds guessing.
func (s *Service) VerifySecondFactor(ctx context.Context, ss *StaffSession, code string) error {
	if !ss.Session.PendingTOTP {
		return nil
	}
	code = canonicalCode(code)
	ctx = staffActor(ctx, ss.User)
	var u *User
	ok, err := s.attempt(ctx, ss.User.Email, ss.User, factorTOTP, func() (bool, error) {
		var wrong bool
		var err error
		u, wrong, err = s.completeSecondFactor(ctx, ss, code)
		return !wrong && err == nil, err
	})
	if err != nil {
		return err
	}
	if !ok {
		return Errorf(KindUnauthorized, CodeTOTPInvalid, "the code is not right, or was used already (each code works once): enter the next code your app shows, and check the time on your phone")
	}
	ss.Session.PendingTOTP, *ss.User = false, *u
	return nil
}

// completeSecondFactor spends code on the session's user and completes
// the session's sign-in, in one transaction; wrong when code matched
// nothing (then nothing is written).
func (s *Service) completeSecondFactor(ctx context.Context, ss *StaffSession, code string) (u *User, wrong bool, err error) {
	u, err = s.changeUser(ctx, ss.User, func(tx Tx, u *User) error {
		how, err := s.spendSecondFactor(u, code)
		if err != nil {
			return err
		}
		if how == "" {
			wrong = true
			return errors.New("wrong second factor") // rolls back
		}
		u.UpdatedAt = s.now()
		if err := tx.TouchSession(ss.Session.IDHash, s.now(), false); errors.Is(err, ErrConflict) {
			return errSessionExpired()
		} else if err != nil {
			return err
		}
		return s.audit(ctx, tx, AuditEvent{MerchantID: u.MerchantID, Action: AuditSignIn, ObjectType: ObjectUser,
			ObjectID: u.ID, Outcome: OutcomeSuccess, Detail: how})
	})
	if wrong {
		return nil, true, nil
	}
	return u, false, err
}

// spendSecondFactor checks code against u's TOTP secret, then against
// its unused recovery codes, and spends on u what matched: the code's
// time step, or the recovery code. It returns how u signed in, "" when
// code matched nothing.
func (s *Service) spendSecondFactor(u *User, code string) (string, error) {
	secret, err := s.vault.Open(u.TOTP, totpBinding(u))
	if err != nil {
		return "", fmt.Errorf("open totp secret: %w", err)
	}
	if step, ok := totpMatch(secret, code, s.now(), u.TOTPLastStep); ok {
		u.TOTPLastStep = step
		return "password+totp", nil
	}
	i := slices.Index(u.RecoveryCodes, hexHash(code))
	if i < 0 {
		return "", nil
	}
	u.RecoveryCodes = slices.Delete(slices.Clone(u.RecoveryCodes), i, i+1)
	return "password+recovery_code", nil
}

// SetTOTPRequired makes two-factor sign-in mandatory (or optional) for
// every staff user of actor's merchant. Setting it to what it already is
// changes and audits nothing.
func (s *Service) SetTOTPRequired(ctx context.Context, actor *User, require bool) error {
	if err := permit(actor, PermTeam); err != nil {
		return err
	}
	ctx = staffActor(ctx, actor)
	err := s.store.Update(ctx, func(tx Tx) error {
		if err := tx.LockMerchantSettings(actor.MerchantID); err != nil {
			return err
		}
		m, err := tx.Merchant(actor.MerchantID)
		if err != nil {
			return err
		}
		if m.Settings.Dashboard.RequireTOTP == require {
			return nil // nothing changes: nothing to audit
		}
		if err := canRequireTOTP(tx, actor, require); err != nil {
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
		return asServiceError("set totp requirement", err)
	}
	return nil
}

// canRequireTOTP refuses to require two-factor sign-in of everyone by an
// admin who has not set it up: every page but Account would close on
// them at once.
func canRequireTOTP(tx Tx, actor *User, require bool) error {
	if !require {
		return nil
	}
	u, err := tx.User(actor.MerchantID, actor.ID)
	if err != nil {
		return err
	}
	if !u.TOTPEnabled {
		return Errorf(KindConflict, CodeTOTPRequired, "set up two-factor sign-in for yourself first (Account page): "+
			"requiring it of everyone would close every page but Account on you")
	}
	return nil
}

// hexHash is the stored form of a recovery code.
func hexHash(code string) string { return hexString(HashSecret(code)) }
