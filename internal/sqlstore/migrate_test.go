package sqlstore

import (
	"context"
	"database/sql"
	"path/filepath"
	"slices"
	"testing"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/pgtest"
)

// TestDashboardMigrationFillsExistingRows upgrades a database with a
// merchant and a transaction from the schema before 16 to 16, on both engines: the
// merchant's key gets the id Go computes (paylink.APIKeyID), and the
// transaction's email (lower case) and card last four become searchable.
func TestDashboardMigrationFillsExistingRows(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		s, err := openSQLite(filepath.Join(t.TempDir(), "old.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		testUpgrade(t, s, s.writer.db)
	})
	t.Run("postgres", func(t *testing.T) {
		srv, err := pgtest.Start()
		if err != nil {
			pgtest.Skip(t, err)
		}
		defer srv.Stop()
		dsn, err := srv.NewDatabase(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		s, err := openPostgres(dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		testUpgrade(t, s, s.db)
	})
}

func testUpgrade(t *testing.T, s *Store, db *sql.DB) {
	ctx := context.Background()
	ms, err := loadMigrations(s.engine)
	if err != nil {
		t.Fatal(err)
	}
	before := slices.IndexFunc(ms, func(m migration) bool { return m.version >= 16 })
	if err := s.migrateOn(ctx, db, ms[:before]); err != nil {
		t.Fatal(err)
	}
	hash := paylink.HashSecret("pl_sk_before_the_upgrade")
	_, err = db.ExecContext(ctx, `INSERT INTO merchants (id, name, trading_name, country, api_key_hash, company_token_hash, settings, created_at)
		VALUES ('MOLD', 'Old', 'Old', 'AU', $1, $2, '{}', 1)`, hash, paylink.HashSecret("company"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.ExecContext(ctx, `INSERT INTO transactions (reference, merchant_id, payment_type, channel, status, version, currency,
		amount, surcharge, fee, total, pre_auth, pre_auth_amount, refunded, created_at, updated_at, details)
		VALUES ('pr_old', 'MOLD', 'CreditCard', 'API', 'APPROVED', 1, 'AUD', 100, 0, 0, 100, $1, 0, 0, 1, 1, $2)`,
		false, `{"customer":{"email":" Jo@Example.COM "},"card":{"masked":"411111******1234"}}`)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.migrateOn(ctx, db, ms); err != nil {
		t.Fatal(err)
	}
	err = s.View(ctx, func(tx paylink.Tx) error {
		k, err := tx.APIKeyByHash(hash)
		if err != nil {
			return err
		}
		if k.ID != paylink.APIKeyID(hash) || k.MerchantID != "MOLD" || !k.ExpiresAt.IsZero() {
			t.Errorf("got key %+v, want %s of MOLD, current", k, paylink.APIKeyID(hash))
		}
		for _, q := range []paylink.PaymentQuery{
			{Search: "x", SearchEmail: "jo@example.com"},
			{Search: "1234", SearchEmail: "1234", SearchLast4: "1234"},
		} {
			q.MerchantID, q.Limit = "MOLD", 10
			rows, err := tx.SearchTransactions(q)
			if err != nil {
				return err
			}
			if len(rows) != 1 || rows[0].Reference != "pr_old" {
				t.Errorf("search %+v: got %d rows, want pr_old", q, len(rows))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
