package paylink_test

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
	"github.com/paylink/paylink/internal/vault"
)

// Dashboard users changed by several requests at once: every write of a
// user is a compare-and-set on its version, secrets are checked under a
// throttle that counts attempts in flight, and codes are spent once.

// session signs email in and loads its session as a request would.
func session(t *testing.T, env *apitest.Env, email, password string) *paylink.StaffSession {
	t.Helper()
	ctx := context.Background()
	in, err := env.Service.SignIn(ctx, email, password)
	if err != nil {
		t.Fatalf("sign in %s: %v", email, err)
	}
	ss, err := env.Service.StaffSession(ctx, in.Token, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return ss
}

// concurrently runs fn n times at once and returns the response codes.
func concurrently(n int, fn func(i int) error) []string {
	codes := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i] = code(fn(i))
		}()
	}
	wg.Wait()
	return codes
}

// TestStaleUserCopyNeverOverwrites: a request holding the user as it was
// when it began (a session loaded before another request changed the
// password, or demoted the user) never writes that copy back.
func TestStaleUserCopyNeverOverwrites(t *testing.T) {
	usersEngine(t, func(t *testing.T, env *apitest.Env) {
		ctx := context.Background()
		m := env.Onboard()
		admin := newStaff(t, env, m, "admin@example.com", paylink.RoleAdmin)
		newStaff(t, env, m, "other@example.com", paylink.RoleAdmin)
		stale := session(t, env, "admin@example.com", staffPassword)
		owner := session(t, env, "admin@example.com", staffPassword)
		if err := env.Service.ChangePassword(ctx, owner, staffPassword, "a brand new passphrase"); err != nil {
			t.Fatal(err)
		}
		if _, err := env.Service.BeginTOTP(ctx, stale); err != nil {
			t.Fatalf("set-up from the older request: %v", err)
		}
		if _, err := env.Service.SignIn(ctx, "admin@example.com", "a brand new passphrase"); err != nil {
			t.Errorf("the new password after the older request's write: %v", err)
		}
		if _, err := env.Service.SignIn(ctx, "admin@example.com", staffPassword); code(err) != paylink.CodeSignInFailed {
			t.Errorf("the old password: got %v, want %s", err, paylink.CodeSignInFailed)
		}

		demoted := session(t, env, "admin@example.com", "a brand new passphrase")
		other := current(t, env, "other@example.com")
		if err := env.Service.ChangeRole(ctx, other, admin.ID, paylink.RoleViewer); err != nil {
			t.Fatal(err)
		}
		env.Clock.Advance(time.Minute)
		if _, err := env.Service.BeginTOTP(ctx, demoted); err != nil {
			t.Fatalf("set-up from the request that began before the demotion: %v", err)
		}
		if u := session(t, env, "admin@example.com", "a brand new passphrase").User; u.Role != paylink.RoleViewer {
			t.Errorf("after the older request's write: got role %s, want viewer", u.Role)
		}
	})
}

// twoFactorUser enrols email in two-factor sign-in and returns its
// secret and recovery codes; the enrolment's code is spent, so the clock
// is moved to the next time step.
func twoFactorUser(t *testing.T, env *apitest.Env, email string) ([]byte, []string) {
	t.Helper()
	ctx := context.Background()
	ss := session(t, env, email, staffPassword)
	secret, err := env.Service.BeginTOTP(ctx, ss)
	if err != nil {
		t.Fatal(err)
	}
	codes, err := env.Service.ConfirmTOTP(ctx, ss, paylink.TOTPCode(secret, env.Clock.Now()), staffPassword)
	if err != nil {
		t.Fatal(err)
	}
	env.Clock.Advance(30 * time.Second)
	return secret, codes
}

// pendingSessions opens n sessions of email waiting for their second
// factor.
func pendingSessions(t *testing.T, env *apitest.Env, email string, n int) []*paylink.StaffSession {
	t.Helper()
	out := make([]*paylink.StaffSession, n)
	for i := range out {
		if out[i] = session(t, env, email, staffPassword); !out[i].Session.PendingTOTP {
			t.Fatal("session not pending its second factor")
		}
	}
	return out
}

