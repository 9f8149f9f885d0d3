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
	}{
		{"sqlite", "sqlite", func(t *testing.T) (string, string) {
			path := filepath.Join(t.TempDir(), "audit.db")
			return path, "file:" + path
		}, []string{`UPDATE audit_log SET outcome = 'failure'`, `DELETE FROM audit_log`}},
		{"postgres", "pgx", func(t *testing.T) (string, string) {
			dsn := pg.Database(t)
			return dsn, dsn
		}, []string{`UPDATE audit_log SET outcome = 'failure'`, `DELETE FROM audit_log`, `TRUNCATE audit_log`}},
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
				return tx.AddAuditEvent(&paylink.AuditEvent{At: time.Now(), Actor: paylink.ActorCLI, ActorID: "test",
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
			var n int
			var outcome string
			if err := raw.QueryRow(`SELECT COUNT(*), MIN(outcome) FROM audit_log`).Scan(&n, &outcome); err != nil {
				t.Fatal(err)
			}
			if n != 1 || outcome != "success" {
				t.Errorf("got %d rows with outcome %q, want the 1 row unchanged", n, outcome)
			}
		})
	}
}
