package sqlstore

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/paylink/paylink"
)

// Dashboard users, sessions, invites and sign-in failures (migration 0015).

const userColumns = `id, merchant_id, email, role, password_hash, totp_key_id, totp_sealed, totp_enabled, recovery_codes,
	totp_last_step, version, created_at, updated_at`

func scanUser(row interface{ Scan(...any) error }) (*paylink.User, error) {
	var u paylink.User
	var role, codes string
	var created, updated int64
	err := row.Scan(&u.ID, &u.MerchantID, &u.Email, &role, &u.PasswordHash, &u.TOTP.KeyID, &u.TOTP.Ciphertext,
		&u.TOTPEnabled, &codes, &u.TOTPLastStep, &u.Version, &created, &updated)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(codes), &u.RecoveryCodes); err != nil {
		return nil, fmt.Errorf("user %s recovery codes: %w", u.ID, err)
	}
	u.Role = paylink.Role(role)
	u.CreatedAt, u.UpdatedAt = time.UnixMicro(created).UTC(), time.UnixMicro(updated).UTC()
	return &u, nil
}

// recoveryJSON encodes recovery code hashes, [] for none.
func recoveryJSON(codes []string) (string, error) {
	if codes == nil {
		codes = []string{}
	}
	return toJSON(codes)
}

