package storetest

import (
	"errors"
	"slices"
	"testing"

	"github.com/paylink/paylink"
)

// testSecretRotation checks what key rotation relies on: every kind of
// sealed secret not under the active key is listed, page by page, and a
// re-seal is a compare-and-set on the old ciphertext.
func testSecretRotation(t *testing.T, s paylink.Store) {
	old := paylink.SealedSecret{KeyID: "k1", Ciphertext: []byte{1, 2, 3}}
	fresh := paylink.SealedSecret{KeyID: "k2", Ciphertext: []byte{4, 5, 6}}
	m := NewMerchant(t, s)
	m.Settings.Webhook.Secrets = []paylink.SealedSecret{fresh, old}
	stale, current, legacyFP, wiped := newCard(m, "a"+m.ID, true), newCard(m, "b"+m.ID, true), newCard(m, "c"+m.ID, true), newCard(m, "d"+m.ID, true)
	current.Sealed, current.FingerprintKeyID = fresh, "k2"
	legacyFP.Sealed = fresh                                              // sealed under k2, fingerprint from before (key id "")
	wiped.Sealed = paylink.SealedSecret{KeyID: "", Ciphertext: []byte{}} // as WipeSpentCards leaves it
	debit := NewTransaction(m, "dd"+m.ID, "", 100)
	debit.Secret = old
	update(t, s, func(tx paylink.Tx) error {
		return errors.Join(tx.UpdateMerchantSettings(m.ID, m.Settings), tx.CreateCard(stale), tx.CreateCard(current),
			tx.CreateCard(legacyFP), tx.CreateCard(wiped), tx.CreateTransaction(debit))
	})
	link := newLink(t, s, m) // tokens under k1
	staff := &paylink.User{ID: "usr_" + m.ID, MerchantID: m.ID, Email: m.ID + "@example.com", Role: paylink.RoleAdmin,
		PasswordHash: "x", TOTP: old, TOTPEnabled: true}
	update(t, s, func(tx paylink.Tx) error { return tx.CreateUser(staff) })

	listed := map[paylink.SecretKind][]string{}
	update(t, s, func(tx paylink.Tx) error {
		for _, kind := range paylink.SecretKinds() {
			for after := ""; ; {
				page, next, err := tx.SecretsToRotate(kind, "k2", after, 1)
				if err != nil {
					return err
				}
				for _, sec := range page {
					listed[kind] = append(listed[kind], sec.ID)
				}
				if next == "" {
					break
				}
				after = next
			}
		}
		return nil
	})
	want := map[paylink.SecretKind][]string{
		paylink.SecretCard:          {stale.Token, legacyFP.Token},
		paylink.SecretDirectDebit:   {debit.Reference},
		paylink.SecretLinkTokens:    {link.ID},
		paylink.SecretWebhookSecret: {m.ID},
		paylink.SecretTOTP:          {staff.ID},
	}
	for kind, ids := range want {
		if !slices.Equal(listed[kind], ids) {
			t.Errorf("%s to rotate: got %v, want %v", kind, listed[kind], ids)
		}
	}
	countIs := func(want int64) {
		t.Helper()
		view(t, s, func(tx paylink.Tx) error {
			if n, err := tx.CountSecretsToRotate("k2"); err != nil || n != want {
				t.Errorf("count to rotate: got %d, %v; want %d", n, err, want)
			}
			return nil
		})
	}
	countIs(6)

	resealed := paylink.SealedSecret{KeyID: "k2", Ciphertext: []byte{7, 8, 9}}
	update(t, s, func(tx paylink.Tx) error {
		secrets := []paylink.StoredSecret{
			{Kind: paylink.SecretCard, ID: stale.Token, Sealed: resealed, Fingerprint: "fp2", FingerprintKeyID: "k2"},
			{Kind: paylink.SecretCard, ID: legacyFP.Token, Sealed: fresh, Fingerprint: "fp3", FingerprintKeyID: "k2"},
			{Kind: paylink.SecretDirectDebit, ID: debit.Reference, Sealed: resealed},
			{Kind: paylink.SecretLinkTokens, ID: link.ID, Sealed: resealed},
			{Kind: paylink.SecretWebhookSecret, ID: m.ID, Index: 1, Sealed: resealed},
			{Kind: paylink.SecretTOTP, ID: staff.ID, Sealed: resealed},
		}
		for _, sec := range secrets {
			from := old
			if sec.ID == legacyFP.Token {
				from = fresh
			}
			if err := tx.ResealSecret(sec, from); err != nil {
				t.Errorf("reseal %s: %v", sec.Kind, err)
			}
			if sec.ID == legacyFP.Token { // a fingerprint-only update keeps the ciphertext: repeating it is harmless
				continue
			}
			if err := tx.ResealSecret(sec, from); !errors.Is(err, paylink.ErrConflict) {
				t.Errorf("reseal %s again from the old value: got %v, want ErrConflict", sec.Kind, err)
			}
		}
		return nil
	})
	countIs(0)
	view(t, s, func(tx paylink.Tx) error {
		c, err := tx.Card(m.ID, stale.Token)
		if err != nil || c.Sealed.KeyID != "k2" || !slices.Equal(c.Sealed.Ciphertext, resealed.Ciphertext) ||
			c.Info.Fingerprint != "fp2" || c.FingerprintKeyID != "k2" || c.Info.Masked != stale.Info.Masked {
			t.Errorf("re-sealed card: got %+v, %v; want k2, the new ciphertext and fingerprint fp2", c, err)
		}
		got, err := tx.Merchant(m.ID)
		if err != nil {
			return err
		}
		u, err := tx.User(m.ID, staff.ID)
		if err != nil || u.TOTP.KeyID != "k2" || !slices.Equal(u.TOTP.Ciphertext, resealed.Ciphertext) || u.Version != 1 || !u.TOTPEnabled {
			t.Errorf("re-sealed two-factor secret: got %+v, %v; want k2, the new ciphertext, enabled, version 1", u, err)
		}
		secrets := got.Settings.Webhook.Secrets
		if len(secrets) != 2 || secrets[0].KeyID != "k2" || !slices.Equal(secrets[1].Ciphertext, resealed.Ciphertext) ||
			got.Settings.Surcharge != m.Settings.Surcharge {
			t.Errorf("merchant after reseal: got %+v; want secrets [fresh, resealed] and the other settings kept", got.Settings)
		}
		return nil
	})
}
