package paylink

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"sync"
	"time"
)

// Sign-in throttling. Every check of a staff user's secret (a password
// at sign-in or on the account page, a second factor) is an attempt:
// it counts as a failure of the email, and of the source address, until
// it succeeds.

// The audit detail of a failed attempt: which secret was wrong.
const (
	factorPassword = "password"
	factorTOTP     = "totp"
)

// attempt runs check, a check of a secret for email (u is its user, nil
// for an unknown email), under the sign-in throttle. The failure is
// recorded and committed before check runs, and the throttle then counts
// it with the others: of any number of concurrent attempts, across
// instances, at most SignInFailureLimit for one email are checked and
// fail within SignInFailureWindow (each attempt that passed the count saw
// every other that passed before it). A check that succeeds, or ends in
// an error, takes its failure back; a wrong one keeps it and is audited
// with factor as its detail. Second-factor codes (factorTOTP) are counted
// apart from passwords (failureBucket), from every address together.
func (s *Service) attempt(ctx context.Context, email string, u *User, factor string, check func() (bool, error)) (bool, error) {
	b := bucketOf(factor)
	// Refused without a write when already locked out, counting this
	// attempt as its reservation would: a flood of refused attempts costs
	// reads only.
	if err := s.refuseLockedOut(ctx, b, email, u, 1); err != nil {
		return false, err
	}
	id, err := s.reserveFailure(ctx, b, email)
	if err != nil {
		return false, err
	}
	ok, err := s.checkReserved(ctx, b, email, u, check)
	if ok || err != nil {
		if taken := s.takeBackFailure(ctx, id); taken != nil && err == nil {
			err = taken
		}
		return ok, err
	}
	return false, s.auditFailure(ctx, u, factor)
}

// checkReserved runs check unless the email or the source address is
// past its limit, counting the failure just reserved.
func (s *Service) checkReserved(ctx context.Context, b failureBucket, email string, u *User, check func() (bool, error)) (bool, error) {
	if err := s.refuseLockedOut(ctx, b, email, u, 0); err != nil {
		return false, err
	}
	ok, err := check()
	if err != nil {
		var refused *Error
		if errors.As(err, &refused) {
			return false, refused
		}
		return false, Internal("check sign-in secret", err)
	}
	return ok, nil
}

// refuseLockedOut is the refusal of an attempt for email when it or the
// source address is past its limit, with extra failures not yet recorded
// counted (throttled), nil when the attempt may go on. A refusal is
// audited once per lock-out (auditLockout).
func (s *Service) refuseLockedOut(ctx context.Context, b failureBucket, email string, u *User, extra int) error {
	var locked *lockout
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		locked, err = s.throttled(ctx, tx, b, email, extra)
		return err
	})
	if err != nil {
		return Internal("count sign-in failures", err)
	}
	if locked != nil {
		s.auditLockout(ctx, u, locked)
		return locked.refusal
	}
	return nil
}

// reserveFailure records a failure for email in bucket b from the
// request's source address and returns its id.
func (s *Service) reserveFailure(ctx context.Context, b failureBucket, email string) (int64, error) {
	var id int64
	now := s.now()
	err := s.store.Update(ctx, func(tx Tx) error {
		var err error
		id, err = tx.AddSignInFailure(s.failureKey(b, email), throttleAddress(ActorFrom(ctx).IP), now, now.Add(-SignInFailureWindow))
		return err
	})
	if err != nil {
		return 0, Internal("record sign-in attempt", err)
	}
	return id, nil
}

// failureKey is how a sign-in failure names the email typed: a MAC of
// it in lower case under the vault's master key, so that the failures
// table never holds what was typed into the email box (now and then a
// password), not even as a plain hash one could test guesses against.
func (s *Service) failureKey(b failureBucket, email string) string {
	return hexString(s.vault.MAC(b.keyInput(email)))
}

// failureKeys are email's failure keys under every master key the vault
// holds: during a master key rotation, instances on the old and the new
// active key record an email's failures under different keys, and each
// counts both, so the limit holds across them.
func (s *Service) failureKeys(b failureBucket, email string) []string {
	macs := s.vault.MACs(b.keyInput(email))
	keys := make([]string, len(macs))
	for i, mac := range macs {
		keys[i] = hexString(mac)
	}
	return keys
}