// CreateUser inserts a user; ErrConflict when the email is taken.
func (t *tx) CreateUser(u *paylink.User) error {
	codes, err := recoveryJSON(u.RecoveryCodes)
	if err != nil {
		return err
	}
	return t.execOne("insert user", `INSERT INTO users (`+userColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) ON CONFLICT (email) DO NOTHING`,
		u.ID, u.MerchantID, u.Email, string(u.Role), u.PasswordHash, u.TOTP.KeyID, u.TOTP.Ciphertext, u.TOTPEnabled,
		codes, u.TOTPLastStep, u.Version, u.CreatedAt.UnixMicro(), u.UpdatedAt.UnixMicro())
}

// User loads a user of the merchant.
func (t *tx) User(merchantID, id string) (*paylink.User, error) {
	u, err := scanUser(t.q.QueryRowContext(t.ctx, `SELECT `+userColumns+` FROM users WHERE id = $1 AND merchant_id = $2`,
		id, merchantID))
	if err != nil {
		return nil, notFound("load user", err)
	}
	return u, nil
}

// UserByEmail loads the user with the email.
func (t *tx) UserByEmail(email string) (*paylink.User, error) {
	u, err := scanUser(t.q.QueryRowContext(t.ctx, `SELECT `+userColumns+` FROM users WHERE email = $1`, email))
	if err != nil {
		return nil, notFound("load user by email", err)
	}
	return u, nil
}

// Users lists a merchant's users by email.
func (t *tx) Users(merchantID string) ([]*paylink.User, error) {
	rows, err := t.q.QueryContext(t.ctx, `SELECT `+userColumns+` FROM users WHERE merchant_id = $1 ORDER BY email`, merchantID)
	if err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	defer rows.Close()
	var out []*paylink.User
	for rows.Next() {
		u, err := scanUser(rows)
		if err != nil {
			return nil, fmt.Errorf("list users: %w", err)
		}
		out = append(out, u)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	return out, nil
}

// UpdateUser writes a user's mutable fields if the stored user is still
// at u.Version, and moves it and u to the next version; ErrConflict when
// the user changed or went since u was read.
func (t *tx) UpdateUser(u *paylink.User) error {
	codes, err := recoveryJSON(u.RecoveryCodes)
	if err != nil {
		return err
	}
	err = t.execOne("update user", `UPDATE users SET role = $1, password_hash = $2, totp_key_id = $3, totp_sealed = $4,
		totp_enabled = $5, recovery_codes = $6, totp_last_step = $7, updated_at = $8, version = version + 1
		WHERE id = $9 AND merchant_id = $10 AND version = $11`,
		string(u.Role), u.PasswordHash, u.TOTP.KeyID, u.TOTP.Ciphertext, u.TOTPEnabled, codes, u.TOTPLastStep,
		u.UpdatedAt.UnixMicro(), u.ID, u.MerchantID, u.Version)
	if err == nil {
		u.Version++
	}
	return err
}

// DeleteUser deletes a user of the merchant with its sessions.
func (t *tx) DeleteUser(merchantID, id string) error {
	if _, err := t.exec(`DELETE FROM user_sessions WHERE user_id = $1 AND merchant_id = $2`, id, merchantID); err != nil {
		return fmt.Errorf("delete user sessions: %w", err)
	}
	return t.execOne("delete user", `DELETE FROM users WHERE id = $1 AND merchant_id = $2`, id, merchantID)
}

const sessionColumns = `id_hash, user_id, merchant_id, csrf, pending_totp, created_at, last_seen_at, expires_at`

// CreateSession inserts a session.
func (t *tx) CreateSession(s *paylink.Session) error {
	_, err := t.exec(`INSERT INTO user_sessions (`+sessionColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		s.IDHash, s.UserID, s.MerchantID, s.CSRF, s.PendingTOTP, s.CreatedAt.UnixMicro(), s.LastSeenAt.UnixMicro(),
		s.ExpiresAt.UnixMicro())
	if err != nil {
		return fmt.Errorf("insert session: %w", err)
	}
	return nil
}

// Session loads a session by the hash of its id.
func (t *tx) Session(idHash []byte) (*paylink.Session, error) {
	var s paylink.Session
	var created, seen, expires int64
	err := t.q.QueryRowContext(t.ctx, `SELECT `+sessionColumns+` FROM user_sessions WHERE id_hash = $1`, idHash).Scan(
		&s.IDHash, &s.UserID, &s.MerchantID, &s.CSRF, &s.PendingTOTP, &created, &seen, &expires)
	if err != nil {
		return nil, notFound("load session", err)
	}
	s.CreatedAt, s.LastSeenAt, s.ExpiresAt = time.UnixMicro(created).UTC(), time.UnixMicro(seen).UTC(), time.UnixMicro(expires).UTC()
	return &s, nil
}

// TouchSession records a session's last use and second-factor state.
func (t *tx) TouchSession(idHash []byte, lastSeen time.Time, pendingTOTP bool) error {
	return t.execOne("touch session", `UPDATE user_sessions SET last_seen_at = $1, pending_totp = $2 WHERE id_hash = $3`,
		lastSeen.UnixMicro(), pendingTOTP, idHash)
}

// DeleteSession deletes a session; deleting a missing one is not an error.
func (t *tx) DeleteSession(idHash []byte) error {
	if _, err := t.exec(`DELETE FROM user_sessions WHERE id_hash = $1`, idHash); err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	return nil
}

// DeleteUserSessions deletes every session of a user.
func (t *tx) DeleteUserSessions(userID string) error {
	if _, err := t.exec(`DELETE FROM user_sessions WHERE user_id = $1`, userID); err != nil {
		return fmt.Errorf("delete user sessions: %w", err)
	}
	return nil
}

// DeleteOtherUserSessions deletes every session of a user but one.
func (t *tx) DeleteOtherUserSessions(userID string, keep []byte) error {
	if _, err := t.exec(`DELETE FROM user_sessions WHERE user_id = $1 AND id_hash <> $2`, userID, keep); err != nil {
		return fmt.Errorf("delete other user sessions: %w", err)
	}
	return nil
}

// CreateInvite inserts an invite.
func (t *tx) CreateInvite(i *paylink.Invite) error {
	_, err := t.exec(`INSERT INTO user_invites (token_hash, merchant_id, email, role, created_by, created_at, expires_at, used_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, i.TokenHash, i.MerchantID, i.Email, string(i.Role), i.CreatedBy,
		i.CreatedAt.UnixMicro(), i.ExpiresAt.UnixMicro(), micros(i.UsedAt))
	if err != nil {
		return fmt.Errorf("insert invite: %w", err)
	}
	return nil
}

// Invite loads an invite by the hash of its token.
func (t *tx) Invite(tokenHash []byte) (*paylink.Invite, error) {
	i, err := scanInvite(t.q.QueryRowContext(t.ctx, `SELECT `+inviteColumns+` FROM user_invites WHERE token_hash = $1`, tokenHash))
	if err != nil {
		return nil, notFound("load invite", err)
	}
	return i, nil
}

// inviteColumns are the columns scanInvite reads, in its order.
const inviteColumns = `token_hash, merchant_id, email, role, created_by, created_at, expires_at, used_at`

// scanInvite reads one invite row.
func scanInvite(r interface{ Scan(...any) error }) (*paylink.Invite, error) {
	var i paylink.Invite
	var role string
	var created, expires int64
	var used sql.NullInt64
	if err := r.Scan(&i.TokenHash, &i.MerchantID, &i.Email, &role, &i.CreatedBy, &created, &expires, &used); err != nil {
		return nil, err
	}
	i.Role = paylink.Role(role)
	i.CreatedAt, i.ExpiresAt, i.UsedAt = time.UnixMicro(created).UTC(), time.UnixMicro(expires).UTC(), fromMicros(used)
	return &i, nil
}

// Invites lists a merchant's unused invites that have not expired at
// now, newest first.
func (t *tx) Invites(merchantID string, now time.Time) ([]*paylink.Invite, error) {
	rows, err := t.q.QueryContext(t.ctx, `SELECT `+inviteColumns+` FROM user_invites
		WHERE merchant_id = $1 AND used_at IS NULL AND expires_at > $2 ORDER BY created_at DESC, email`,
		merchantID, now.UnixMicro())
	if err != nil {
		return nil, fmt.Errorf("list invites: %w", err)
	}
	defer rows.Close()
	var out []*paylink.Invite
	for rows.Next() {
		i, err := scanInvite(rows)
		if err != nil {
			return nil, fmt.Errorf("list invites: %w", err)
		}
		out = append(out, i)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list invites: %w", err)
	}
	return out, nil
}

// DeleteInvite deletes an unused invite of the merchant.
func (t *tx) DeleteInvite(merchantID string, tokenHash []byte) error {
	err := t.execOne("delete invite", `DELETE FROM user_invites WHERE token_hash = $1 AND merchant_id = $2 AND used_at IS NULL`,
		tokenHash, merchantID)
	if errors.Is(err, paylink.ErrConflict) {
		return paylink.ErrNotFound
	}
	return err
}

// UseInvite marks an unused, unexpired invite used.
func (t *tx) UseInvite(tokenHash []byte, now time.Time) error {
	return t.execOne("use invite", `UPDATE user_invites SET used_at = $1
		WHERE token_hash = $2 AND used_at IS NULL AND expires_at > $3`, now.UnixMicro(), tokenHash, now.UnixMicro())
}

// AddSignInFailure records a failure and prunes the email's and the
// address's old ones.
func (t *tx) AddSignInFailure(email, ip string, at, pruneBefore time.Time) (int64, error) {
	if _, err := t.exec(`DELETE FROM signin_failures WHERE email = $1 AND at < $2`, email, pruneBefore.UnixMicro()); err != nil {
		return 0, fmt.Errorf("prune sign-in failures: %w", err)
	}
	if ip != "" {
		if _, err := t.exec(`DELETE FROM signin_failures WHERE ip = $1 AND at < $2`, ip, pruneBefore.UnixMicro()); err != nil {
			return 0, fmt.Errorf("prune sign-in failures: %w", err)
		}
	}
	var id int64
	err := t.q.QueryRowContext(t.ctx, `INSERT INTO signin_failures (email, ip, at) VALUES ($1, $2, $3) RETURNING id`,
		email, ip, at.UnixMicro()).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("insert sign-in failure: %w", err)
	}
	return id, nil
}

