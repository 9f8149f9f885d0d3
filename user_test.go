package paylink_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
)

// Dashboard users, sessions, invites and throttling at the Service level,
// on both engines.

const staffPassword = "correct staple battery horse"

// usersEngine runs fn on SQLite and on the package's PostgreSQL.
func usersEngine(t *testing.T, fn func(t *testing.T, env *apitest.Env)) {
	t.Run("sqlite", func(t *testing.T) { fn(t, apitest.Start(t, apitest.Options{})) })
	t.Run("postgres", func(t *testing.T) { fn(t, apitest.Start(t, apitest.Options{DSN: pg.Database(t)})) })
}

// mustInvite makes an invite of email with role by by and returns its
// token.
func mustInvite(t *testing.T, env *apitest.Env, by *paylink.User, email string, role paylink.Role) string {
	t.Helper()
	token, _, err := env.Service.CreateInvite(context.Background(), by, email, role)
	if err != nil {
		t.Fatal(err)
	}
	return token
}

// code is the response code of err, "" for nil.
func code(err error) string {
	if err == nil {
		return ""
	}
	return paylink.AsError(err).Code
}

func newStaff(t *testing.T, env *apitest.Env, m *apitest.Merchant, email string, role paylink.Role) *paylink.User {
	t.Helper()
	u, err := env.Service.CreateUser(context.Background(), paylink.NewUser{MerchantID: m.ID, Email: email, Role: role, Password: staffPassword})
	if err != nil {
		t.Fatalf("create %s: %v", email, err)
	}
	return u
}

// current signs email in and returns the user as stored now (a role
// change takes effect on the next request).
func current(t *testing.T, env *apitest.Env, email string) *paylink.User {
	t.Helper()
	in, err := env.Service.SignIn(context.Background(), email, staffPassword)
	if err != nil {
		t.Fatalf("sign in %s: %v", email, err)
	}
	return in.User
}

func TestRolePermissionTable(t *testing.T) {
	all := []paylink.Permission{paylink.PermView, paylink.PermRefund, paylink.PermCapture, paylink.PermCancel, paylink.PermLinks,
		paylink.PermVirtualTerminal, paylink.PermTeam, paylink.PermAPIKeys, paylink.PermWebhooks, paylink.PermAudit}
	want := map[paylink.Role][]paylink.Permission{
		paylink.RoleAdmin: all,
		paylink.RoleStaff: {paylink.PermView, paylink.PermRefund, paylink.PermCapture, paylink.PermCancel, paylink.PermLinks,
			paylink.PermVirtualTerminal},
		paylink.RoleViewer: {paylink.PermView},
		"owner":            nil,
	}
	for role, allowed := range want {
		t.Run(string(role), func(t *testing.T) {
			for _, p := range all {
				if got := role.Can(p); got != slices.Contains(allowed, p) {
					t.Errorf("%s can %s: got %v, want %v", role, p, got, !got)
				}
			}
		})
	}
}

func TestCheckPassword(t *testing.T) {
	tests := []struct {
		password string
		wantCode string
	}{
		{"short", paylink.CodeWeakPassword},
		{"elevenchars", paylink.CodeWeakPassword},
		{"password1234", paylink.CodeWeakPassword},
		{"Password123456!", paylink.CodeWeakPassword},
		{"qwertyuiop123", paylink.CodeWeakPassword},
		{"aaaaaaaaaaaaaaa", paylink.CodeWeakPassword},
		{"éééééééééééééééé", paylink.CodeWeakPassword}, // one character repeated, of two bytes (the code review sweep)
		{"€€€€€€€€€€€€", paylink.CodeWeakPassword},
		{"jo.citizen-2026!", paylink.CodeWeakPassword}, // contains the email's local part
		{staffPassword, ""},
		{"Tr1cky-but-fine", ""},
		{"Tr1cky-but-fine\xff\xfe", paylink.CodeWeakPassword}, // not UTF-8
	}
	for _, tt := range tests {
		t.Run(tt.password, func(t *testing.T) {
			if got := code(paylink.CheckPassword(tt.password, "jo.citizen@example.com")); got != tt.wantCode {
				t.Errorf("got %q, want %q", got, tt.wantCode)
			}
		})
	}
}

func TestCreateUser(t *testing.T) {
	usersEngine(t, func(t *testing.T, env *apitest.Env) {
		m := env.Onboard()
		newStaff(t, env, m, "Taken@Example.com", paylink.RoleAdmin)
		tests := []struct {
			name     string
			in       paylink.NewUser
			wantCode string
		}{
			{"ok", paylink.NewUser{MerchantID: m.ID, Email: "new@example.com", Role: paylink.RoleStaff, Password: staffPassword}, ""},
			{"email taken, any case", paylink.NewUser{MerchantID: m.ID, Email: "taken@example.COM", Role: paylink.RoleStaff, Password: staffPassword}, paylink.CodeEmailTaken},
			{"bad email", paylink.NewUser{MerchantID: m.ID, Email: "not an email", Role: paylink.RoleStaff, Password: staffPassword}, paylink.CodeInvalidRequest},
			{"a card number as the email", paylink.NewUser{MerchantID: m.ID, Email: "4111111111111111@example.com", Role: paylink.RoleStaff, Password: staffPassword}, paylink.CodeInvalidRequest},
			{"email not UTF-8", paylink.NewUser{MerchantID: m.ID, Email: "a\xff@example.com", Role: paylink.RoleStaff, Password: staffPassword}, paylink.CodeInvalidRequest},
			{"bad role", paylink.NewUser{MerchantID: m.ID, Email: "r@example.com", Role: "owner", Password: staffPassword}, paylink.CodeInvalidRequest},
			{"weak password", paylink.NewUser{MerchantID: m.ID, Email: "w@example.com", Role: paylink.RoleStaff, Password: "letmein12345"}, paylink.CodeWeakPassword},
			{"unknown merchant", paylink.NewUser{MerchantID: "nope", Email: "u@example.com", Role: paylink.RoleStaff, Password: staffPassword}, paylink.CodeNotFound},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, err := env.Service.CreateUser(context.Background(), tt.in)
				if got := code(err); got != tt.wantCode {
					t.Errorf("got %q (%v), want %q", got, err, tt.wantCode)
				}
			})
		}
	})
}