// failureBucket is what a failure is counted with: a password's, or a
// second factor's.
type failureBucket struct {
	label string // what the failure key authenticates before the email
	// anywhere counts the email's failures from every address against
	// SignInFailureLimit: a second factor is reached only with the right
	// password, so a stranger cannot lock its owner out by failing it, and
	// its guesses are not multiplied by the guesser's networks.
	anywhere bool
}

// The failure buckets: passwords (the key's label from before second
// factors were counted apart, so that failures recorded then still
// count), and second-factor codes.
var (
	passwordFailures     = failureBucket{label: "sign-in failure"}
	secondFactorFailures = failureBucket{label: "second-factor failure", anywhere: true}
)

// bucketOf is the bucket of a check of factor.
func bucketOf(factor string) failureBucket {
	if factor == factorTOTP {
		return secondFactorFailures
	}
	return passwordFailures
}

// keyInput is what an email's failure key in b authenticates.
func (b failureBucket) keyInput(email string) []byte {
	return []byte(b.label + "\x00" + strings.ToLower(strings.TrimSpace(email)))
}

// takeBackFailure deletes a reserved failure that did not happen.
func (s *Service) takeBackFailure(ctx context.Context, id int64) error {
	if err := s.store.Update(ctx, func(tx Tx) error { return tx.DeleteSignInFailure(id) }); err != nil {
		return Internal("take back sign-in attempt", err)
	}
	return nil
}

// throttled is the refusal of an attempt for email whose reserved
// failure makes more than SignInFailureLimit within SignInFailureWindow
// for the email in bucket b from the request's source address (from
// anywhere when the address is unknown, or b counts from anywhere), more
// than SignInEmailFailureLimit for the
// email from all addresses, or more than SignInIPFailureLimit for the
// address whatever the email; nil when it may go on. extra failures not
// yet recorded are added to each count (an attempt before it reserves
// its own). Failures count for unknown emails too, so no answer tells
// whether an email has an account.
func (s *Service) throttled(ctx context.Context, tx Tx, b failureBucket, email string, extra int) (*lockout, error) {
	since := s.now().Add(-SignInFailureWindow)
	ip := throttleAddress(ActorFrom(ctx).IP)
	all, fromIP, err := tx.CountSignInFailures(s.failureKeys(b, email), ip, since)
	if err != nil {
		return nil, err
	}
	all, fromIP = all+extra, fromIP+extra
	if ip == "" || b.anywhere {
		fromIP = all
	}
	emailKey := s.failureKey(b, email)
	if fromIP > SignInFailureLimit || all > SignInEmailFailureLimit {
		lk := &lockout{limit: lockoutEmailAddress, key: emailKey + " " + ip}
		switch {
		case b.anywhere:
			lk.limit, lk.key = lockoutSecondFactor, emailKey
		case fromIP <= SignInFailureLimit:
			lk.limit, lk.key = lockoutEmail, emailKey
		}
		lk.refusal = Errorf(KindRateLimited, CodeSignInThrottled, "too many failed sign-ins for this email; try again in %d minutes",
			int(SignInFailureWindow/time.Minute))
		return lk, nil
	}
	if ip == "" {
		return nil, nil
	}
	n, err := tx.CountSignInFailuresFromIP(ip, since)
	if err != nil {
		return nil, err
	}
	n += extra
	if n > SignInIPFailureLimit {
		return &lockout{limit: lockoutAddress, key: ip,
			refusal: Errorf(KindRateLimited, CodeSignInThrottled, "too many failed sign-ins from this network address; try again in %d minutes",
				int(SignInFailureWindow/time.Minute))}, nil
	}
	return nil, nil
}

// The limits a lock-out names, the detail of its audit row
// (limit=email_address) and of its log line.
const (
	lockoutEmailAddress = "email_address" // SignInFailureLimit for one email from one address (from anywhere when it is unknown)
	lockoutEmail        = "email"         // SignInEmailFailureLimit for one email from all addresses
	lockoutAddress      = "address"       // SignInIPFailureLimit for one address, whatever the emails
	lockoutSecondFactor = "second_factor" // SignInFailureLimit of second-factor codes for one email
)

// lockout is a sign-in refused by the throttle.
type lockout struct {
	refusal error  // the 429 the caller gets
	limit   string // which limit refused it: lockoutEmail...
	// key names the lock-out in lockoutLog: the limit's email (its
	// failure key, never the email typed), address, or both.
	key string
}

