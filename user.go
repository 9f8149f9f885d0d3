package paylink

import (
	"bufio"
	_ "embed" // the common-password deny list
	"net/mail"
	"strings"
	"time"
	"unicode/utf8"
)

// Dashboard users (staff), their roles and sessions. A staff user belongs
// to exactly one merchant; everything the dashboard shows or does is
// scoped to that merchant. Passwords are hashed at the edge (a
// PasswordHasher, argon2id in internal/passwords) so the domain stays
// stdlib-only; the rules about them (length, deny list) are here.

// Role is what a staff user may do; Can is the one permission table.
type Role string

// Roles.
const (
	RoleAdmin  Role = "admin"  // everything, including team, API keys, webhooks and security settings
	RoleStaff  Role = "staff"  // payments, refunds, captures, cancels, links, virtual terminal
	RoleViewer Role = "viewer" // read only
)

// Roles lists the roles, most powerful first (forms and validation).
func Roles() []Role { return []Role{RoleAdmin, RoleStaff, RoleViewer} }

// Valid reports whether r is a known role.
func (r Role) Valid() bool { return r == RoleAdmin || r == RoleStaff || r == RoleViewer }

// Permission is one thing a dashboard page or action needs.
type Permission string

// Permissions.
const (
	PermView            Permission = "view"             // read payments, links, balances, direct debits
	PermRefund          Permission = "refund"           // refund a payment or direct debit
	PermCapture         Permission = "capture"          // capture a pre-authorisation
	PermCancel          Permission = "cancel"           // cancel a pre-authorisation
	PermLinks           Permission = "links"            // create and cancel payment links
	PermVirtualTerminal Permission = "virtual_terminal" // take a card payment by phone
	PermTeam            Permission = "team"             // invite, change roles, remove users; require 2FA
	PermAPIKeys         Permission = "api_keys"         // roll API keys
	PermWebhooks        Permission = "webhooks"         // webhook URL, domains, secret, resend
	PermAudit           Permission = "audit"            // read the audit log
)

// Can is the permission table, in one place:
//
//	permission        admin staff viewer
//	view                x     x     x
//	refund, capture,    x     x
//	cancel, links,
//	virtual_terminal
//	team, api_keys,     x
//	webhooks, audit
//
// An unknown role may do nothing.
func (r Role) Can(p Permission) bool {
	switch r {
	case RoleAdmin:
		return true
	case RoleStaff:
		switch p {
		case PermView, PermRefund, PermCapture, PermCancel, PermLinks, PermVirtualTerminal:
			return true
		}
	case RoleViewer:
		return p == PermView
	}
	return false
}

