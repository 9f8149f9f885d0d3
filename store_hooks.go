package paylink

import (
	"context"
	"time"
)

// After a commit: the Store the Service uses wraps the engine's
// (wakingStore), so that what an Update wrote is acted on once it is
// committed, and never when it rolls back: the webhook dispatcher is
// woken for new outbox rows, the merchants cached for authentication
// (authcache.go) are forgotten when one changed, and outcomes are counted
// by the Observer.

// markingTx notes whether an Update wrote outbox rows, so that the
// dispatcher is woken once they are committed, and holds what is to be
// observed once the Update commits (outcomes counted by an Observer).
type markingTx struct {
	Tx
	wrote           bool
	merchantChanged bool // a merchant's settings or API key were written
	committed       []func()
}

// afterCommit runs fn once the Update has committed; never if it fails.
func (m *markingTx) afterCommit(fn func()) { m.committed = append(m.committed, fn) }

func (m *markingTx) CreateWebhookDelivery(d *WebhookDelivery) error {
	m.wrote = true
	return m.Tx.CreateWebhookDelivery(d)
}

func (m *markingTx) ResendWebhookDelivery(id string, now time.Time) error {
	m.wrote = true
	return m.Tx.ResendWebhookDelivery(id, now)
}

func (m *markingTx) UpdateMerchantSettings(id string, settings MerchantSettings) error {
	m.merchantChanged = true
	return m.Tx.UpdateMerchantSettings(id, settings)
}

func (m *markingTx) RollAPIKey(k *APIKey, oldUntil time.Time) error {
	m.merchantChanged = true
	return m.Tx.RollAPIKey(k, oldUntil)
}

// wakingStore wakes the dispatcher after an Update that wrote outbox rows
// has committed, and makes the Service forget the merchants it cached
// after one that changed a merchant (whether or not it reports that it
// committed: a commit whose answer was lost may still have happened).
type wakingStore struct {
	Store
	wake   func()
	forget func()
}

func (w wakingStore) Update(ctx context.Context, fn func(Tx) error) error {
	mt := &markingTx{}
	err := w.Store.Update(ctx, func(tx Tx) error {
		mt.Tx, mt.wrote, mt.merchantChanged, mt.committed = tx, false, false, nil
		return fn(mt)
	})
	if mt.merchantChanged {
		w.forget()
	}
	if err != nil {
		return err
	}
	if mt.wrote {
		w.wake()
	}
	for _, f := range mt.committed {
		f()
	}
	return nil
}

// WakeWebhooks asks the dispatcher to look for due deliveries now.
func (s *Service) WakeWebhooks() {
	select {
	case s.webhookWake <- struct{}{}:
	default: // a wake-up is already pending
	}
}

// WebhookWake is signalled after deliveries were committed; the
// dispatcher of this process waits on it between sweeps.
func (s *Service) WebhookWake() <-chan struct{} { return s.webhookWake }