// TestSecondFactorsAreSpentOnce: one recovery code typed into eight
// pending sign-ins at once completes one of them; a TOTP code that
// completed one sign-in is refused for another, and the next time
// step's code works.
func TestSecondFactorsAreSpentOnce(t *testing.T) {
	usersEngine(t, func(t *testing.T, env *apitest.Env) {
		ctx := context.Background()
		m := env.Onboard()
		newStaff(t, env, m, "admin@example.com", paylink.RoleAdmin)
		secret, recovery := twoFactorUser(t, env, "admin@example.com")

		const n = 8
		pending := pendingSessions(t, env, "admin@example.com", n)
		signedIn := 0
		for _, c := range concurrently(n, func(i int) error { return env.Service.VerifySecondFactor(ctx, pending[i], recovery[0]) }) {
			switch c {
			case "":
				signedIn++
			case paylink.CodeTOTPInvalid, paylink.CodeOperationInProgress:
			default:
				t.Errorf("recovery code: got %s, want success, %s or %s", c, paylink.CodeTOTPInvalid, paylink.CodeOperationInProgress)
			}
		}
		if signedIn != 1 {
			t.Errorf("one recovery code signed in %d sessions, want 1", signedIn)
		}

		two := pendingSessions(t, env, "admin@example.com", 2)
		totp := paylink.TOTPCode(secret, env.Clock.Now())
		if err := env.Service.VerifySecondFactor(ctx, two[0], totp); err != nil {
			t.Fatalf("TOTP code: %v", err)
		}
		if err := env.Service.VerifySecondFactor(ctx, two[1], totp); code(err) != paylink.CodeTOTPInvalid {
			t.Errorf("the same TOTP code again: got %v, want %s", err, paylink.CodeTOTPInvalid)
		}
		env.Clock.Advance(30 * time.Second)
		if err := env.Service.VerifySecondFactor(ctx, two[1], paylink.TOTPCode(secret, env.Clock.Now())); err != nil {
			t.Errorf("the next step's code: %v", err)
		}
	})
}

// TestMerchantKeepsAnAdminUnderRace: two admins removing, or demoting,
// each other at the same moment leave the merchant with one admin.
func TestMerchantKeepsAnAdminUnderRace(t *testing.T) {
	usersEngine(t, func(t *testing.T, env *apitest.Env) {
		ctx := context.Background()
		for round := range 6 {
			m := env.Onboard()
			x := newStaff(t, env, m, fmtEmail("x", round), paylink.RoleAdmin)
			y := newStaff(t, env, m, fmtEmail("y", round), paylink.RoleAdmin)
			pair := [2]*paylink.User{x, y}
			codes := concurrently(2, func(i int) error {
				actor, target := pair[i], pair[1-i]
				if round%2 == 0 {
					return env.Service.RemoveUser(ctx, actor, target.ID)
				}
				return env.Service.ChangeRole(ctx, actor, target.ID, paylink.RoleViewer)
			})
			for _, c := range codes {
				if c != "" && c != paylink.CodeLastAdmin && c != paylink.CodeOperationInProgress {
					t.Errorf("round %d: got %s, want success, %s or %s", round, c, paylink.CodeLastAdmin, paylink.CodeOperationInProgress)
				}
			}
			team, err := env.Service.Team(ctx, currentRole(t, env, m, pair))
			if err != nil {
				t.Fatal(err)
			}
			admins := 0
			for _, u := range team {
				if u.Role == paylink.RoleAdmin {
					admins++
				}
			}
			if admins != 1 {
				t.Errorf("round %d (%v): the merchant has %d admins, want 1", round, codes, admins)
			}
		}
	})
}

func fmtEmail(who string, round int) string {
	return who + string(rune('a'+round)) + "@example.com"
}

// currentRole is whichever of pair is still an admin of m, to list its
// team with.
func currentRole(t *testing.T, env *apitest.Env, m *apitest.Merchant, pair [2]*paylink.User) *paylink.User {
	t.Helper()
	for _, u := range pair {
		in, err := env.Service.SignIn(context.Background(), u.Email, staffPassword)
		if err == nil && in.User.Role == paylink.RoleAdmin && in.User.MerchantID == m.ID {
			return in.User
		}
	}
	t.Fatal("neither is an admin")
	return nil
}

// TestSignInThrottleUnderRace: wrong passwords sent all at once are
// counted while they are checked, so no more than SignInFailureLimit of
// them are checked; the rest are throttled.
func TestSignInThrottleUnderRace(t *testing.T) {
	usersEngine(t, func(t *testing.T, env *apitest.Env) {
		ctx := context.Background()
		m := env.Onboard()
		newStaff(t, env, m, "staff@example.com", paylink.RoleStaff)
		const n = 2 * paylink.SignInFailureLimit
		checked := 0
		for _, c := range concurrently(n, func(int) error {
			_, err := env.Service.SignIn(ctx, "staff@example.com", "wrong password!!")
			return err
		}) {
			switch c {
			case paylink.CodeSignInFailed:
				checked++
			case paylink.CodeSignInThrottled:
			default:
				t.Errorf("got %s, want %s or %s", c, paylink.CodeSignInFailed, paylink.CodeSignInThrottled)
			}
		}
		if checked > paylink.SignInFailureLimit {
			t.Errorf("%d of %d wrong passwords at once were checked, want at most %d", checked, n, paylink.SignInFailureLimit)
		}
	})
}