func TestSignInAndSessions(t *testing.T) {
	usersEngine(t, func(t *testing.T, env *apitest.Env) {
		ctx := context.Background()
		m := env.Onboard()
		u := newStaff(t, env, m, "staff@example.com", paylink.RoleStaff)
		if _, err := env.Service.SignIn(ctx, "staff@example.com", "wrong password!!"); code(err) != paylink.CodeSignInFailed {
			t.Errorf("wrong password: got %v, want %s", err, paylink.CodeSignInFailed)
		}
		if _, err := env.Service.SignIn(ctx, "nobody@example.com", staffPassword); code(err) != paylink.CodeSignInFailed {
			t.Errorf("unknown email: got %v, want %s", err, paylink.CodeSignInFailed)
		}
		in, err := env.Service.SignIn(ctx, " STAFF@example.com ", staffPassword)
		if err != nil {
			t.Fatalf("sign in: %v", err)
		}
		if in.Session.PendingTOTP || in.User.ID != u.ID || len(in.Token) < 40 {
			t.Fatalf("session: got %+v, want a full session of %s", in.Session, u.ID)
		}
		ss, err := env.Service.StaffSession(ctx, in.Token, 15*time.Minute)
		if err != nil || ss.User.ID != u.ID || ss.Merchant.ID != m.ID {
			t.Fatalf("load session: got %v, want the user's", err)
		}
		if _, err := env.Service.StaffSession(ctx, in.Token+"x", 15*time.Minute); code(err) != paylink.CodeSessionExpired {
			t.Errorf("wrong token: got %v, want %s", err, paylink.CodeSessionExpired)
		}
		env.Clock.Advance(15*time.Minute + time.Second)
		if _, err := env.Service.StaffSession(ctx, in.Token, 15*time.Minute); code(err) != paylink.CodeSessionExpired {
			t.Errorf("idle session: got %v, want %s", err, paylink.CodeSessionExpired)
		}
		in2, err := env.Service.SignIn(ctx, "staff@example.com", staffPassword)
		if err != nil {
			t.Fatal(err)
		}
		ss2, err := env.Service.StaffSession(ctx, in2.Token, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if err := env.Service.SignOut(ctx, ss2); err != nil {
			t.Fatal(err)
		}
		if _, err := env.Service.StaffSession(ctx, in2.Token, time.Hour); code(err) != paylink.CodeSessionExpired {
			t.Errorf("signed-out session: got %v, want %s", err, paylink.CodeSessionExpired)
		}
		rows, err := env.Service.AuditLog(ctx, paylink.AuditFilter{MerchantID: m.ID, ActorID: u.ID, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range rows {
			if r.ActorKind != paylink.ActorStaff {
				t.Errorf("row %s: actor kind %s, want staff", r.Action, r.ActorKind)
			}
			got = append(got, r.Action)
		}
		want := []string{paylink.AuditSignInFailed, paylink.AuditSignIn, paylink.AuditSignIn, paylink.AuditSignOut}
		if !slices.Equal(got, want) {
			t.Errorf("audit rows: got %v, want %v", got, want)
		}
	})
}

func TestSignInThrottlePerEmail(t *testing.T) {
	usersEngine(t, func(t *testing.T, env *apitest.Env) {
		ctx := context.Background()
		m := env.Onboard()
		newStaff(t, env, m, "staff@example.com", paylink.RoleStaff)
		for range paylink.SignInFailureLimit - 1 {
			env.Service.SignIn(ctx, "staff@example.com", "wrong password!!")
		}
		env.Clock.Advance(10 * time.Minute)
		env.Service.SignIn(ctx, "staff@example.com", "wrong password!!")
		if _, err := env.Service.SignIn(ctx, "staff@example.com", staffPassword); code(err) != paylink.CodeSignInThrottled {
			t.Fatalf("right password after %d failures: got %v, want %s", paylink.SignInFailureLimit, err, paylink.CodeSignInThrottled)
		}
		env.Clock.Advance(paylink.SignInFailureWindow - 10*time.Minute + time.Second) // the first nine left the window
		if _, err := env.Service.SignIn(ctx, "staff@example.com", staffPassword); err != nil {
			t.Errorf("after the window: got %v, want a session", err)
		}
	})
}

// from is a context whose staff actor comes from the address ip.
func from(ip string) context.Context {
	return paylink.WithActor(context.Background(), paylink.Actor{Kind: paylink.ActorStaff, IP: ip})
}

// TestALockoutHoldsWhereTheFailuresCameFrom: failures for an email from
// one address lock that email out from there only, so that whoever knows
// a staff member's email cannot lock them out from their own network;
// failures from many addresses lock the email out everywhere once they
// pass SignInEmailFailureLimit. Ten /64s of one IPv6 /56 are one
// network: they do not make up the ten networks a lock-out takes.
func TestALockoutHoldsWhereTheFailuresCameFrom(t *testing.T) {
	usersEngine(t, func(t *testing.T, env *apitest.Env) {
		m := env.Onboard()
		newStaff(t, env, m, "staff@example.com", paylink.RoleStaff)
		for range paylink.SignInFailureLimit {
			env.Service.SignIn(from("198.51.100.66"), "staff@example.com", "wrong password!!")
		}
		if _, err := env.Service.SignIn(from("198.51.100.66"), "staff@example.com", staffPassword); code(err) != paylink.CodeSignInThrottled {
			t.Errorf("right password from the failing address: got %v, want %s", err, paylink.CodeSignInThrottled)
		}
		if _, err := env.Service.SignIn(from("203.0.113.7"), "staff@example.com", staffPassword); err != nil {
			t.Errorf("right password from the staff member's own address: got %v, want a session", err)
		}
		for n := range 10 { // ten /64s of one home's /56: its own limit only
			for range paylink.SignInFailureLimit {
				env.Service.SignIn(from(fmt.Sprintf("2001:db8:0:ab0%x::1", n)), "staff@example.com", "wrong password!!")
			}
		}
		if _, err := env.Service.SignIn(from("203.0.113.7"), "staff@example.com", staffPassword); err != nil {
			t.Errorf("right password after failures from ten /64s of one /56: got %v, want a session", err)
		}
		networks := paylink.SignInEmailFailureLimit/paylink.SignInFailureLimit - 1 // with the first, the limit
		for n := range networks {
			for range paylink.SignInFailureLimit {
				env.Service.SignIn(from(fmt.Sprintf("192.0.2.%d", n+1)), "staff@example.com", "wrong password!!")
			}
		}
		if _, err := env.Service.SignIn(from("203.0.113.7"), "staff@example.com", staffPassword); code(err) != paylink.CodeSignInThrottled {
			t.Errorf("right password after %d failures from %d networks: got %v, want %s",
				paylink.SignInEmailFailureLimit, networks+1, err, paylink.CodeSignInThrottled)
		}
	})
}

// TestSecondFactorGuessesAreCountedApart: wrong passwords from a
// stranger's network do not hold up the owner's second factor, and wrong
// second-factor codes are limited to SignInFailureLimit for the email
// from every network together: one who has the password gets no more
// code guesses from more networks (a verification sweep found them
// multiplied tenfold by the per-network limit).
func TestSecondFactorGuessesAreCountedApart(t *testing.T) {
	usersEngine(t, func(t *testing.T, env *apitest.Env) {
		m := env.Onboard()
		newStaff(t, env, m, "admin@example.com", paylink.RoleAdmin)
		owner := from("203.0.113.7")
		in, _ := env.Service.SignIn(owner, "admin@example.com", staffPassword)
		ss, err := env.Service.StaffSession(owner, in.Token, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		secret, err := env.Service.BeginTOTP(owner, ss)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := env.Service.ConfirmTOTP(owner, ss, paylink.TOTPCode(secret, env.Clock.Now()), staffPassword); err != nil {
			t.Fatal(err)
		}
		pending := func() *paylink.StaffSession {
			t.Helper()
			in, err := env.Service.SignIn(owner, "admin@example.com", staffPassword)
			if err != nil {
				t.Fatal(err)
			}
			ss, err := env.Service.StaffSession(owner, in.Token, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			return ss
		}
		for range paylink.SignInFailureLimit {
			env.Service.SignIn(from("198.51.100.66"), "admin@example.com", "wrong password!!")
		}
		env.Clock.Advance(31 * time.Second) // a new code
		if err := env.Service.VerifySecondFactor(owner, pending(), paylink.TOTPCode(secret, env.Clock.Now())); err != nil {
			t.Errorf("the owner's code after a stranger's wrong passwords: got %v, want a session", err)
		}
		ss = pending()
		for n := range paylink.SignInFailureLimit { // one wrong code from each of ten networks
			env.Service.VerifySecondFactor(from(fmt.Sprintf("192.0.2.%d", n+1)), ss, "000000")
		}
		env.Clock.Advance(31 * time.Second)
		if err := env.Service.VerifySecondFactor(from("192.0.2.99"), ss, paylink.TOTPCode(secret, env.Clock.Now())); code(err) != paylink.CodeSignInThrottled {
			t.Errorf("a code after %d wrong ones from %d networks: got %v, want %s", paylink.SignInFailureLimit, paylink.SignInFailureLimit, err, paylink.CodeSignInThrottled)
		}
	})
}

// TestSignInFailuresKeepNoTypedEmail: a failed sign-in is recorded under
// a hash of the email typed, so a password typed into the email box is
// not written to the database, and the throttle counts an address
// whatever its case.
func TestSignInFailuresKeepNoTypedEmail(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	ctx := context.Background()
	m := env.Onboard()
	newStaff(t, env, m, "staff@example.com", paylink.RoleStaff)
	const typed = "correct-horse-passphrase-42" // lower case: how the email is looked up
	if _, err := env.Service.SignIn(ctx, typed, "x"); code(err) != paylink.CodeSignInFailed {
		t.Fatalf("sign in with a password as the email: got %v, want %s", err, paylink.CodeSignInFailed)
	}
	for range paylink.SignInFailureLimit {
		env.Service.SignIn(ctx, "Staff@Example.COM", "wrong password!!")
	}
	if _, err := env.Service.SignIn(ctx, "staff@example.com", staffPassword); code(err) != paylink.CodeSignInThrottled {
		t.Errorf("after %d failures typed in another case: got %v, want %s", paylink.SignInFailureLimit, err, paylink.CodeSignInThrottled)
	}
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(env.DBPath + suffix)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(typed)) {
			t.Errorf("the database file%s holds the text typed as the email", suffix)
		}
	}
}

// TestSignInThrottlePerAddress: SignInIPFailureLimit failures from one
// source address, each for another email (credential stuffing), refuse
// every further attempt from that address, for a known or an unknown
// email alike and with the same answer, until the window passes; other
// addresses are not affected.
func TestSignInThrottlePerAddress(t *testing.T) {
	usersEngine(t, func(t *testing.T, env *apitest.Env) {
		attacker, office := from("203.0.113.7"), from("198.51.100.20")
		m := env.Onboard()
		newStaff(t, env, m, "staff@example.com", paylink.RoleStaff)
		for i := range paylink.SignInIPFailureLimit - 1 {
			if _, err := env.Service.SignIn(attacker, fmt.Sprintf("guess%d@example.com", i), "wrong password!!"); code(err) != paylink.CodeSignInFailed {
				t.Fatalf("failure %d: got %v, want %s", i+1, err, paylink.CodeSignInFailed)
			}
		}
		if _, err := env.Service.SignIn(attacker, "staff@example.com", staffPassword); err != nil {
			t.Fatalf("right password after %d failures from the address: got %v, want a session", paylink.SignInIPFailureLimit-1, err)
		}
		env.Clock.Advance(10 * time.Minute)
		env.Service.SignIn(attacker, "staff@example.com", "wrong password!!")
		_, known := env.Service.SignIn(attacker, "staff@example.com", staffPassword)
		_, unknown := env.Service.SignIn(attacker, "nobody@example.com", "wrong password!!")
		if code(known) != paylink.CodeSignInThrottled || known.Error() != unknown.Error() {
			t.Fatalf("after %d failures: got %v (known email) and %v (unknown), want the same %s for both",
				paylink.SignInIPFailureLimit, known, unknown, paylink.CodeSignInThrottled)
		}
		if _, err := env.Service.SignIn(office, "staff@example.com", staffPassword); err != nil {
			t.Errorf("another address: got %v, want a session (the limit is per address)", err)
		}
		if _, err := env.Service.SignIn(context.Background(), "staff@example.com", staffPassword); err != nil {
			t.Errorf("no address: got %v, want a session", err)
		}
		env.Clock.Advance(paylink.SignInFailureWindow - 10*time.Minute + time.Second) // the first 49 left the window
		if _, err := env.Service.SignIn(attacker, "staff@example.com", staffPassword); err != nil {
			t.Errorf("after the window: got %v, want a session", err)
		}
	})
}

// TestSignInThrottlePerIPv6Prefix: the per-address limit counts an IPv6
// address by its /48 (a client picks any address and subnet of its
// delegation, up to a /48, so each /64 apart would give it 65,536
// budgets: a sweep spread 250 emails over five /64s of one /56 unrefused),
// and an IPv4-mapped IPv6 address as the IPv4 address it maps.
func TestSignInThrottlePerIPv6Prefix(t *testing.T) {
	usersEngine(t, func(t *testing.T, env *apitest.Env) {
		m := env.Onboard()
		newStaff(t, env, m, "staff@example.com", paylink.RoleStaff)
		tests := []struct {
			name          string
			failing       func(i int) string // the address of the i-th failure
			blocked, free string
		}{
			{"IPv6 by its /48", func(i int) string { return fmt.Sprintf("2001:db8:1:%x::%x", i, i+1) }, "2001:db8:1:ffff::1", "2001:db8:2::1"},
			{"IPv4-mapped as IPv4", func(i int) string { return [2]string{"203.0.113.7", "::ffff:203.0.113.7"}[i%2] }, "203.0.113.7", "203.0.113.8"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				for i := range paylink.SignInIPFailureLimit {
					if _, err := env.Service.SignIn(from(tt.failing(i)), fmt.Sprintf("guess%d@example.com", i), "wrong password!!"); code(err) != paylink.CodeSignInFailed {
						t.Fatalf("failure %d from %s: got %v, want %s", i+1, tt.failing(i), err, paylink.CodeSignInFailed)
					}
				}
				if _, err := env.Service.SignIn(from(tt.blocked), "staff@example.com", staffPassword); code(err) != paylink.CodeSignInThrottled {
					t.Errorf("from %s after %d failures from its network: got %v, want %s", tt.blocked, paylink.SignInIPFailureLimit, err, paylink.CodeSignInThrottled)
				}
				if _, err := env.Service.SignIn(from(tt.free), "staff@example.com", staffPassword); err != nil {
					t.Errorf("from %s: got %v, want a session", tt.free, err)
				}
			})
		}
	})
}

func TestPasswordChangeRevokesSessions(t *testing.T) {
	usersEngine(t, func(t *testing.T, env *apitest.Env) {
		ctx := context.Background()
		m := env.Onboard()
		newStaff(t, env, m, "staff@example.com", paylink.RoleStaff)
		a, _ := env.Service.SignIn(ctx, "staff@example.com", staffPassword)
		b, _ := env.Service.SignIn(ctx, "staff@example.com", staffPassword)
		ss, err := env.Service.StaffSession(ctx, a.Token, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if err := env.Service.ChangePassword(ctx, ss, "wrong current pw", "a new long passphrase"); code(err) != paylink.CodeSignInFailed {
			t.Errorf("wrong current password: got %v, want %s", err, paylink.CodeSignInFailed)
		}
		if err := env.Service.ChangePassword(ctx, ss, staffPassword, "a new long passphrase"); err != nil {
			t.Fatal(err)
		}
		for _, tok := range []string{a.Token, b.Token} {
			if _, err := env.Service.StaffSession(ctx, tok, time.Hour); code(err) != paylink.CodeSessionExpired {
				t.Errorf("session after the password change: got %v, want %s", err, paylink.CodeSessionExpired)
			}
		}
		if _, err := env.Service.SignIn(ctx, "staff@example.com", "a new long passphrase"); err != nil {
			t.Errorf("new password: %v", err)
		}
	})
}

func TestInvitesAndTeam(t *testing.T) {
	usersEngine(t, func(t *testing.T, env *apitest.Env) {
		ctx := context.Background()
		m, other := env.Onboard(), env.Onboard()
		admin := newStaff(t, env, m, "admin@example.com", paylink.RoleAdmin)
		staff := newStaff(t, env, m, "staff@example.com", paylink.RoleStaff)
		stranger := newStaff(t, env, other, "admin@other.example", paylink.RoleAdmin)

		if _, _, err := env.Service.CreateInvite(ctx, staff, "x@example.com", paylink.RoleViewer); code(err) != paylink.CodePermissionDenied {
			t.Errorf("staff invites: got %v, want %s", err, paylink.CodePermissionDenied)
		}
		if _, _, err := env.Service.CreateInvite(ctx, admin, "staff@example.com", paylink.RoleViewer); code(err) != paylink.CodeEmailTaken {
			t.Errorf("invite an existing user: got %v, want %s", err, paylink.CodeEmailTaken)
		}
		token, _, err := env.Service.CreateInvite(ctx, admin, "new@example.com", paylink.RoleViewer)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := env.Service.AcceptInvite(ctx, token, "password12345"); code(err) != paylink.CodeWeakPassword {
			t.Errorf("weak password: got %v, want %s", err, paylink.CodeWeakPassword)
		}
		u, err := env.Service.AcceptInvite(ctx, token, staffPassword)
		if err != nil || u.Role != paylink.RoleViewer || u.MerchantID != m.ID {
			t.Fatalf("accept: got %+v, %v", u, err)
		}
		if _, err := env.Service.AcceptInvite(ctx, token, staffPassword); code(err) != paylink.CodeInviteInvalid {
			t.Errorf("second use: got %v, want %s", err, paylink.CodeInviteInvalid)
		}
		late, _, _ := env.Service.CreateInvite(ctx, admin, "late@example.com", paylink.RoleStaff)
		env.Clock.Advance(paylink.InviteTTL + time.Second)
		if _, err := env.Service.AcceptInvite(ctx, late, staffPassword); code(err) != paylink.CodeInviteInvalid {
			t.Errorf("expired invite: got %v, want %s", err, paylink.CodeInviteInvalid)
		}

		tests := []struct {
			name     string
			do       func() error
			wantCode string
		}{
			{"staff changes a role", func() error { return env.Service.ChangeRole(ctx, staff, u.ID, paylink.RoleAdmin) }, paylink.CodePermissionDenied},
			{"another merchant's user", func() error { return env.Service.ChangeRole(ctx, admin, stranger.ID, paylink.RoleViewer) }, paylink.CodeNotFound},
			{"remove another merchant's user", func() error { return env.Service.RemoveUser(ctx, admin, stranger.ID) }, paylink.CodeNotFound},
			{"demote the last admin", func() error { return env.Service.ChangeRole(ctx, admin, admin.ID, paylink.RoleStaff) }, paylink.CodeLastAdmin},
			{"remove the last admin", func() error { return env.Service.RemoveUser(ctx, admin, admin.ID) }, paylink.CodeLastAdmin},
			{"unknown role", func() error { return env.Service.ChangeRole(ctx, admin, staff.ID, "owner") }, paylink.CodeInvalidRequest},
			{"promote", func() error { return env.Service.ChangeRole(ctx, admin, staff.ID, paylink.RoleAdmin) }, ""},
			{"demote an admin when another is left", func() error { return env.Service.ChangeRole(ctx, admin, admin.ID, paylink.RoleViewer) }, ""},
			{"remove, as the promoted user", func() error { return env.Service.RemoveUser(ctx, current(t, env, "staff@example.com"), u.ID) }, ""},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if got := code(tt.do()); got != tt.wantCode {
					t.Errorf("got %q, want %q", got, tt.wantCode)
				}
			})
		}
		team, err := env.Service.Team(ctx, current(t, env, "staff@example.com")) // an admin now
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, x := range team {
			got = append(got, x.Email+":"+string(x.Role))
		}
		if want := []string{"admin@example.com:viewer", "staff@example.com:admin"}; !slices.Equal(got, want) {
			t.Errorf("team: got %v, want %v", got, want)
		}
		if theirs, _ := env.Service.Team(ctx, stranger); len(theirs) != 1 {
			t.Errorf("other merchant's team: got %d users, want 1", len(theirs))
		}
		if _, err := env.Service.SignIn(ctx, "new@example.com", staffPassword); code(err) != paylink.CodeSignInFailed {
			t.Errorf("removed user signs in: got %v, want %s", err, paylink.CodeSignInFailed)
		}
	})
}

func TestTwoFactor(t *testing.T) {
	usersEngine(t, func(t *testing.T, env *apitest.Env) {
		ctx := context.Background()
		m := env.Onboard()
		newStaff(t, env, m, "admin@example.com", paylink.RoleAdmin)
		in, _ := env.Service.SignIn(ctx, "admin@example.com", staffPassword)
		ss, err := env.Service.StaffSession(ctx, in.Token, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		// An admin without two-factor cannot require it of everyone: it
		// would close every page but Account on them.
		if err := env.Service.SetTOTPRequired(ctx, ss.User, true); code(err) != paylink.CodeTOTPRequired {
			t.Errorf("require two-factor without it: got %v, want %s", err, paylink.CodeTOTPRequired)
		}
		if mm, _ := env.Service.Merchant(ctx, m.ID); mm.Settings.Dashboard.RequireTOTP {
			t.Error("the requirement was saved though refused")
		}
		secret, err := env.Service.BeginTOTP(ctx, ss)
		if err != nil {
			t.Fatal(err)
		}
		// A session alone does not tie the account to an authenticator:
		// the right code needs the password too.
		if _, err := env.Service.ConfirmTOTP(ctx, ss, paylink.TOTPCode(secret, env.Clock.Now()), "not the password"); code(err) != paylink.CodeSignInFailed {
			t.Errorf("confirm with a wrong password: got %v, want %s", err, paylink.CodeSignInFailed)
		}
		if u := current(t, env, "admin@example.com"); u.TOTPEnabled {
			t.Error("two-factor is on after a confirmation with a wrong password")
		}
		if _, err := env.Service.ConfirmTOTP(ctx, ss, "123456", staffPassword); code(err) != paylink.CodeTOTPInvalid && paylink.TOTPCode(secret, env.Clock.Now()) != "123456" {
			t.Errorf("wrong code: got %v, want %s", err, paylink.CodeTOTPInvalid)
		}
		codes, err := env.Service.ConfirmTOTP(ctx, ss, paylink.TOTPCode(secret, env.Clock.Now()), staffPassword)
		if err != nil || len(codes) != 10 {
			t.Fatalf("confirm: got %d codes, %v", len(codes), err)
		}
		pending, err := env.Service.SignIn(ctx, "admin@example.com", staffPassword)
		if err != nil || !pending.Session.PendingTOTP {
			t.Fatalf("sign in with two-factor: got %+v, %v, want a pending session", pending, err)
		}
		pss, _ := env.Service.StaffSession(ctx, pending.Token, time.Hour)
		env.Clock.Advance(30 * time.Second)
		// Typed as an app shows it, "123 456".
		typed := paylink.TOTPCode(secret, env.Clock.Now())
		if err := env.Service.VerifySecondFactor(ctx, pss, typed[:3]+" "+typed[3:]); err != nil {
			t.Fatalf("code %q: %v", typed[:3]+" "+typed[3:], err)
		}
		again, _ := env.Service.StaffSession(ctx, pending.Token, time.Hour)
		if again.Session.PendingTOTP {
			t.Error("session still pending after a right code")
		}
		// A recovery code typed without its dash, in capitals.
		byRecovery, err := env.Service.SignIn(ctx, "admin@example.com", staffPassword)
		if err != nil {
			t.Fatal(err)
		}
		rss, _ := env.Service.StaffSession(ctx, byRecovery.Token, time.Hour)
		if err := env.Service.VerifySecondFactor(ctx, rss, strings.ToUpper(strings.ReplaceAll(codes[0], "-", ""))); err != nil {
			t.Errorf("recovery code %q typed without its dash: %v", codes[0], err)
		}
		for range 2 { // the second time changes nothing, and is not audited
			if err := env.Service.SetTOTPRequired(ctx, again.User, true); err != nil {
				t.Fatal(err)
			}
		}
		rows, err := env.Service.AuditLog(ctx, paylink.AuditFilter{MerchantID: again.User.MerchantID, Action: paylink.AuditTOTPRequirement, Limit: 10})
		if err != nil || len(rows) != 1 {
			t.Errorf("requiring two-factor twice: %d audit rows (%v), want 1", len(rows), err)
		}
		again, _ = env.Service.StaffSession(ctx, pending.Token, time.Hour)
		if err := env.Service.DisableTOTP(ctx, again, staffPassword); code(err) != paylink.CodeTOTPRequired {
			t.Errorf("disable while required: got %v, want %s", err, paylink.CodeTOTPRequired)
		}
		if err := env.Service.SetTOTPRequired(ctx, again.User, false); err != nil {
			t.Fatal(err)
		}
		again, _ = env.Service.StaffSession(ctx, pending.Token, time.Hour)
		if err := env.Service.DisableTOTP(ctx, again, staffPassword); err != nil {
			t.Errorf("disable: %v", err)
		}
		if in, err := env.Service.SignIn(ctx, "admin@example.com", staffPassword); err != nil || in.Session.PendingTOTP {
			t.Errorf("sign in after disabling: got %v, pending %v, want a full session", err, in != nil && in.Session.PendingTOTP)
		}
	})
}

// TestTOTPEnableEndsOtherSessions: turning two-factor sign-in on ends
// every other session of the user, as a password change does, and keeps
// the one that turned it on: a session opened with a stolen password
// does not outlive the second factor meant to stop its holder.
func TestTOTPEnableEndsOtherSessions(t *testing.T) {
	usersEngine(t, func(t *testing.T, env *apitest.Env) {
		ctx := context.Background()
		m := env.Onboard()
		newStaff(t, env, m, "staff@example.com", paylink.RoleStaff)
		newStaff(t, env, m, "colleague@example.com", paylink.RoleStaff)
		mine, _ := env.Service.SignIn(ctx, "staff@example.com", staffPassword)
		other, _ := env.Service.SignIn(ctx, "staff@example.com", staffPassword)
		colleague, _ := env.Service.SignIn(ctx, "colleague@example.com", staffPassword)
		ss, err := env.Service.StaffSession(ctx, mine.Token, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		secret, err := env.Service.BeginTOTP(ctx, ss)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := env.Service.ConfirmTOTP(ctx, ss, paylink.TOTPCode(secret, env.Clock.Now()), staffPassword); err != nil {
			t.Fatal(err)
		}
		if _, err := env.Service.StaffSession(ctx, other.Token, time.Hour); code(err) != paylink.CodeSessionExpired {
			t.Errorf("the user's other session: got %v, want %s", err, paylink.CodeSessionExpired)
		}
		for name, tok := range map[string]string{"the session that turned it on": mine.Token, "another user's session": colleague.Token} {
			if _, err := env.Service.StaffSession(ctx, tok, time.Hour); err != nil {
				t.Errorf("%s: got %v, want it kept", name, err)
			}
		}
	})
}

func TestTOTPCodeRFC6238(t *testing.T) {
	// RFC 6238 appendix B, SHA-1, truncated to 6 digits.
	secret := []byte("12345678901234567890")
	tests := []struct {
		unix int64
		want string
	}{{59, "287082"}, {1111111109, "081804"}, {1234567890, "005924"}, {2000000000, "279037"}}
	for _, tt := range tests {
		if got := paylink.TOTPCode(secret, time.Unix(tt.unix, 0)); got != tt.want {
			t.Errorf("at %d: got %s, want %s", tt.unix, got, tt.want)
		}
	}
}

func TestDailyVolume(t *testing.T) {
	usersEngine(t, func(t *testing.T, env *apitest.Env) {
		m := env.Onboard()
		for _, c := range []struct{ card, amount string }{{"4111111111111111", "10.00"}, {"4000000000000002", "5.00"}} {
			env.Post("/v5/purchase", m, env.CardPurchase(m, c.card, c.amount))
		}
		// A hold is authorised; a direct debit not yet cleared has no
		// answer: neither counts as a decline (they did before).
		env.Post("/v5/purchase", m, env.CardPurchase(m, "4111111111111111", "3.00", func(b map[string]any) {
			apitest.Set(b, "purchase.should_service_apply_pre_authorisation", true)
		}))
		debit := env.Post("/v5/direct_debit", m, map[string]any{"token": map[string]any{"company_token": m.Creds.CompanyToken, "transaction_token": env.TransactionToken(m)},
			"customer":     map[string]any{"ip_address": "203.0.113.7", "timezone": "UTC", "accepted_terms_conditions": "true"},
			"bank_account": map[string]any{"bsb": "062-000", "number": "123456789", "holder_name": "Jo Citizen"},
			"purchase":     map[string]any{"amount": "4.00", "currency": "AUD"}})
		if debit.Str("purchase.status") != "PENDING" {
			t.Fatalf("direct debit: got %d %s, want PENDING", debit.Status, debit.Raw)
		}
		env.Clock.Advance(-48 * time.Hour)
		env.Post("/v5/purchase", m, env.CardPurchase(m, "4111111111111111", "2.50"))
		env.Clock.Advance(48 * time.Hour)
		other := env.Onboard()
		env.Post("/v5/purchase", other, env.CardPurchase(other, "4111111111111111", "99.00"))
		daily, err := env.Service.DailyVolume(context.Background(), m.Merchant, 30)
		if err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			days                   int
			count, approved, gross int64
			rate                   string
		}{{1, 4, 2, 1000, "66.7"}, {7, 5, 3, 1250, "75.0"}}
		for _, tt := range tests {
			p := paylink.SumVolume(daily, env.Clock.Now(), tt.days)
			if len(p) != 1 || p[0].Count != tt.count || p[0].Approved != tt.approved || p[0].Gross != tt.gross || p[0].ApprovalRate() != tt.rate {
				t.Errorf("%d days: got %+v, want count %d approved %d gross %d rate %s", tt.days, p, tt.count, tt.approved, tt.gross, tt.rate)
			}
		}
	})
}

func TestCleanupSessions(t *testing.T) {
	usersEngine(t, func(t *testing.T, env *apitest.Env) {
		ctx := context.Background()
		m := env.Onboard()
		newStaff(t, env, m, "staff@example.com", paylink.RoleStaff)
		old, _ := env.Service.SignIn(ctx, "staff@example.com", staffPassword)
		env.Clock.Advance(paylink.SessionMaxAge - time.Hour)
		fresh, _ := env.Service.SignIn(ctx, "staff@example.com", staffPassword)
		env.Clock.Advance(time.Hour)
		n, err := env.Service.CleanupSessions(ctx)
		if err != nil || n != 1 {
			t.Fatalf("clean-up: got %d, %v, want 1 session deleted", n, err)
		}
		if _, err := env.Service.StaffSession(ctx, old.Token, paylink.SessionMaxAge); code(err) != paylink.CodeSessionExpired {
			t.Errorf("old session: got %v, want %s", err, paylink.CodeSessionExpired)
		}
		if _, err := env.Service.StaffSession(ctx, fresh.Token, paylink.SessionMaxAge); err != nil {
			t.Errorf("fresh session: %v", err)
		}
	})
}

func TestInvitesListedAndRevoked(t *testing.T) {
	usersEngine(t, func(t *testing.T, env *apitest.Env) {
		ctx := context.Background()
		m, other := env.Onboard(), env.Onboard()
		admin := newStaff(t, env, m, "admin@example.com", paylink.RoleAdmin)
		staff := newStaff(t, env, m, "staff@example.com", paylink.RoleStaff)
		stranger := newStaff(t, env, other, "admin@other.example", paylink.RoleAdmin)
		invite := func(email string) (string, *paylink.Invite) {
			t.Helper()
			token, inv, err := env.Service.CreateInvite(ctx, admin, email, paylink.RoleStaff)
			if err != nil {
				t.Fatal(err)
			}
			env.Clock.Advance(time.Second)
			return token, inv
		}
		emails := func(actor *paylink.User) []string {
			t.Helper()
			list, err := env.Service.Invites(ctx, actor)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, inv := range list {
				out = append(out, inv.Email)
			}
			return out
		}
		_, expiring := invite("expiring@example.com")
		env.Clock.Advance(paylink.InviteTTL - time.Minute)
		used, _ := invite("used@example.com")
		if _, err := env.Service.AcceptInvite(ctx, used, staffPassword); err != nil {
			t.Fatal(err)
		}
		revoked, toRevoke := invite("revoked@example.com")
		_, kept := invite("kept@example.com")
		env.Clock.Advance(time.Minute)

		if got, want := emails(admin), []string{"kept@example.com", "revoked@example.com"}; !slices.Equal(got, want) {
			t.Errorf("outstanding invites: got %v, want %v (newest first, not used, not expired)", got, want)
		}
		if got := emails(stranger); len(got) != 0 {
			t.Errorf("another merchant's admin sees %v, want none", got)
		}
		if _, err := env.Service.Invites(ctx, staff); code(err) != paylink.CodePermissionDenied {
			t.Errorf("staff lists invites: got %v, want %s", err, paylink.CodePermissionDenied)
		}
		refused := []struct {
			name  string
			actor *paylink.User
			id    string
			want  string
		}{
			{"by staff", staff, toRevoke.ID(), paylink.CodePermissionDenied},
			{"by another merchant's admin", stranger, toRevoke.ID(), paylink.CodeNotFound},
			{"an id that is not hex", admin, "not-hex", paylink.CodeNotFound},
			{"a short id", admin, toRevoke.ID()[:10], paylink.CodeNotFound},
			{"an expired invite's", admin, expiring.ID(), ""},
		}
		for _, tt := range refused {
			if _, err := env.Service.RevokeInvite(ctx, tt.actor, tt.id); code(err) != tt.want {
				t.Errorf("revoke %s: got %v, want %q", tt.name, err, tt.want)
			}
		}
		inv, err := env.Service.RevokeInvite(ctx, admin, toRevoke.ID())
		if err != nil || inv.Email != "revoked@example.com" {
			t.Fatalf("revoke: got %+v, %v", inv, err)
		}
		if _, err := env.Service.RevokeInvite(ctx, admin, toRevoke.ID()); code(err) != paylink.CodeNotFound {
			t.Errorf("revoke twice: got %v, want %s", err, paylink.CodeNotFound)
		}
		if _, err := env.Service.AcceptInvite(ctx, revoked, staffPassword); code(err) != paylink.CodeInviteInvalid {
			t.Errorf("accept a revoked invite: got %v, want %s", err, paylink.CodeInviteInvalid)
		}
		if got, want := emails(admin), []string{kept.Email}; !slices.Equal(got, want) {
			t.Errorf("outstanding invites after the revocation: got %v, want %v", got, want)
		}
		rows, err := env.Service.AuditLog(ctx, paylink.AuditFilter{MerchantID: m.ID, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		var revokes []string
		for _, r := range rows {
			if r.Action == paylink.AuditInviteRevoke {
				revokes = append(revokes, r.ObjectID)
			}
		}
		slices.Sort(revokes)
		if want := []string{"expiring@example.com", "revoked@example.com"}; !slices.Equal(revokes, want) {
			t.Errorf("audited revocations: got %v, want %v", revokes, want)
		}
	})
}

// TestInviteEndsWithItsAdmin: an invite is its maker's authority. An
// admin removed or demoted loses the unused invites they made (audited
// as revoked, with why), so a removed admin cannot come back through an
// invite to another address of theirs; an invite whose maker is gone
// without that clean-up (one left from before it) is refused at
// acceptance, deleted and audited as a denied acceptance. Another
// admin's invites keep working.
func TestInviteEndsWithItsAdmin(t *testing.T) {
	usersEngine(t, func(t *testing.T, env *apitest.Env) {
		ctx := context.Background()
		m := env.Onboard()
		owner := newStaff(t, env, m, "owner@example.com", paylink.RoleAdmin)
		removed := newStaff(t, env, m, "removed@example.com", paylink.RoleAdmin)
		demoted := newStaff(t, env, m, "demoted@example.com", paylink.RoleAdmin)
		left := newStaff(t, env, m, "left@example.com", paylink.RoleAdmin)
		invite := func(by *paylink.User, email string) string { return mustInvite(t, env, by, email, paylink.RoleAdmin) }
		byRemoved, byDemoted := invite(removed, "removed.backup@example.com"), invite(demoted, "demoted.backup@example.com")
		byLeft, byOwner := invite(left, "left.backup@example.com"), invite(owner, "new@example.com")
		if err := env.Service.RemoveUser(ctx, owner, removed.ID); err != nil {
			t.Fatal(err)
		}
		if err := env.Service.ChangeRole(ctx, owner, demoted.ID, paylink.RoleStaff); err != nil {
			t.Fatal(err)
		}
		// left's row goes without RemoveUser's clean-up, as a removal
		// before this rule did: its invite is still in the table.
		if err := env.Store.Update(ctx, func(tx paylink.Tx) error { return tx.DeleteUser(m.ID, left.ID) }); err != nil {
			t.Fatal(err)
		}
		for _, token := range []string{byRemoved, byDemoted, byLeft} {
			if _, err := env.Service.InviteByToken(ctx, token); code(err) != paylink.CodeInviteInvalid {
				t.Errorf("invite page: got %v, want %s", err, paylink.CodeInviteInvalid)
			}
			if u, err := env.Service.AcceptInvite(ctx, token, staffPassword); code(err) != paylink.CodeInviteInvalid {
				t.Errorf("accept: got %+v, %v, want %s", u, err, paylink.CodeInviteInvalid)
			}
		}
		list, err := env.Service.Invites(ctx, owner)
		if err != nil || len(list) != 1 || list[0].Email != "new@example.com" {
			t.Errorf("outstanding invites: got %d (%v), want only new@example.com's", len(list), err)
		}
		if u, err := env.Service.AcceptInvite(ctx, byOwner, staffPassword); err != nil || u.Role != paylink.RoleAdmin {
			t.Errorf("the owner's invite: got %+v, %v, want a new admin", u, err)
		}
		rows, err := env.Service.AuditLog(ctx, paylink.AuditFilter{MerchantID: m.ID, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range rows {
			if r.Action == paylink.AuditInviteRevoke || r.Action == paylink.AuditInviteAccept {
				got = append(got, fmt.Sprintf("%s %s %s %s", r.Action, r.ObjectID, r.Outcome, r.Detail))
			}
		}
		want := []string{
			"user.invite_revoke removed.backup@example.com success inviter_removed",
			"user.invite_revoke demoted.backup@example.com success inviter_demoted",
			"user.invite_accept left.backup@example.com denied inviter_removed",
		}
		if len(got) != 4 || !slices.Equal(got[:3], want) {
			t.Errorf("audit rows: got %q, want %q and the owner's invite accepted", got, want)
		}
	})
}

// TestInviteEndsWithItsInvitee: invites of one address can be made more
// than once; once one is accepted the others are refused (the address is
// taken), and removing a member deletes the unused invites of their
// address, each audited as revoked with why. The twenty-fifth stop's dashboard sweep found a
// removed member coming back, as admin, through a second invite left
// open (it was refused while they were a member, and kept).
func TestInviteEndsWithItsInvitee(t *testing.T) {
	usersEngine(t, func(t *testing.T, env *apitest.Env) {
		ctx := context.Background()
		m := env.Onboard()
		owner := newStaff(t, env, m, "owner@example.com", paylink.RoleAdmin)
		invite := func(email string, role paylink.Role) string { return mustInvite(t, env, owner, email, role) }
		asStaff, asAdmin := invite("twice@example.com", paylink.RoleStaff), invite("Twice@Example.com", paylink.RoleAdmin)
		// An invite of an address made before its member was added
		// another way (the CLI), as one left from before this rule.
		before := invite("cli@example.com", paylink.RoleAdmin)
		cli := newStaff(t, env, m, "cli@example.com", paylink.RoleViewer)
		joined, err := env.Service.AcceptInvite(ctx, asStaff, staffPassword)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := env.Service.AcceptInvite(ctx, asAdmin, staffPassword); code(err) != paylink.CodeEmailTaken {
			t.Errorf("a member's other invite: got %v, want %s", err, paylink.CodeEmailTaken)
		}
		for _, u := range []*paylink.User{joined, cli} {
			if err := env.Service.RemoveUser(ctx, owner, u.ID); err != nil {
				t.Fatal(err)
			}
		}
		for _, token := range []string{asAdmin, before} {
			if u, err := env.Service.AcceptInvite(ctx, token, staffPassword); code(err) != paylink.CodeInviteInvalid {
				t.Errorf("a removed member's other invite: got %+v, %v, want %s", u, err, paylink.CodeInviteInvalid)
			}
		}
		if list, err := env.Service.Invites(ctx, owner); err != nil || len(list) != 0 {
			t.Errorf("outstanding invites: got %d (%v), want none", len(list), err)
		}
		rows, err := env.Service.AuditLog(ctx, paylink.AuditFilter{MerchantID: m.ID, Action: paylink.AuditInviteRevoke, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range rows {
			got = append(got, r.ObjectID+" "+r.Detail)
		}
		slices.Sort(got)
		if want := []string{"cli@example.com invitee_removed", "twice@example.com invitee_removed"}; !slices.Equal(got, want) {
			t.Errorf("audited revocations: got %q, want %q", got, want)
		}
	})
}

// TestRemovingAMemberRacesTheirOtherInvite: a member removed while an
// invite of their address is accepted: the removal succeeds, the
// acceptance is refused as used or taken, never an internal error, and
// the member stays removed. (The verification sweep found a deadlock on
// PostgreSQL in a third of the rounds: the removal deleted the user and
// then the invites, the acceptance locked its invite and then inserted
// the user.)
func TestRemovingAMemberRacesTheirOtherInvite(t *testing.T) {
	usersEngine(t, func(t *testing.T, env *apitest.Env) {
		ctx := context.Background()
		m := env.Onboard()
		owner := newStaff(t, env, m, "owner@example.com", paylink.RoleAdmin)
		for i := range 12 {
			email := fmt.Sprintf("member%d@example.com", i)
			token := mustInvite(t, env, owner, email, paylink.RoleAdmin)
			member := newStaff(t, env, m, email, paylink.RoleViewer) // added another way meanwhile
			var wg sync.WaitGroup
			var removeErr, acceptErr error
			wg.Go(func() { removeErr = env.Service.RemoveUser(ctx, owner, member.ID) })
			wg.Go(func() { _, acceptErr = env.Service.AcceptInvite(ctx, token, staffPassword) })
			wg.Wait()
			if removeErr != nil {
				t.Errorf("round %d: remove: %v", i, removeErr)
			}
			if c := code(acceptErr); c != paylink.CodeInviteInvalid && c != paylink.CodeEmailTaken {
				t.Errorf("round %d: accept: got %v, want %s or %s", i, acceptErr, paylink.CodeInviteInvalid, paylink.CodeEmailTaken)
			}
			if _, err := env.Service.SignIn(ctx, email, staffPassword); err == nil {
				t.Errorf("round %d: the removed member signs in", i)
			}
		}
	})
}

// TestTwoInvitesOfOneAddressAcceptedAtOnce: of two invites of one
// address accepted at once, one makes the member and the other is told
// the address is taken, never an internal error (deleting the other
// invites at acceptance, considered for the removal rule above, would
// deadlock the two on PostgreSQL).
func TestTwoInvitesOfOneAddressAcceptedAtOnce(t *testing.T) {
	usersEngine(t, func(t *testing.T, env *apitest.Env) {
		ctx := context.Background()
		m := env.Onboard()
		owner := newStaff(t, env, m, "owner@example.com", paylink.RoleAdmin)
		for i := range 8 {
			email := fmt.Sprintf("both%d@example.com", i)
			tokens := [2]string{mustInvite(t, env, owner, email, paylink.RoleStaff), mustInvite(t, env, owner, email, paylink.RoleStaff)}
			var errs [2]error
			var wg sync.WaitGroup
			for j, token := range tokens {
				wg.Go(func() { _, errs[j] = env.Service.AcceptInvite(ctx, token, staffPassword) })
			}
			wg.Wait()
			if (errs[0] == nil) == (errs[1] == nil) || code(errs[0])+code(errs[1]) != paylink.CodeEmailTaken {
				t.Errorf("round %d: got %v and %v, want one member made and the other %s", i, errs[0], errs[1], paylink.CodeEmailTaken)
			}
		}
	})
}

func TestInviteAcceptedOnceUnderRace(t *testing.T) {
	usersEngine(t, func(t *testing.T, env *apitest.Env) {
		ctx := context.Background()
		m := env.Onboard()
		admin := newStaff(t, env, m, "admin@example.com", paylink.RoleAdmin)
		token, _, err := env.Service.CreateInvite(ctx, admin, "new@example.com", paylink.RoleStaff)
		if err != nil {
			t.Fatal(err)
		}
		const n = 8
		errs := make(chan error, n)
		for range n {
			go func() {
				_, err := env.Service.AcceptInvite(ctx, token, staffPassword)
				errs <- err
			}()
		}
		ok := 0
		for range n {
			switch err := <-errs; code(err) {
			case "":
				ok++
			case paylink.CodeInviteInvalid, paylink.CodeEmailTaken:
			default:
				t.Errorf("accept: got %v, want success or %s", err, paylink.CodeInviteInvalid)
			}
		}
		if ok != 1 {
			t.Errorf("accepted %d times, want once", ok)
		}
	})
}
