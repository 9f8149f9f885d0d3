package paylink

import (
	"context"
	"errors"
	"slices"
	"strings"
)

// SettingsChange is an operator's change to a merchant's webhook
// settings; a nil field is left as it is.
type SettingsChange struct {
	WebhookURL     *string
	WebhookDomains []string // replaces the whitelist when not nil
	WebhookRetries *bool
	WebhookLegacy  *bool
}

// UpdateSettings applies c to merchant mid (the whitelist normalised and
// the company webhook's host kept on it, as at onboarding) and audits what changed, in
// the same transaction: one settings row naming the changed settings
// (never their values: a URL may carry a merchant's own secret), and a
// whitelist row with the new host list when the whitelist changed. A
// change that leaves the whitelist as it is drops the stored entries a
// later rule refuses (they match no host), rather than refusing a change
// the operator did not ask for. A stored company URL a later rule
// refuses is not dropped (it is where the merchant's webhooks go): the
// refusal names webhook.url, and a change sending a new URL goes
// through.
func (s *Service) UpdateSettings(ctx context.Context, mid string, c SettingsChange) (*Merchant, error) {
	var m *Merchant
	err := s.store.Update(ctx, func(tx Tx) error {
		if err := tx.LockMerchantSettings(mid); err != nil {
			return err
		}
		var err error
		if m, err = tx.Merchant(mid); err != nil {
			return err
		}
		before := m.Settings.Webhook
		if c.WebhookDomains == nil {
			m.Settings.Webhook.Domains = validHosts(m.Settings.Webhook.Domains)
		}
		c.apply(&m.Settings.Webhook)
		// The whitelist follows onboarding's one rule: entries normalised,
		// and the company webhook's host always on it.
		if m.Settings.Webhook.Domains, err = normalizeWhitelist(m.Settings.Webhook.URL, m.Settings.Webhook.Domains); err != nil {
			return err
		}
		changed := changedWebhookSettings(before, m.Settings.Webhook)
		if len(changed) == 0 {
			return nil
		}
		if err := tx.UpdateMerchantSettings(mid, m.Settings); err != nil {
			return err
		}
		return s.auditSettings(ctx, tx, m, changed)
	})
	if errors.Is(err, ErrNotFound) {
		return nil, Errorf(KindNotFound, CodeNotFound, "no merchant %s", mid)
	}
	if err != nil {
		return nil, asServiceError("update settings", err)
	}
	return m, nil
}

// apply writes the change's non-nil fields into w.
func (c SettingsChange) apply(w *WebhookConfig) {
	if c.WebhookURL != nil {
		w.URL = *c.WebhookURL
	}
	if c.WebhookDomains != nil {
		w.Domains = slices.Clone(c.WebhookDomains)
	}
	if c.WebhookRetries != nil {
		w.Retries = *c.WebhookRetries
	}
	if c.WebhookLegacy != nil {
		w.Legacy = *c.WebhookLegacy
	}
}

// changedWebhookSettings names the settings that differ, in a fixed order.
func changedWebhookSettings(a, b WebhookConfig) []string {
	var out []string
	for _, f := range []struct {
		name string
		diff bool
	}{
		{"webhook.url", a.URL != b.URL},
		{"webhook.domains", !slices.Equal(a.Domains, b.Domains)},
		{"webhook.retries", a.Retries != b.Retries},
		{"webhook.legacy", a.Legacy != b.Legacy},
	} {
		if f.diff {
			out = append(out, f.name)
		}
	}
	return out
}

// auditSettings records a settings change and, separately, a whitelist
// change (PCI DSS asks for changes to security settings by name).
func (s *Service) auditSettings(ctx context.Context, tx Tx, m *Merchant, changed []string) error {
	err := s.audit(ctx, tx, AuditEvent{MerchantID: m.ID, Action: AuditSettingsUpdate, ObjectType: ObjectMerchant,
		ObjectID: m.ID, Outcome: OutcomeSuccess, Detail: strings.Join(changed, ",")})
	if err != nil || !slices.Contains(changed, "webhook.domains") {
		return err
	}
	return s.audit(ctx, tx, AuditEvent{MerchantID: m.ID, Action: AuditWhitelistUpdate, ObjectType: ObjectMerchant,
		ObjectID: m.ID, Outcome: OutcomeSuccess, Detail: strings.Join(m.Settings.Webhook.Domains, ",")})
}

// Merchant loads merchant mid (operator commands).
func (s *Service) Merchant(ctx context.Context, mid string) (*Merchant, error) {
	var m *Merchant
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		m, err = tx.Merchant(mid)
		return err
	})
	if errors.Is(err, ErrNotFound) {
		return nil, Errorf(KindNotFound, CodeNotFound, "no merchant %s", mid)
	}
	if err != nil {
		return nil, Internal("load merchant", err)
	}
	return m, nil
}
