package paylink

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// A transaction token is stateless: issuing one writes nothing. Its 128
// alphanumeric characters carry a version, its expiry and a random nonce,
// authenticated together with the merchant's id by a MAC under the
// vault's token key:
//
//	"1" | expiry, Unix µs, 14 hex | nonce, 49 alphanumeric | MAC, 64 hex
//
// A forged, altered or another merchant's token fails the MAC; an
// expired one fails its own expiry. Single use is enforced where the
// token is spent: its hash is inserted into the spent tokens in the same
// database transaction as the work it authorises, so a second use (or a
// race of two) finds the row and the work and the spending commit or roll
// back together. Spent tokens are kept until they would have expired
// anyway (plus an hour); after that their MAC'd expiry refuses them.
const (
	tokenVersion     = '1'
	tokenExpiryLen   = 14
	tokenMACLen      = 64
	tokenNonceLength = TokenLength - 1 - tokenExpiryLen - tokenMACLen
	tokenSignedLen   = TokenLength - tokenMACLen
)

// IssueTransactionToken makes a single-use transaction token for m.
func (s *Service) IssueTransactionToken(ctx context.Context, m *Merchant, companyToken string) (string, error) {
	if err := s.CheckCompanyToken(ctx, m, companyToken); err != nil {
		return "", err
	}
	nonce, err := s.randomToken(tokenNonceLength)
	if err != nil {
		return "", Internal("issue transaction token", err)
	}
	expires := s.now().Add(s.cfg.TransactionTokenTTL).UnixMicro()
	signed := make([]byte, 0, TokenLength)
	signed = append(signed, tokenVersion)
	signed = appendHex14(signed, expires)
	signed = append(signed, nonce...)
	return string(hex.AppendEncode(signed, s.vault.MAC(tokenMACInput(m.ID, signed)))), nil
}

// appendHex14 appends n as 14 lowercase hex digits, zero padded.
func appendHex14(b []byte, n int64) []byte {
	h := strconv.FormatInt(n, 16)
	for range tokenExpiryLen - len(h) {
		b = append(b, '0')
	}
	return append(b, h...)
}

// tokenMACInput is what a token's MAC covers: the merchant it was issued
// to and everything in the token before the MAC.
func tokenMACInput(merchantID string, signed []byte) []byte {
	in := make([]byte, 0, 32+len(merchantID)+len(signed))
	in = append(in, "paylink transaction token\x00"...)
	in = append(in, merchantID...)
	in = append(in, 0)
	return append(in, signed...)
}

