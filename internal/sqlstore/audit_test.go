package sqlstore_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/sqlstore"
)

// TestAuditLogIsAppendOnly proves that the schema itself refuses to
// rewrite the audit log, whatever SQL a bug or a person sends.
func TestAuditLogIsAppendOnly(t *testing.T) {
	engines := []struct {
		name, driver string
		dsn          func(t *testing.T) (store, raw string)
		statements   []string
		retention    string // docs/operations.md, "Retention", with a cutoff in the future
	}{
		{"sqlite", "sqlite", func(t *testing.T) (string, string) {
			path := filepath.Join(t.TempDir(), "audit.db")
			return path, "file:" + path
		}, []string{`UPDATE audit_log SET outcome = 'failure'`, `DELETE FROM audit_log`,
			// REPLACE deletes the row it replaces without DELETE triggers.
			`INSERT OR REPLACE INTO audit_log SELECT id, at, merchant_id, actor_kind, 'FORGED', source_ip, request_id,
				action, object_type, object_id, 'failure', detail FROM audit_log`}, `
BEGIN;
DROP TRIGGER audit_log_no_delete;
DELETE FROM audit_log WHERE at < (unixepoch('now', '+13 months') * 1000000);
CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only');
END;
COMMIT;`},
		{"postgres", "pgx", func(t *testing.T) (string, string) {
			dsn := pg.Database(t)
			return dsn, dsn
		}, []string{`UPDATE audit_log SET outcome = 'failure'`, `DELETE FROM audit_log`, `TRUNCATE audit_log`}, `
BEGIN;
ALTER TABLE audit_log DISABLE TRIGGER audit_log_no_change;
DELETE FROM audit_log WHERE at < (EXTRACT(EPOCH FROM now() + interval '13 months') * 1000000)::bigint;
ALTER TABLE audit_log ENABLE TRIGGER audit_log_no_change;
COMMIT;`},
	}
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			dsn, rawDSN := e.dsn(t)
			st, err := sqlstore.Open(context.Background(), dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			err = st.Update(context.Background(), func(tx paylink.Tx) error {
				return tx.AddAuditEvent(&paylink.AuditEvent{At: time.Now(), ActorKind: paylink.ActorCLI, ActorID: "test",
					Action: paylink.AuditMerchantOnboard, ObjectType: paylink.ObjectMerchant, ObjectID: "M1", Outcome: paylink.OutcomeSuccess})
			})
			if err != nil {
				t.Fatal(err)
			}
			raw, err := sql.Open(e.driver, rawDSN)
			if err != nil {
				t.Fatal(err)
			}
			defer raw.Close()
			for _, stmt := range e.statements {
				_, err := raw.Exec(stmt)
				if err == nil || !strings.Contains(err.Error(), "append-only") {
					t.Errorf("%s: got %v, want the append-only refusal", stmt, err)
				}
			}
			if n := auditCount(t, raw, "success"); n != 1 {
				t.Errorf("got %d rows with outcome success, want the 1 row unchanged", n)
			}
			t.Run("documented retention procedure", func(t *testing.T) {
				if _, err := raw.Exec(e.retention); err != nil {
					t.Fatalf("retention: %v", err)
				}
				if n := auditCount(t, raw, "success"); n != 0 {
					t.Errorf("got %d rows after retention, want 0", n)
				}
				_, err := raw.Exec(`INSERT INTO audit_log (at, merchant_id, actor_kind, actor_id, source_ip, request_id,
					action, object_type, object_id, outcome, detail)
					VALUES (1, '', 'cli', 'test', '', '', 'merchant.onboard', 'merchant', 'M2', 'success', '')`)
				if err != nil {
					t.Fatal(err)
				}
				_, err = raw.Exec(`DELETE FROM audit_log`)
				if err == nil || !strings.Contains(err.Error(), "append-only") {
					t.Errorf("after retention: got %v, want the append-only refusal again", err)
				}
			})
		})
	}
}

// auditCount counts the audit rows with an outcome.
func auditCount(t *testing.T, db *sql.DB, outcome string) int {
	t.Helper()
	var n int
	if err := db.QueryRow(`SELECT COUNT(*) FROM audit_log WHERE outcome = $1`, outcome).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