// DeleteSignInFailure deletes one failure.
func (t *tx) DeleteSignInFailure(id int64) error {
	if _, err := t.exec(`DELETE FROM signin_failures WHERE id = $1`, id); err != nil {
		return fmt.Errorf("delete sign-in failure: %w", err)
	}
	return nil
}

// CountSignInFailures counts the failures since a time recorded under
// any of an email's keys (one per master key): all, and those from ip.
func (t *tx) CountSignInFailures(emails []string, ip string, since time.Time) (all, fromIP int, err error) {
	if len(emails) == 0 {
		return 0, 0, nil
	}
	var q strings.Builder
	fmt.Fprintf(&q, `SELECT COUNT(*), COALESCE(SUM(CASE WHEN ip = $%d THEN 1 ELSE 0 END), 0) FROM signin_failures WHERE email IN `,
		len(emails)+2)
	writeRows(&q, 1, len(emails), nil)
	fmt.Fprintf(&q, ` AND at >= $%d`, len(emails)+1)
	args := make([]any, 0, len(emails)+2)
	for _, e := range emails {
		args = append(args, e)
	}
	err = t.q.QueryRowContext(t.ctx, q.String(), append(args, since.UnixMicro(), ip)...).Scan(&all, &fromIP)
	if err != nil {
		return 0, 0, fmt.Errorf("count sign-in failures: %w", err)
	}
	return all, fromIP, nil
}

// CountSignInFailuresFromIP counts an address's failures since a time.
func (t *tx) CountSignInFailuresFromIP(ip string, since time.Time) (int, error) {
	var n int
	err := t.q.QueryRowContext(t.ctx, `SELECT COUNT(*) FROM signin_failures WHERE ip = $1 AND at >= $2`,
		ip, since.UnixMicro()).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count sign-in failures from an address: %w", err)
	}
	return n, nil
}

// DeleteExpiredSessions deletes ended sessions and old sign-in failures.
func (t *tx) DeleteExpiredSessions(now, failuresBefore time.Time) (int64, error) {
	res, err := t.exec(`DELETE FROM user_sessions WHERE expires_at <= $1`, now.UnixMicro())
	if err != nil {
		return 0, fmt.Errorf("delete expired sessions: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("delete expired sessions: %w", err)
	}
	if _, err := t.exec(`DELETE FROM signin_failures WHERE at < $1`, failuresBefore.UnixMicro()); err != nil {
		return 0, fmt.Errorf("delete old sign-in failures: %w", err)
	}
	return n, nil
}
