package paylink

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// IssueTransactionToken creates a single-use transaction token for m.
func (s *Service) IssueTransactionToken(ctx context.Context, m *Merchant, companyToken string) (string, error) {
	if err := s.CheckCompanyToken(ctx, m, companyToken); err != nil {
		return "", err
	}
	tok, err := s.token(TokenLength)
	if err != nil {
		return "", Internal("issue transaction token", err)
	}
	now := s.now()
	t := &TransactionToken{Hash: HashSecret(tok), MerchantID: m.ID, CreatedAt: now, ExpiresAt: now.Add(s.cfg.TransactionTokenTTL)}
	if err := s.store.Update(ctx, func(tx Tx) error { return tx.CreateTransactionToken(t) }); err != nil {
		return "", Internal("issue transaction token", err)
	}
	return tok, nil
}

// consumeToken uses up a transaction token inside tx, so that the token is
// spent if and only if the work it authorises commits.
func (s *Service) consumeToken(tx Tx, m *Merchant, token string) error {
	if token == "" {
		return &Error{Kind: KindInvalid, Code: CodeInvalidRequest, Message: "token.transaction_token is required",
			Fields: map[string]string{"token.transaction_token": "is required"}}
	}
	found, err := tx.ConsumeTransactionToken(HashSecret(token), m.ID, s.now())
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrNotFound) || (found != nil && found.MerchantID != m.ID):
		return Errorf(KindInvalid, CodeTransactionTokenInvalid, "the transaction token is not valid: obtain one from POST /v5/transaction_token")
	case errors.Is(err, ErrConflict) && !found.UsedAt.IsZero():
		return Errorf(KindConflict, CodeTransactionTokenUsed, "the transaction token has already been used: obtain a new one for each operation")
	case errors.Is(err, ErrConflict):
		return Errorf(KindInvalid, CodeTransactionTokenExpired, "the transaction token has expired: obtain a new one")
	}
	return Internal("consume transaction token", err)
}

// CleanupTransactionTokens deletes tokens that expired over an hour ago;
// they can no longer authorise anything. It returns how many went.
func (s *Service) CleanupTransactionTokens(ctx context.Context) (int64, error) {
	var n int64
	err := s.store.Update(ctx, func(tx Tx) error {
		var err error
		n, err = tx.DeleteExpiredTransactionTokens(s.now().Add(-time.Hour))
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("clean up transaction tokens: %w", err)
	}
	return n, nil
}