// auditLockout writes one audit row and one WARN line for a lock-out,
// the first time one of its attempts is refused within
// SignInFailureWindow on this instance: a flood of refused attempts
// costs no writes. Like every sign-in row, it holds no secret, and not
// the email typed (the user's id when the email has one). An error
// writing the row is logged, never shown: the caller's answer stays 429.
func (s *Service) auditLockout(ctx context.Context, u *User, lk *lockout) {
	if !s.lockouts.first(lk.limit+" "+lk.key, s.now()) {
		return
	}
	detail := "limit=" + lk.limit
	ctx, e := signInAudit(ctx, u, AuditEvent{Action: AuditSignInThrottled, Detail: detail}, detail+" unknown_email")
	s.log.WarnContext(ctx, "dashboard sign-in locked out: attempts are refused (429) until failures leave the window",
		"limit", lk.limit, "user_id", e.ObjectID, "merchant_id", e.MerchantID, "source_ip", ActorFrom(ctx).IP,
		"window", SignInFailureWindow.String())
	if err := s.store.Update(ctx, func(tx Tx) error { return s.audit(ctx, tx, e) }); err != nil {
		s.log.WarnContext(ctx, "audit sign-in lock-out", "limit", lk.limit, "err", err)
	}
}

// lockoutLogSize bounds the lock-outs an instance remembers: past it
// (that many distinct lock-outs within SignInFailureWindow, an attack
// from many addresses on many emails) further lock-outs are refused
// without their row, each failure before them audited all the same.
const lockoutLogSize = 10000

// lockoutLog remembers the lock-outs audited within the last
// SignInFailureWindow. The zero value is ready; it is safe for
// concurrent use.
type lockoutLog struct {
	mu   sync.Mutex
	seen map[string]time.Time // lock-out key -> when its row was written
}

// first reports whether the lock-out named key was not audited within
// SignInFailureWindow before now, and remembers it as audited at now.
func (l *lockoutLog) first(key string, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if at, ok := l.seen[key]; ok && now.Sub(at) < SignInFailureWindow {
		return false
	}
	if len(l.seen) >= lockoutLogSize {
		for k, at := range l.seen {
			if now.Sub(at) >= SignInFailureWindow {
				delete(l.seen, k)
			}
		}
		if len(l.seen) >= lockoutLogSize {
			return false
		}
	}
	if l.seen == nil {
		l.seen = map[string]time.Time{}
	}
	l.seen[key] = now
	return true
}

// throttleAddress is the source address as the sign-in throttle counts
// it, the network of one client: an IPv4 address (an IPv4-mapped IPv6
// one too) as itself, an IPv6 address by its /48 prefix
// ("2001:db8:1::/48"). One client is given a whole /64 at least, a home a
// /56 and a free tunnel a /48, and can pick any address or subnet in it:
// counting by anything narrower would give one client thousands of
// budgets, enough to lock any staff email out or to try thousands of
// emails. Text that is no address is kept as it is.
func throttleAddress(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return ip
	}
	if a = a.Unmap(); a.Is4() {
		return a.String()
	}
	p, err := a.WithZone("").Prefix(throttlePrefix)
	if err != nil {
		return ip
	}
	return p.String()
}

// throttlePrefix is the IPv6 prefix length the throttle counts a client
// by (throttleAddress).
const throttlePrefix = 48

// auditFailure writes the audit row of a failed attempt.
func (s *Service) auditFailure(ctx context.Context, u *User, factor string) error {
	ctx, e := signInAudit(ctx, u, AuditEvent{Action: AuditSignInFailed, Detail: factor}, "unknown_email")
	if err := s.store.Update(ctx, func(tx Tx) error { return s.audit(ctx, tx, e) }); err != nil {
		return Internal("audit sign-in failure", err)
	}
	return nil
}

// signInAudit completes e, a denied sign-in's audit row, and its actor:
// the user when the email has one, otherwise an anonymous staff actor
// and the detail unknownDetail.
func signInAudit(ctx context.Context, u *User, e AuditEvent, unknownDetail string) (context.Context, AuditEvent) {
	e.ObjectType, e.Outcome = ObjectUser, OutcomeDenied
	if u != nil {
		e.MerchantID, e.ObjectID = u.MerchantID, u.ID
		return staffActor(ctx, u), e
	}
	a := ActorFrom(ctx)
	a.Kind, a.ID = ActorStaff, ""
	e.Detail = unknownDetail
	return WithActor(ctx, a), e
}
