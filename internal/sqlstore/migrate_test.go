package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/pgtest"
)

// TestDashboardMigrationFillsExistingRows upgrades a database with a
// merchant and a transaction from the schema before 16 to 16, on both engines: the
// merchant's key gets the id Go computes (paylink.APIKeyID), and the
// transaction's email (lower case) and card last four become searchable.
func TestDashboardMigrationFillsExistingRows(t *testing.T) {
	onBothEngines(t, testUpgrade)
}

// onBothEngines runs test on a fresh, unmigrated SQLite store and a
// fresh, unmigrated PostgreSQL store, with each store's raw database.
func onBothEngines(t *testing.T, test func(t *testing.T, s *Store, db *sql.DB)) {
	t.Run("sqlite", func(t *testing.T) {
		s, err := openSQLite(filepath.Join(t.TempDir(), "old.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		test(t, s, s.writer.db)
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
		s, err := openPostgres(dsn, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		test(t, s, s.db)
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

// TestLedgerLinesMigrationKeepsLines upgrades a database holding a
// posting and its lines from the schema before 17 to 17, on both
// engines: the lines are all still there, balances sum them, and the
// schema still refuses to change or delete a line.
func TestLedgerLinesMigrationKeepsLines(t *testing.T) {
	onBothEngines(t, testLedgerUpgrade)
}

func testLedgerUpgrade(t *testing.T, s *Store, db *sql.DB) {
	ctx := context.Background()
	ms, err := loadMigrations(s.engine)
	if err != nil {
		t.Fatal(err)
	}
	before := slices.IndexFunc(ms, func(m migration) bool { return m.version >= 17 })
	if err := s.migrateOn(ctx, db, ms[:before]); err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		`INSERT INTO merchants (id, name, trading_name, country, api_key_hash, company_token_hash, settings, created_at)
			VALUES ('MOLD', 'Old', 'Old', 'AU', 'k', 'c', '{}', 1)`,
		`INSERT INTO ledger_postings (id, posting_key, kind, merchant_id, currency, reference, amount, fee, net, moves_balance, created_at)
			VALUES ('bt_1', 'charge:pr_old', 'charge', 'MOLD', 'AUD', 'pr_old', 1000, 30, 970, TRUE, 1)`,
		`INSERT INTO ledger_lines (posting_id, line_no, merchant_id, account, currency, amount, fee_code) VALUES
			('bt_1', 0, 'MOLD', 'acquirer_receivable', 'AUD', 1000, ''),
			('bt_1', 1, 'MOLD', 'merchant_pending', 'AUD', -970, ''),
			('bt_1', 2, 'MOLD', 'fee_revenue', 'AUD', -30, 'card')`,
	} {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.migrateOn(ctx, db, ms); err != nil {
		t.Fatal(err)
	}
	err = s.View(ctx, func(tx paylink.Tx) error {
		ps, err := tx.PostingsOf("pr_old")
		if err != nil {
			return err
		}
		if len(ps) != 1 || len(ps[0].Lines) != 3 || ps[0].Lines[2].FeeCode != "card" {
			t.Errorf("got postings %+v, want bt_1 with its 3 lines", ps)
		}
		got, err := tx.LedgerBalances("MOLD")
		if err != nil {
			return err
		}
		want := []paylink.AccountBalance{{Account: "acquirer_receivable", Currency: "AUD", Amount: 1000},
			{Account: "fee_revenue", Currency: "AUD", Amount: -30}, {Account: "merchant_pending", Currency: "AUD", Amount: -970}}
		if !slices.Equal(got, want) {
			t.Errorf("got balances %+v, want %+v", got, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{`UPDATE ledger_lines SET amount = 0`, `DELETE FROM ledger_lines`} {
		if _, err := db.ExecContext(ctx, stmt); err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s: got %v, want the append-only refusal", stmt, err)
		}
	}
}

// TestVarianceSidesFromAnOlderSchema upgrades a database holding the
// variances of a run stored before 37 (one currency column, no merchant)
// to the latest schema, on both engines: currency_differs gets its
// ledger currency from the payment it names, every kind reads back with
// each side in its own currency and no currency for a side it does not
// have, and the variance of a merchant's payment is that merchant's
// (38), the others no merchant's.
func TestVarianceSidesFromAnOlderSchema(t *testing.T) {
	onBothEngines(t, func(t *testing.T, s *Store, db *sql.DB) {
		ctx := context.Background()
		ms, err := loadMigrations(s.engine)
		if err != nil {
			t.Fatal(err)
		}
		before := slices.IndexFunc(ms, func(m migration) bool { return m.version >= 37 })
		if err := s.migrateOn(ctx, db, ms[:before]); err != nil {
			t.Fatal(err)
		}
		for _, stmt := range []string{
			`INSERT INTO merchants (id, name, trading_name, country, api_key_hash, company_token_hash, settings, created_at)
				VALUES ('MOLD', 'Old', 'Old', 'AU', 'k', 'c', '{}', 1)`,
			`INSERT INTO transactions (reference, merchant_id, payment_type, channel, status, version, currency,
				amount, surcharge, fee, total, pre_auth, pre_auth_amount, refunded, created_at, updated_at, details)
				VALUES ('pr_yen', 'MOLD', 'CreditCard', 'API', 'APPROVED', 1, 'JPY', 1234, 0, 0, 1234, FALSE, 0, 0, 1, 1, '{}')`,
			`INSERT INTO reconciliations (id, file_name, days, matched, variances, created_at) VALUES ('rc_old', 'old.csv', '2026-11-28', 0, 5, 1)`,
			`INSERT INTO reconciliation_variances (reconciliation_id, seq, kind, reference, currency, file_amount, ledger_amount, file_line) VALUES
				('rc_old', 0, 'currency_differs', 'pr_yen', 'KWD', 1234, 1234, 2),
				('rc_old', 1, 'amount_differs', 'pr_aud', 'AUD', 999, 1000, 3),
				('rc_old', 2, 'missing_in_ledger', 'pr_none', 'NZD', 500, 0, 4),
				('rc_old', 3, 'duplicate_in_file', 'pr_aud', 'AUD', 999, 0, 5),
				('rc_old', 4, 'missing_in_file', 'pr_late', 'AUD', 0, 700, 0)`,
		} {
			if _, err := db.ExecContext(ctx, stmt); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.migrateOn(ctx, db, ms); err != nil {
			t.Fatal(err)
		}
		want := []paylink.Variance{
			{Kind: paylink.VarianceCurrency, Reference: "pr_yen", MerchantID: "MOLD", FileCurrency: "KWD", FileAmount: 1234, LedgerCurrency: "JPY", LedgerAmount: 1234, Line: 2},
			{Kind: paylink.VarianceAmount, Reference: "pr_aud", FileCurrency: "AUD", FileAmount: 999, LedgerCurrency: "AUD", LedgerAmount: 1000, Line: 3},
			{Kind: paylink.VarianceMissingInLedger, Reference: "pr_none", FileCurrency: "NZD", FileAmount: 500, Line: 4},
			{Kind: paylink.VarianceDuplicate, Reference: "pr_aud", FileCurrency: "AUD", FileAmount: 999, Line: 5},
			{Kind: paylink.VarianceMissingInFile, Reference: "pr_late", LedgerCurrency: "AUD", LedgerAmount: 700},
		}
		err = s.View(ctx, func(tx paylink.Tx) error {
			runs, err := tx.Reconciliations(1)
			if err != nil {
				return err
			}
			if len(runs) != 1 || !slices.Equal(runs[0].Variances, want) {
				t.Errorf("got %+v, want rc_old with %+v", runs, want)
			}
			mine, err := tx.MerchantVariances("MOLD", 10)
			if err != nil {
				return err
			}
			if len(mine) != 1 || mine[0].Variance != want[0] || mine[0].Run != "rc_old" || mine[0].File != "old.csv" {
				t.Errorf("MOLD's variances: got %+v, want %+v of rc_old alone", mine, want[0])
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}

// TestLinkReturnMigrationDropsPageTokens upgrades a database holding a
// hosted page attempt whose 3-D Secure return address has the link's
// page token in it, and an API purchase's own return address, from the
// schema before 27 to 27, on both engines: the first now returns by the
// link's id, the second is untouched.
func TestLinkReturnMigrationDropsPageTokens(t *testing.T) {
	onBothEngines(t, func(t *testing.T, s *Store, db *sql.DB) {
		ctx := context.Background()
		ms, err := loadMigrations(s.engine)
		if err != nil {
			t.Fatal(err)
		}
		before := slices.IndexFunc(ms, func(m migration) bool { return m.version >= 27 })
		if err := s.migrateOn(ctx, db, ms[:before]); err != nil {
			t.Fatal(err)
		}
		_, err = db.ExecContext(ctx, `INSERT INTO merchants (id, name, trading_name, country, api_key_hash, company_token_hash, settings, created_at)
			VALUES ('MOLD', 'Old', 'Old', 'AU', $1, $2, '{}', 1)`, paylink.HashSecret("key"), paylink.HashSecret("company"))
		if err != nil {
			t.Fatal(err)
		}
		const token = "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"
		rows := map[string][2]string{ // reference: link id, return address
			"pr_link": {"lnk_1", "https://pay.example.com/base/pay/" + token + "/3ds"},
			"pr_api":  {"", "https://shop.example.com/pay/" + token + "/3ds"},
		}
		for ref, r := range rows {
			_, err = db.ExecContext(ctx, `INSERT INTO transactions (reference, merchant_id, payment_type, channel, status, version, currency,
				amount, surcharge, fee, total, pre_auth, pre_auth_amount, refunded, payment_link_id, created_at, updated_at, details)
				VALUES ($1, 'MOLD', 'CreditCard', 'HPP', 'DECLINED', 1, 'AUD', 100, 0, 0, 100, $2, 0, 0, $3, 1, 1, $4)`,
				ref, false, r[0], `{"threeds":{"requested":true,"redirect_url":"`+r[1]+`","result":"failed"}}`)
			if err != nil {
				t.Fatal(err)
			}
		}
		if err := s.migrateOn(ctx, db, ms); err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"pr_link": "https://pay.example.com/base/checkout/return/lnk_1", "pr_api": rows["pr_api"][1]}
		err = s.View(ctx, func(tx paylink.Tx) error {
			for ref, url := range want {
				tr, err := tx.Transaction("MOLD", ref)
				if err != nil {
					return err
				}
				if d := tr.Details.ThreeDS; d == nil || d.RedirectURL != url || d.Result != "failed" || !d.Requested {
					t.Errorf("%s: got 3-D Secure %+v, want the return address %s and the rest kept", ref, d, url)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}

// TestStaleLedgerTriggersAreDropped: a SQLite database migrated by the
// development build of 0028 that refused INSERT OR REPLACE on the
// ledger's tables loses those triggers at 0029, so its schema is a fresh
// database's.
func TestStaleLedgerTriggersAreDropped(t *testing.T) {
	s, err := openSQLite(filepath.Join(t.TempDir(), "old.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, db := context.Background(), s.writer.db
	if err := s.migrate(ctx); err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		`CREATE TRIGGER ledger_postings_no_replace BEFORE INSERT ON ledger_postings
			WHEN EXISTS (SELECT 1 FROM ledger_postings WHERE id = NEW.id)
			BEGIN SELECT RAISE(ABORT, 'ledger postings are append-only'); END`,
		`CREATE TRIGGER ledger_lines_no_replace BEFORE INSERT ON ledger_lines
			WHEN EXISTS (SELECT 1 FROM ledger_lines WHERE posting_id = NEW.posting_id AND line_no = NEW.line_no)
			BEGIN SELECT RAISE(ABORT, 'ledger lines are append-only'); END`,
		`DELETE FROM schema_migrations WHERE version = 29`,
	} {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.migrate(ctx); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'ledger_%_no_replace'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("got %d of the stale triggers after migrating, want none", n)
	}
}

// TestAnEarlyIndexLeftIsDropped: a database migrated by a build whose
// 0018 was the one replaced at c134606 kept transactions_link, which the
// 0018 on main drops; 0040 drops it on both engines, so that its schema
// is a fresh database's (the upgrade sweep found it on both).
func TestAnEarlyIndexLeftIsDropped(t *testing.T) {
	ctx := context.Background()
	srv, err := pgtest.Start()
	if err != nil {
		pgtest.Skip(t, err)
	}
	defer srv.Stop()
	pgDSN, err := srv.NewDatabase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	indexes := map[string]string{
		"sqlite":   `SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name = 'transactions_link'`,
		"postgres": `SELECT COUNT(*) FROM pg_indexes WHERE indexname = 'transactions_link'`,
	}
	for name, dsn := range map[string]string{"sqlite": filepath.Join(t.TempDir(), "old.db"), "postgres": pgDSN} {
		t.Run(name, func(t *testing.T) {
			s, err := Open(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			db := s.db
			if s.writer != nil {
				db = s.writer.db
			}
			for _, stmt := range []string{`CREATE INDEX transactions_link ON transactions(payment_link_id, created_at)`,
				`DELETE FROM schema_migrations WHERE version = 40`} {
				if _, err := db.ExecContext(ctx, stmt); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.migrate(ctx); err != nil {
				t.Fatal(err)
			}
			var n int
			if err := db.QueryRowContext(ctx, indexes[name]).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n != 0 {
				t.Errorf("transactions_link is still there after migrating")
			}
		})
	}
}

// TestMigrationsThatNeedEveryOlderInstanceStopped: 0018, 0024 and 0028
// carry the stop-every-instance directive on both engines, and nothing
// else does; their checksums are still those of their files before the
// directive was added, which databases migrated since 0031 recorded, so
// none is reported as edited.
func TestMigrationsThatNeedEveryOlderInstanceStopped(t *testing.T) {
	recorded := map[Engine]map[int]string{
		Postgres: {
			18: "0f2f2a9919a53ae1a1cfe483951b631316bbaaeeb479fd18afa61982d5330ef5",
			24: "8401d202fe777c0e043ccaffcd80274df15bfbfd0eeb5b59a4f604a71cc4182b",
			28: "718a44d7c1358b3676f362f87bbbcd897dfb8fcc9c964f4040c4c6219a4d3f79",
		},
		SQLite: {
			18: "adba85611b0230dbe74425bf0f48b1573b727ce1a3e80c273e7b790bfcb67f8c",
			24: "c177e879270f07b7807c43437ed443690efa51a30eabd043f33d778fc9591399",
			28: "44e1db372e0852cb3a7e1ad75e07c805a1dd4da4200e30aaaea032a176aa27e1",
		},
	}
	for engine, sums := range recorded {
		ms, err := loadMigrations(engine)
		if err != nil {
			t.Fatal(err)
		}
		var marked []int
		for _, m := range ms {
			if m.stopEveryInstance != "" {
				marked = append(marked, m.version)
			}
			if want, ok := sums[m.version]; ok && m.checksum() != want {
				t.Errorf("%s %s: got checksum %s, want %s (the file's before its directive)", engine, m.name, m.checksum(), want)
			}
		}
		if want := []int{18, 24, 28}; !slices.Equal(marked, want) {
			t.Errorf("%s: got %v marked stop-every-instance, want %v", engine, marked, want)
		}
	}
}

// TestNewMigrationsSayWhetherAnOlderBuildMayRun: every migration after
// 0034 opens with a directive saying whether instances of the previous
// build may keep serving on its schema, so that the question is answered
// when the migration is written.
func TestNewMigrationsSayWhetherAnOlderBuildMayRun(t *testing.T) {
	const lastUndeclared = 34
	for _, engine := range []Engine{SQLite, Postgres} {
		ms, err := loadMigrations(engine)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			if m.version > lastUndeclared && m.directives == 0 {
				t.Errorf("%s %s: no directive; open it with %q WHY, or %q if an instance of the previous build serves correctly on its schema",
					engine, m.name, directivePrefix+stopDirective, directivePrefix+rollingDirective)
			}
		}
	}
}

// TestMigrationDirectives: the directives a migration file opens with are
// read, and a misspelt or reasonless one is refused.
func TestMigrationDirectives(t *testing.T) {
	tests := []struct {
		file, wantWhy string
		wantErr       bool
	}{
		{"-- paylink: stop-every-instance: old builds break\n-- comment\nSELECT 1;\n", "old builds break", false},
		{"-- paylink: rolling-upgrade\nSELECT 1;\n", "", false},
		{"-- comment\n-- paylink: stop-every-instance: not at the top\nSELECT 1;\n", "", false},
		{"-- paylink: stop-every-instance:\nSELECT 1;\n", "", true},
		{"-- paylink: stop-every-instances: typo\nSELECT 1;\n", "", true},
		{"-- paylink: stop-every-instance: crlf\r\nSELECT 1;\r\n", "crlf", false},
		{"\ufeff-- paylink: stop-every-instance: after a byte-order mark\nSELECT 1;\n", "after a byte-order mark", false},
		{"--paylink: stop-every-instance: no space\nSELECT 1;\n", "no space", false},
		{"  -- PayLink: stop-every-instance: indented, cased\nSELECT 1;\n", "indented, cased", false},
		{"--paylink:stop-every-instances: a near miss is still refused\nSELECT 1;\n", "", true},
		{"-- paylink: rolling-upgrade\n-- paylink: stop-every-instance: both\nSELECT 1;\n", "", true},
		{"-- paylink: stop-every-instance: no newline at all", "no newline at all", false},
	}
	for _, tt := range tests {
		m := migration{name: "0099_x.sql", sql: tt.file}
		err := m.parseDirectives()
		if (err != nil) != tt.wantErr || m.stopEveryInstance != tt.wantWhy {
			t.Errorf("%q: got %q, %v; want %q, error %v", tt.file, m.stopEveryInstance, err, tt.wantWhy, tt.wantErr)
		}
	}
}

// TestTheDecidingLinkIndexFromEither0034: 0034 indexed paid links; the
// builds 79c1cc2 to 728dc44 shipped the index of paid or claimed links
// as 0034 instead. 0035 brings a database from either to the same
// indexes, on both engines.
func TestTheDecidingLinkIndexFromEither0034(t *testing.T) {
	for _, early := range []bool{false, true} {
		t.Run(fmt.Sprintf("rewritten 0034 %v", early), func(t *testing.T) {
			onBothEngines(t, func(t *testing.T, s *Store, db *sql.DB) {
				ctx := context.Background()
				ms, err := loadMigrations(s.engine)
				if err != nil {
					t.Fatal(err)
				}
				if early {
					if err := s.migrateOn(ctx, db, ms[:slices.IndexFunc(ms, func(m migration) bool { return m.version > 33 })]); err != nil {
						t.Fatal(err)
					}
					for _, q := range []string{`CREATE INDEX payment_links_deciding ON payment_links(merchant_id, merchant_reference, updated_at, id)
						WHERE paid_reference <> '' OR claim_reference <> ''`,
						`INSERT INTO schema_migrations (version, name, applied_at) VALUES (34, '0034_link_deciding_payment.sql', 0)`} {
						if _, err := db.ExecContext(ctx, q); err != nil {
							t.Fatal(err)
						}
					}
				}
				if err := s.migrateOn(ctx, db, ms); err != nil {
					t.Fatal(err)
				}
				list := `SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'payment_links' AND name LIKE 'payment_links_%' ORDER BY name`
				if s.engine == Postgres {
					list = `SELECT indexname FROM pg_indexes WHERE tablename = 'payment_links' AND indexname LIKE 'payment_links_%' ORDER BY indexname`
				}
				rows, err := db.QueryContext(ctx, list)
				if err != nil {
					t.Fatal(err)
				}
				defer rows.Close()
				var names []string
				for rows.Next() {
					var n string
					if err := rows.Scan(&n); err != nil {
						t.Fatal(err)
					}
					names = append(names, n)
				}
				if !slices.Contains(names, "payment_links_deciding") || slices.Contains(names, "payment_links_paid") {
					t.Errorf("indexes of payment_links: got %v, want payment_links_deciding and not payment_links_paid", names)
				}
			})
		})
	}
}

// TestInstancesStartingTogetherOnAFreshDatabase: three instances that
// start at once on a fresh PostgreSQL database all start. Each read the
// migrations applied with no lock around its check, and one that read
// while another was half way (0001 to 0017 applied) refused 0018 as if
// the database were in use by older instances (4 or 5 of 15 starts).
func TestInstancesStartingTogetherOnAFreshDatabase(t *testing.T) {
	ctx := context.Background()
	srv, err := pgtest.Start()
	if err != nil {
		pgtest.Skip(t, err)
	}
	defer srv.Stop()
	for round := 0; round < 5; round++ {
		dsn, err := srv.NewDatabase(ctx)
		if err != nil {
			t.Fatal(err)
		}
		errs := make(chan error, 3)
		for range 3 {
			go func() {
				s, err := openPostgres(dsn, nil)
				if err != nil {
					errs <- err
					return
				}
				defer s.Close()
				errs <- s.migrateToServe(ctx)
			}()
		}
		for i := range 3 {
			if err := <-errs; err != nil {
				t.Errorf("round %d, instance %d: %v", round, i, err)
			}
		}
	}
}

// TestServeLeavesStopEveryInstanceMigrationsToMigrate: on PostgreSQL,
// serve's migration (migrateToServe) applies nothing to a database at
// 0027, where 0028 needs every older instance stopped, and says to run
// paylink migrate; migrate then applies it; a database past every marked
// migration gets the rest from serve, and a fresh one gets everything. On
// SQLite serve applies 0028 too.
func TestServeLeavesStopEveryInstanceMigrationsToMigrate(t *testing.T) {
	ctx := context.Background()
	atVersion := func(t *testing.T, s *Store, db *sql.DB, v int) {
		t.Helper()
		ms, err := loadMigrations(s.engine)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.migrateOn(ctx, db, ms[:slices.IndexFunc(ms, func(m migration) bool { return m.version > v })]); err != nil {
			t.Fatal(err)
		}
	}
	version := func(t *testing.T, s *Store) int {
		t.Helper()
		v, err := s.AppliedVersion(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	latest := SchemaVersion(Postgres)
	t.Run("postgres", func(t *testing.T) {
		srv, err := pgtest.Start()
		if err != nil {
			pgtest.Skip(t, err)
		}
		defer srv.Stop()
		newStore := func(t *testing.T) *Store {
			t.Helper()
			dsn, err := srv.NewDatabase(ctx)
			if err != nil {
				t.Fatal(err)
			}
			s, err := openPostgres(dsn, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		}
		fresh := newStore(t)
		if err := fresh.migrateToServe(ctx); err != nil {
			t.Fatalf("a fresh database: %v", err)
		}
		if got := version(t, fresh); got != latest {
			t.Errorf("a fresh database: got version %d, want %d", got, latest)
		}

		old := newStore(t)
		atVersion(t, old, old.db, 27)
		err = old.migrateToServe(ctx)
		if err == nil || !strings.Contains(err.Error(), "0028_idempotency_sealed.sql") || !strings.Contains(err.Error(), "run this build's paylink migrate") ||
			!strings.Contains(err.Error(), "schema version 27") {
			t.Errorf("a database at 27: got %v, want 0028 refused, naming paylink migrate", err)
		}
		if got := version(t, old); got != 27 {
			t.Errorf("after the refusal: got version %d, want 27 (nothing applied)", got)
		}
		if err := old.migrate(ctx); err != nil {
			t.Fatalf("migrate at 27: %v", err)
		}
		if got := version(t, old); got != latest {
			t.Errorf("after migrate: got version %d, want %d", got, latest)
		}

		past := newStore(t)
		atVersion(t, past, past.db, 28)
		if err := past.migrateToServe(ctx); err != nil {
			t.Fatalf("a database at 28: %v", err)
		}
		if got := version(t, past); got != latest {
			t.Errorf("a database at 28: got version %d after serve's migration, want %d", got, latest)
		}
	})
	t.Run("sqlite", func(t *testing.T) {
		s, err := openSQLite(filepath.Join(t.TempDir(), "old.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		atVersion(t, s, s.writer.db, 27)
		if err := s.migrateToServe(ctx); err != nil {
			t.Fatalf("a SQLite database at 27: %v", err)
		}
		if got := version(t, s); got != SchemaVersion(SQLite) {
			t.Errorf("a SQLite database at 27: got version %d after serve's migration, want %d", got, SchemaVersion(SQLite))
		}
	})
}

// TestAStartWaitingForTheMigrationsLockSaysWhoHoldsIt: an instance
// starting while another session holds the migrations run lock (a hung
// paylink migrate) waits, and logs at once which session holds it; it
// goes on once the lock is given up. paylink's own sessions name
// themselves in pg_stat_activity.
func TestAStartWaitingForTheMigrationsLockSaysWhoHoldsIt(t *testing.T) {
	ctx := context.Background()
	srv, err := pgtest.Start()
	if err != nil {
		pgtest.Skip(t, err)
	}
	defer srv.Stop()
	// Another database on the server holds its own lock of that number
	// first: its holder is not this database's.
	otherDSN, err := srv.NewDatabase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := holdRunLock(t, otherDSN, "other-database")
	defer other.Close()
	dsn, err := srv.NewDatabase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	holder, pid := holdRunLock(t, dsn, "hung-migrate")
	defer holder.Close()

	lines, done := startServing(dsn)
	waiting := nextLine(t, lines)
	for _, want := range []string{"waiting for another run of migrations", fmt.Sprintf(`"holder_pid":%d`, pid), `"holder_application":"hung-migrate"`} {
		if !strings.Contains(waiting, want) {
			t.Errorf("the waiting start logged %s, want %s in it", waiting, want)
		}
	}
	var named int
	if err := holder.QueryRowContext(ctx, `SELECT COUNT(*) FROM pg_stat_activity WHERE application_name = 'paylink migrations'`).Scan(&named); err != nil {
		t.Fatal(err)
	}
	if named == 0 {
		t.Error("the waiting start's session is not named 'paylink migrations' in pg_stat_activity")
	}
	select {
	case err := <-done:
		t.Fatalf("the start went on while the lock was held: %v", err)
	default:
	}
	if _, err := holder.ExecContext(ctx, `SELECT pg_advisory_unlock($1)`, migrationRunLock); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the start once the lock was free: %v", err)
	}
	if took := nextLine(t, lines); !strings.Contains(took, "took the migrations lock") {
		t.Errorf("after the wait the start logged %s", took)
	}
}

// TestAMigrationWaitingForALeftoverSessionSaysWhoHoldsIt: a run of
// migrations stopped mid-way (kill -9) leaves its session running the
// migration, holding the lock each migration takes, after the run's own
// lock went with its connection; the next run waits for it and says
// which session holds it (the upgrade sweep found it waiting silently).
func TestAMigrationWaitingForALeftoverSessionSaysWhoHoldsIt(t *testing.T) {
	ctx := context.Background()
	srv, err := pgtest.Start()
	if err != nil {
		pgtest.Skip(t, err)
	}
	defer srv.Stop()
	dsn, err := srv.NewDatabase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	holder, pid := holdLock(t, dsn, "stopped-migrate", migrationsLock)
	defer holder.Close()
	lines, done := startServing(dsn)
	waiting := nextLine(t, lines)
	for _, want := range []string{"waiting for a migration another session is running", fmt.Sprintf(`"holder_pid":%d`, pid), `"holder_application":"stopped-migrate"`} {
		if !strings.Contains(waiting, want) {
			t.Errorf("the waiting start logged %s, want %s in it", waiting, want)
		}
	}
	if _, err := holder.ExecContext(ctx, `SELECT pg_advisory_unlock($1)`, migrationsLock); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the start once the lock was free: %v", err)
	}
}

// startServing opens the database of dsn as paylink serve does, in the
// background, and returns its log records, one at a time, and the
// open's result once it ends. The channel has room for every record the
// start logs (one a migration applied) while a test waits for it to end
// before reading the rest.
func startServing(dsn string) (<-chan string, <-chan error) {
	lines := make(chan string, 256)
	log := slog.New(slog.NewJSONHandler(lineWriter(lines), nil))
	done := make(chan error, 1)
	go func() {
		s, err := OpenToServe(context.Background(), dsn, WithLogger(log))
		if err == nil {
			s.Close()
		}
		done <- err
	}()
	return lines, done
}

// holdRunLock takes migrationRunLock on a session of its own to the
// database of dsn, named app, and returns it with its process id.
func holdRunLock(t *testing.T, dsn, app string) (*sql.Conn, int) {
	t.Helper()
	return holdLock(t, dsn, app, migrationRunLock)
}

// holdLock takes the advisory lock on a session of its own to the
// database of dsn, named app, and returns it with its process id.
func holdLock(t *testing.T, dsn, app string, lock int64) (*sql.Conn, int) {
	t.Helper()
	ctx := context.Background()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, `SELECT set_config('application_name', $1, false)`, app); err != nil {
		t.Fatal(err)
	}
	var pid int
	if err := conn.QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, lock); err != nil {
		t.Fatal(err)
	}
	return conn, pid
}

// lineWriter sends each write (a log record) to lines.
type lineWriter chan<- string

func (w lineWriter) Write(p []byte) (int, error) {
	w <- string(p)
	return len(p), nil
}

// nextLine is the next log record, failing the test after 30 s.
func nextLine(t *testing.T, lines <-chan string) string {
	t.Helper()
	select {
	case l := <-lines:
		return l
	case <-time.After(30 * time.Second):
		t.Fatal("no log line in 30 s")
		return ""
	}
}
