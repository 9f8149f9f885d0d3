package storetest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/paylink/paylink"
)

// auditRow is an audit event of merchant mid at t0 plus offset.
func auditRow(mid, action string, offset time.Duration) *paylink.AuditEvent {
	return &paylink.AuditEvent{At: t0.Add(offset), MerchantID: mid, ActorKind: paylink.ActorAPIKey, ActorID: "key_0011223344556677",
		SourceIP: "2001:db8::1", RequestID: "req-" + action, Action: action, ObjectType: paylink.ObjectTransaction,
		ObjectID: "pr_" + action, Outcome: paylink.OutcomeSuccess, Detail: "APPROVED"}
}

func testAuditLog(t *testing.T, s paylink.Store) {
	a, b := NewMerchant(t, s), NewMerchant(t, s)
	rows := []*paylink.AuditEvent{
		auditRow(a.ID, "one", 0), auditRow(b.ID, "two", time.Minute), auditRow(a.ID, "three", 2*time.Minute),
	}
	update(t, s, func(tx paylink.Tx) error {
		for _, e := range rows {
			if err := tx.AddAuditEvent(e); err != nil {
				return err
			}
		}
		return nil
	})
	if !(rows[0].ID > 0 && rows[0].ID < rows[1].ID && rows[1].ID < rows[2].ID) {
		t.Fatalf("got ids %d, %d, %d, want increasing from 1", rows[0].ID, rows[1].ID, rows[2].ID)
	}
	tests := []struct {
		name string
		f    paylink.AuditFilter
		want []string
	}{
		{"all", paylink.AuditFilter{Limit: 10}, []string{"one", "two", "three"}},
		{"since", paylink.AuditFilter{Since: t0.Add(time.Minute), Limit: 10}, []string{"two", "three"}},
		{"merchant", paylink.AuditFilter{MerchantID: a.ID, Limit: 10}, []string{"one", "three"}},
		{"page", paylink.AuditFilter{AfterID: rows[0].ID, Limit: 1}, []string{"two"}},
		{"nothing later", paylink.AuditFilter{Since: t0.Add(time.Hour), Limit: 10}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []*paylink.AuditEvent
			view(t, s, func(tx paylink.Tx) error {
				var err error
				got, err = tx.AuditEvents(tt.f)
				return err
			})
			var actions []string
			for _, e := range got {
				actions = append(actions, e.Action)
			}
			if !slices.Equal(actions, tt.want) {
				t.Fatalf("got %v, want %v", actions, tt.want)
			}
			if tt.name == "all" && *got[2] != *rows[2] {
				t.Errorf("round trip: got %+v, want %+v", *got[2], *rows[2])
			}
		})
	}
}

func testAuditRollsBack(t *testing.T, s paylink.Store) {
	m := NewMerchant(t, s)
	errBoom := errors.New("boom")
	err := s.Update(context.Background(), func(tx paylink.Tx) error {
		if err := tx.AddAuditEvent(auditRow(m.ID, "rolled-back", 0)); err != nil {
			return err
		}
		return errBoom
	})
	if !errors.Is(err, errBoom) {
		t.Fatalf("got %v, want boom", err)
	}
	view(t, s, func(tx paylink.Tx) error {
		got, err := tx.AuditEvents(paylink.AuditFilter{MerchantID: m.ID, Limit: 10})
		if len(got) != 0 {
			t.Errorf("got %d rows of a rolled-back transaction, want none", len(got))
		}
		return err
	})
}