// User is a staff user of one merchant.
type User struct {
	ID           string
	MerchantID   string
	Email        string // lower case, unique across merchants (sign-in is by email alone)
	Role         Role
	PasswordHash string // PHC string of the PasswordHasher, never the password
	// TOTP is the sealed two-factor secret, zero when not enrolled;
	// TOTPEnabled says the user confirmed it with a valid code.
	TOTP        SealedSecret
	TOTPEnabled bool
	// RecoveryCodes are SHA-256 hashes (hex) of the unused recovery codes.
	RecoveryCodes []string
	// TOTPLastStep is the time step of the last TOTP code accepted: a
	// code is accepted once.
	TOTPLastStep int64
	// Version moves on with every write: Tx.UpdateUser writes a user
	// only while the stored one is at the version it was read at.
	Version   int64
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Session is a signed-in browser. Only the SHA-256 hash of its id is
// stored, so a leaked table does not let anyone in, and every instance on
// one database serves it.
type Session struct {
	IDHash     []byte
	UserID     string
	MerchantID string
	// CSRF is the session's anti-forgery token, sent in every form.
	CSRF string
	// PendingTOTP is true between a correct password and a correct second
	// factor: such a session opens nothing but the code page.
	PendingTOTP bool
	CreatedAt   time.Time
	LastSeenAt  time.Time
	ExpiresAt   time.Time // absolute end, CreatedAt + SessionMaxAge
}

// Invite is a one-time invitation to join a merchant's team. Only the
// hash of its token is stored; the link is shown once to the admin.
type Invite struct {
	TokenHash  []byte
	MerchantID string
	Email      string
	Role       Role
	CreatedBy  string // user id of the admin
	CreatedAt  time.Time
	ExpiresAt  time.Time
	UsedAt     time.Time // zero while unused
}

// PasswordHasher hashes and checks passwords (argon2id at the edge).
type PasswordHasher interface {
	// Hash returns a self-describing encoded hash of password.
	Hash(password string) (string, error)
	// Verify reports whether password matches encoded; it takes about as
	// long for a wrong password as for a right one.
	Verify(encoded, password string) (bool, error)
}

// Session and sign-in limits.
const (
	// SessionIdleDefault ends a session nobody used for this long (the
	// serve flag --dashboard-idle changes it).
	SessionIdleDefault = 15 * time.Minute
	// SessionMaxAge ends every session this long after sign-in.
	SessionMaxAge = 12 * time.Hour
	// SignInFailureLimit failures for one email from one source address
	// (an IPv6 one by its /48: throttleAddress; every failure when the
	// address is unknown) within SignInFailureWindow refuse further
	// attempts for it from there until the window passes. Counted per
	// address, so that anyone who knows a staff member's email cannot
	// lock them out from wherever they are.
	SignInFailureLimit  = 10
	SignInFailureWindow = 15 * time.Minute
	// SignInEmailFailureLimit failures for one email from all addresses
	// within SignInFailureWindow refuse every attempt for it: a guesser
	// spread over many addresses gets this many guesses, and locking the
	// account out takes SignInEmailFailureLimit/SignInFailureLimit
	// networks.
	SignInEmailFailureLimit = 100
	// SignInIPFailureLimit failures from one source address (an IPv6
	// one by its /48: throttleAddress) within SignInFailureWindow,
	// whatever the emails, refuse further attempts from it until the
	// window passes: a client trying many emails
	// (credential stuffing) stays under the per-email limit. Well above
	// what the people behind one office's address mistype in 15 minutes.
	SignInIPFailureLimit = 50
	// InviteTTL is how long an invite link works.
	InviteTTL = 7 * 24 * time.Hour
	// MinPasswordLength is NIST SP 800-63B's advice for a password set by
	// the user, raised from 8 to 12 as staff can move money.
	MinPasswordLength = 12
	// MaxPasswordLength bounds the work of hashing an attacker's input.
	MaxPasswordLength = 128
	// MaxEmailLength is the longest staff email (RFC 5321's path limit).
	MaxEmailLength = 254
)

// Audit actions and object of the dashboard.
const (
	AuditSignIn       = "user.sign_in"
	AuditSignInFailed = "user.sign_in_failed"
	// AuditSignInThrottled is a sign-in refused by the throttle, written
	// once per lock-out (lockoutLog), not once per refused attempt.
	AuditSignInThrottled = "user.sign_in_throttled"
	AuditSignOut         = "user.sign_out"
	AuditUserCreate      = "user.create"
	AuditInviteCreate    = "user.invite"
	AuditInviteAccept    = "user.invite_accept"
	AuditInviteRevoke    = "user.invite_revoke"
	AuditRoleChange      = "user.role_change"
	AuditUserRemove      = "user.remove"
	AuditPasswordChange  = "user.password_change"
	AuditTOTPEnable      = "user.totp_enable"
	AuditTOTPDisable     = "user.totp_disable"
	AuditRecoveryCodes   = "user.recovery_codes"
	AuditTOTPRequirement = "merchant.totp_requirement"
	ObjectUser           = "user"
)

//go:embed common_passwords.txt
var commonPasswordList string

// CheckPassword applies the password rules: at least MinPasswordLength
// characters, at most MaxPasswordLength bytes, and not one of the most
// common passwords (compared without case, and without the digits and
// symbols people append to meet length rules) nor the user's own email.
func CheckPassword(password, email string) error {
	n := len([]rune(password))
	switch {
	case !utf8.ValidString(password):
		return weakPassword("use text: this password is not UTF-8")
	case n < MinPasswordLength:
		return weakPassword("use at least %d characters", MinPasswordLength)
	case len(password) > MaxPasswordLength:
		return weakPassword("use at most %d characters", MaxPasswordLength)
	case commonPassword(password):
		return weakPassword("this password is among the most commonly used; choose another")
	case containsLocalPart(password, email):
		return weakPassword("do not use your email address in your password")
	}
	return nil
}

// containsLocalPart reports whether password contains the part of email
// before the @, when that part is long enough to mean something.
func containsLocalPart(password, email string) bool {
	local, _, _ := strings.Cut(strings.ToLower(email), "@")
	return len(local) >= 4 && strings.Contains(strings.ToLower(password), local)
}

func weakPassword(format string, args ...any) error {
	e := Errorf(KindInvalid, CodeWeakPassword, format, args...)
	e.Fields = map[string]string{"password": e.Message}
	return e
}

// commonPassword reports whether p, lower-cased and stripped of trailing
// digits and symbols, is on the deny list, or is one character repeated.
func commonPassword(p string) bool {
	p = strings.ToLower(p)
	if _, size := utf8.DecodeRuneInString(p); strings.Count(p, p[:size])*size == len(p) { // one character repeated
		return true
	}
	core := strings.TrimRightFunc(p, func(r rune) bool { return !('a' <= r && r <= 'z') })
	sc := bufio.NewScanner(strings.NewReader(commonPasswordList))
	for sc.Scan() {
		w := strings.TrimSpace(sc.Text())
		if w == "" || strings.HasPrefix(w, "#") {
			continue
		}
		if p == w || (core != "" && core == w) {
			return true
		}
	}
	return false
}

// NormalizeEmail lower-cases and checks a staff user's email address.
// It is stricter than CheckEmail, the customer rule (net/mail's parse
// must give back the address itself: "a..b@example.com" passes one and
// not the other): a staff address is a sign-in name that invites are
// mailed to, where a customer's only loses a receipt when mistyped.
func NormalizeEmail(email string) (string, error) {
	e := strings.ToLower(strings.TrimSpace(email)) // (ToLower would make bytes that are not UTF-8 into U+FFFD)
	a, err := mail.ParseAddress(e)
	if err != nil || a.Address != e || len(e) > MaxEmailLength || !strings.Contains(e, "@") || CheckText(email, MaxEmailLength) != nil {
		return "", &Error{Kind: KindInvalid, Code: CodeInvalidRequest, Message: "email: not a valid email address",
			Fields: map[string]string{"email": "not a valid email address"}}
	}
	if ContainsCardNumber(e) {
		return "", &Error{Kind: KindInvalid, Code: CodeInvalidRequest, Message: "email: " + errCardNumberInText.Error(),
			Fields: map[string]string{"email": errCardNumberInText.Error()}}
	}
	return e, nil
}