// tokenExpiry checks a token's form and MAC for merchant merchantID and
// returns the expiry it carries; ok is false for anything that merchant
// was not issued.
func (s *Service) tokenExpiry(merchantID, token string) (time.Time, bool) {
	// Only the lowercase spelling the token was issued in (LooksLikeToken):
	// hex decoding takes either case, and a token is spent under the hash
	// of its exact text, so a respelled MAC would be a fresh token that
	// passes.
	if !LooksLikeToken(token) {
		return time.Time{}, false
	}
	mac, err := hex.DecodeString(token[tokenSignedLen:])
	if err != nil || !s.vault.CheckMAC(tokenMACInput(merchantID, []byte(token[:tokenSignedLen])), mac) {
		return time.Time{}, false
	}
	micros, err := strconv.ParseInt(token[1:1+tokenExpiryLen], 16, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.UnixMicro(micros), true
}

// isLowerHex reports whether s is written in the digits 0-9 and a-f only.
func isLowerHex(s string) bool {
	for i := range len(s) {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// consumeToken uses up a transaction token inside tx, so that the token is
// spent if and only if the work it authorises commits.
func (s *Service) consumeToken(tx Tx, m *Merchant, token, ref string) error {
	if token == "" {
		return &Error{Kind: KindInvalid, Code: CodeInvalidRequest, Message: "token.transaction_token is required",
			Fields: map[string]string{"token.transaction_token": "is required"}}
	}
	expires, ok := s.tokenExpiry(m.ID, token)
	if !ok {
		return Errorf(KindInvalid, CodeTransactionTokenInvalid, "the transaction token is not valid: obtain one from POST /v5/transaction_token")
	}
	if !s.now().Before(expires) {
		return expiredToken(tx, token, expires)
	}
	// A spent token is ErrTokenSpent, from this call or (PostgreSQL) from
	// the transaction's next round trip or commit; asServiceError answers
	// it in either case.
	if err := tx.SpendTransactionToken(HashSecret(token), expires, ref); err != nil {
		return fmt.Errorf("consume transaction token: %w", err)
	}
	return nil
}

// expiredToken answers a token past its expiry: ErrTokenSpent when an
// operation spent it (still known within an hour of its expiry), which
// updateSpending answers as transaction_token_used naming that operation,
// since it may be the client's own earlier attempt whose answer was lost;
// else transaction_token_expired.
func expiredToken(tx Tx, token string, expires time.Time) error {
	_, err := tx.TransactionTokenSpender(HashSecret(token), expires)
	switch {
	case errors.Is(err, ErrNotFound):
		return Errorf(KindInvalid, CodeTransactionTokenExpired, "the transaction token has expired: obtain a new one")
	case err != nil:
		return fmt.Errorf("read the spender of an expired transaction token: %w", err)
	}
	return fmt.Errorf("consume transaction token: %w", ErrTokenSpent)
}

// LooksLikeToken reports whether s is written as a transaction token is
// (its version, length and lower-case MAC), without checking its MAC: it
// may still be forged, altered or expired.
func LooksLikeToken(s string) bool {
	return len(s) == TokenLength && s[0] == tokenVersion && isLowerHex(s[tokenSignedLen:])
}

// releaseToken gives back, inside tx, the transaction token that
// operation ref spent ("" for none): the operation ended having changed
// nothing (a capture or cancel the processor could not be asked), so the
// client may retry it unchanged, as the 503 it gets says.
func (s *Service) releaseToken(tx Tx, merchantID, token, ref string) error {
	if token == "" {
		return nil
	}
	expires, ok := s.tokenExpiry(merchantID, token)
	if !ok {
		return nil
	}
	if err := tx.ReleaseTransactionToken(HashSecret(token), expires, ref); err != nil {
		return fmt.Errorf("release transaction token: %w", err)
	}
	return nil
}

// errTokenUsed answers a transaction token spent already (asServiceError).
var errTokenUsed = Errorf(KindConflict, CodeTransactionTokenUsed, "the transaction token has already been used: obtain a new one for each operation")

// tokenUsedBy answers a transaction token that operation ref spent: the
// client looks that operation up before paying again, since it may be
// the client's own earlier attempt whose answer did not arrive.
func tokenUsedBy(ref string) error {
	return &Error{Kind: KindConflict, Code: CodeTransactionTokenUsed,
		Message: "the transaction token has already been used, by " + ref +
			": look that operation up (GET /v5/purchase/{reference} or /v5/refund/{reference}) before trying again with a new token",
		Fields: map[string]string{"token.transaction_token": "spent by " + ref}}
}

// claimContext is ctx without its cancellation, bounded by
// MaxRequestTime, for an operation's first commit, the one that claims it
// (spends its token, reserves a refund, claims a hold or a payment link).
// A client that hangs up during that commit must not stop the operation
// there: the claim may have committed, and what it claimed is then taken
// to the processor (on a context detached the same way, callContext) and
// recorded, instead of waiting PROCESSING for recovery to fail it minutes
// later. An operation once asked for runs to its end, as an answer
// received from the processor is recorded whether or not anyone reads it.
func claimContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), MaxRequestTime)
}

// updateSpending is store.Update for an operation, ref, that spends the
// transaction token token in fn; "" when it spends none (a dashboard
// action, a link payment). Two answers are then checked against the
// token's spender, read again in a new transaction, which waits for one
// still spending the token (a COMMIT the server is still carrying out):
//   - an unreachable database may have committed a transaction whose
//     answer was lost (a connection cut during COMMIT): if ref spent the
//     token, the transaction committed, and updateSpending reports
//     success rather than a 503 that says nothing happened;
//   - a token already spent is refused naming who spent it (tokenUsedBy):
//     another operation, or this one (a capture retried names its hold).
//
// When the spender cannot be read, the first answer stands. The update
// runs on claimContext: a client hanging up does not cut it short.
func (s *Service) updateSpending(ctx context.Context, m *Merchant, token, ref string, fn func(Tx) error) error {
	ctx, cancel := claimContext(ctx)
	defer cancel()
	err := s.store.Update(ctx, fn)
	inDoubt, spent := errors.Is(err, ErrUnavailable), errors.Is(err, ErrTokenSpent)
	if token == "" || !inDoubt && !spent {
		return err
	}
	expires, ok := s.tokenExpiry(m.ID, token)
	if !ok {
		return err
	}
	var by string
	if rerr := s.store.Update(ctx, func(tx Tx) error {
		var err error
		by, err = tx.TransactionTokenSpender(HashSecret(token), expires)
		return err
	}); rerr != nil {
		return err
	}
	switch {
	case inDoubt && by == ref:
		s.log.WarnContext(ctx, "the database's answer to a commit was lost, and the transaction had committed", "reference", ref, "err", err)
		return nil
	case spent && by != "":
		return tokenUsedBy(by) // a capture retried names its own hold
	}
	return err
}

// CleanupTransactionTokens forgets spent tokens that expired over an hour
// ago: their own expiry refuses them now. It returns how many went.
func (s *Service) CleanupTransactionTokens(ctx context.Context) (int64, error) {
	var n int64
	err := s.store.Update(ctx, func(tx Tx) error {
		var err error
		n, err = tx.DeleteSpentTransactionTokens(s.now().Add(-time.Hour))
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("clean up transaction tokens: %w", err)
	}
	return n, nil
}