// TestAccountPasswordChecksAreThrottled: guessing the current password
// on the account page counts toward the same limit as sign-in.
func TestAccountPasswordChecksAreThrottled(t *testing.T) {
	usersEngine(t, func(t *testing.T, env *apitest.Env) {
		ctx := context.Background()
		m := env.Onboard()
		newStaff(t, env, m, "staff@example.com", paylink.RoleStaff)
		ss := session(t, env, "staff@example.com", staffPassword)
		for range paylink.SignInFailureLimit {
			if err := env.Service.ChangePassword(ctx, ss, "wrong password!!", "a brand new passphrase"); code(err) != paylink.CodeSignInFailed {
				t.Fatalf("wrong current password: got %v, want %s", err, paylink.CodeSignInFailed)
			}
		}
		if err := env.Service.ChangePassword(ctx, ss, staffPassword, "a brand new passphrase"); code(err) != paylink.CodeSignInThrottled {
			t.Errorf("right password after %d wrong ones: got %v, want %s", paylink.SignInFailureLimit, err, paylink.CodeSignInThrottled)
		}
		if _, err := env.Service.SignIn(ctx, "staff@example.com", staffPassword); code(err) != paylink.CodeSignInThrottled {
			t.Errorf("sign-in after them: got %v, want %s", err, paylink.CodeSignInThrottled)
		}
	})
}

// TestSessionOfARemovedUserEndsCleanly: a user's session loaded while
// another admin removes that user ends as expired, never as an internal
// error, however the two interleave.
func TestSessionOfARemovedUserEndsCleanly(t *testing.T) {
	usersEngine(t, func(t *testing.T, env *apitest.Env) {
		ctx := context.Background()
		for round := range 20 {
			m := env.Onboard()
			x := newStaff(t, env, m, fmtEmail("x", round), paylink.RoleAdmin)
			y := newStaff(t, env, m, fmtEmail("y", round), paylink.RoleAdmin)
			in, err := env.Service.SignIn(ctx, y.Email, staffPassword)
			if err != nil {
				t.Fatal(err)
			}
			codes := concurrently(2, func(i int) error {
				if i == 0 {
					return env.Service.RemoveUser(ctx, x, y.ID)
				}
				_, err := env.Service.StaffSession(ctx, in.Token, time.Hour)
				return err
			})
			if codes[0] != "" || (codes[1] != "" && codes[1] != paylink.CodeSessionExpired) {
				t.Errorf("round %d: removal got %q, the removed user's request %q; want success and success or %s",
					round, codes[0], codes[1], paylink.CodeSessionExpired)
			}
		}
	})
}

// TestSignInThrottleHoldsDuringAKeyRotation: during a rolling master key
// rotation some instances seal with the new key and others still with
// the old one, each holding both. An email's failures are recorded under
// a MAC of the instance's active key, and each counts those under every
// key it holds, so the limit holds across them rather than doubling.
func TestSignInThrottleHoldsDuringAKeyRotation(t *testing.T) {
	usersEngine(t, func(t *testing.T, env *apitest.Env) {
		ctx := context.Background()
		m := env.Onboard()
		newStaff(t, env, m, "staff@example.com", paylink.RoleStaff)
		old, fresh := bytes.Repeat([]byte{7}, vault.KeySize), bytes.Repeat([]byte{9}, vault.KeySize)
		instanceOn := func(keys ...[]byte) *paylink.Service { // operations.md, "Key rotation", step 3
			v, err := vault.New(keys...)
			if err != nil {
				t.Fatal(err)
			}
			svc, err := paylink.NewService(env.Service.Config(), paylink.Deps{Store: env.Store, Vault: v,
				Clock: env.Clock.Now, Passwords: apitest.Passwords()})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { svc.Close(context.Background()) })
			return svc
		}
		notYet, upgraded := instanceOn(old, fresh), instanceOn(fresh, old)
		for i := range paylink.SignInFailureLimit {
			instance := notYet
			if i%2 == 1 {
				instance = upgraded
			}
			if _, err := instance.SignIn(ctx, "staff@example.com", "wrong password!!"); code(err) != paylink.CodeSignInFailed {
				t.Fatalf("wrong password %d: got %v, want %s", i+1, err, paylink.CodeSignInFailed)
			}
		}
		for name, instance := range map[string]*paylink.Service{"old key": notYet, "new key": upgraded} {
			if _, err := instance.SignIn(ctx, "staff@example.com", staffPassword); code(err) != paylink.CodeSignInThrottled {
				t.Errorf("the instance on the %s after %d failures across both: got %v, want %s",
					name, paylink.SignInFailureLimit, err, paylink.CodeSignInThrottled)
			}
		}
	})
}
