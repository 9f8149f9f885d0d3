package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paylink/paylink"
)

// Webhooks: the outbox and delivery log.

func newDelivery(m *paylink.Merchant, id string, due time.Time) *paylink.WebhookDelivery {
	return &paylink.WebhookDelivery{ID: id, MerchantID: m.ID, Reference: "pr_" + id, EventStatus: paylink.StatusApproved,
		Target: paylink.TargetCompany, URL: "https://hooks.example.com/x", Payload: []byte(`{"status":"APPROVED"}`),
		State: paylink.DeliveryPending, NextAttemptAt: due, CreatedAt: t0, UpdatedAt: t0}
}

// testWebhookClaimRace: concurrent claimers never get the same row, and
// every due row is claimed exactly once; rows not due are left.
func testWebhookClaimRace(t *testing.T, s paylink.Store) {
	m := NewMerchant(t, s)
	const due = 20
	update(t, s, func(tx paylink.Tx) error {
		for i := range due {
			if err := tx.CreateWebhookDelivery(newDelivery(m, fmt.Sprintf("msg_%d%s", i, m.ID), t0)); err != nil {
				return err
			}
		}
		return tx.CreateWebhookDelivery(newDelivery(m, "msg_later"+m.ID, t0.Add(time.Hour)))
	})
	var mu sync.Mutex
	claimed := map[string]int{}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var ds []*paylink.WebhookDelivery
			err := s.Update(context.Background(), func(tx paylink.Tx) error {
				var err error
				ds, err = tx.ClaimWebhookDeliveries(t0, t0.Add(time.Minute), fmt.Sprintf("lease%d", i), 5)
				return err
			})
			if err != nil {
				t.Errorf("claim: %v", err)
			}
			if len(ds) > 5 {
				t.Errorf("claim of at most 5 rows: got %d", len(ds))
			}
			mu.Lock()
			for _, d := range ds {
				claimed[d.ID]++
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	// Under contention a claimer may come away with fewer rows than were
	// due (PostgreSQL re-checks rows another claimer took); a last claim
	// collects what is left.
	update(t, s, func(tx paylink.Tx) error {
		ds, err := tx.ClaimWebhookDeliveries(t0, t0.Add(time.Minute), "last", due)
		for _, d := range ds {
			claimed[d.ID]++
		}
		return err
	})
	for id, n := range claimed {
		if n != 1 {
			t.Errorf("row %s: got claimed %d times, want once", id, n)
		}
	}
	if len(claimed) != due || claimed["msg_later"+m.ID] != 0 {
		t.Errorf("got %d rows claimed (later row %d), want %d due rows and not the later one", len(claimed), claimed["msg_later"+m.ID], due)
	}
	view(t, s, func(tx paylink.Tx) error {
		n, err := tx.CountDueWebhookDeliveries(t0)
		if err != nil || n != due {
			t.Errorf("count due: got %d, %v; want %d (leased rows still count)", n, err, due)
		}
		return nil
	})
}

// testWebhookLease: a lease blocks other claimers until it expires; only
// the holder of the current lease can finish the row; resend re-queues a
// finished row; the log and the filters read back.
func testWebhookLease(t *testing.T, s paylink.Store) {
	m, other := NewMerchant(t, s), NewMerchant(t, s)
	d := newDelivery(m, "msg_lease"+m.ID, t0)
	update(t, s, func(tx paylink.Tx) error {
		if err := tx.CreateWebhookDelivery(newDelivery(other, "msg_other"+other.ID, t0.Add(time.Hour))); err != nil {
			return err
		}
		return tx.CreateWebhookDelivery(d)
	})
	claim := func(at time.Time, token string) int {
		var n int
		update(t, s, func(tx paylink.Tx) error {
			ds, err := tx.ClaimWebhookDeliveries(at, at.Add(time.Minute), token, 10)
			n = len(ds)
			return err
		})
		return n
	}
	if got := claim(t0, "a"); got != 1 {
		t.Fatalf("first claim: got %d rows, want 1", got)
	}
	if got := claim(t0.Add(30*time.Second), "b"); got != 0 {
		t.Errorf("claim during lease: got %d rows, want 0", got)
	}
	if got := claim(t0.Add(2*time.Minute), "c"); got != 1 {
		t.Errorf("claim after the lease expired: got %d rows, want 1", got)
	}
	done := *d
	done.State, done.Attempts, done.LastStatusCode, done.DeliveredAt = paylink.DeliveryDelivered, 1, 200, t0.Add(2*time.Minute)
	finish := func(token string) []string {
		var ids []string
		update(t, s, func(tx paylink.Tx) error {
			var err error
			ids, err = tx.FinishWebhookAttempts([]paylink.WebhookFinish{{Delivery: &done, LeaseToken: token}})
			return err
		})
		return ids
	}
	if got := finish("a"); len(got) != 0 {
		t.Errorf("finish with a lost lease: wrote %v, want nothing", got)
	}
	if got := finish("c"); !slices.Equal(got, []string{d.ID}) {
		t.Errorf("finish with the lease: wrote %v, want %s", got, d.ID)
	}
	update(t, s, func(tx paylink.Tx) error {
		return tx.AddWebhookAttempts([]*paylink.WebhookAttempt{{DeliveryID: d.ID, Attempt: 1, URL: d.URL, StatusCode: 200,
			Latency: 1500 * time.Microsecond, StartedAt: t0}})
	})
	view(t, s, func(tx paylink.Tx) error {
		got, err := tx.WebhookDelivery(d.ID)
		if err != nil || got.State != paylink.DeliveryDelivered || got.Attempts != 1 || got.LeaseToken != "" || string(got.Payload) != string(d.Payload) {
			t.Errorf("after finish: got %+v, %v; want delivered, 1 attempt, no lease, same payload", got, err)
		}
		as, err := tx.WebhookAttempts(d.ID)
		if err != nil || len(as) != 1 || as[0].Latency != 1500*time.Microsecond || as[0].StatusCode != 200 {
			t.Errorf("attempts: got %+v, %v; want one 200 attempt of 1.5ms", as, err)
		}
		list, err := tx.ListWebhookDeliveries(paylink.WebhookFilter{MerchantID: m.ID})
		if err != nil || len(list) != 1 || list[0].ID != d.ID {
			t.Errorf("list by merchant: got %d, %v; want only %s", len(list), err, d.ID)
		}
		failed, err := tx.ListWebhookDeliveries(paylink.WebhookFilter{FailedOnly: true, MerchantID: m.ID})
		if err != nil || len(failed) != 0 {
			t.Errorf("list failed: got %d, %v; want none", len(failed), err)
		}
		return nil
	})
	update(t, s, func(tx paylink.Tx) error { return tx.ResendWebhookDelivery(d.ID, t0.Add(time.Hour)) })
	err := s.Update(context.Background(), func(tx paylink.Tx) error { return tx.ResendWebhookDelivery(d.ID, t0.Add(time.Hour)) })
	if !errors.Is(err, paylink.ErrConflict) {
		t.Errorf("resend a pending row: got %v, want ErrConflict", err)
	}
	err = s.Update(context.Background(), func(tx paylink.Tx) error { return tx.ResendWebhookDelivery("msg_missing", t0) })
	if !errors.Is(err, paylink.ErrNotFound) {
		t.Errorf("resend a missing row: got %v, want ErrNotFound", err)
	}
	if got := claim(t0.Add(time.Hour), "d"); got != 2 {
		t.Errorf("claim after resend: got %d rows, want the resent row and the other merchant's", got)
	}
}

// testWebhookBacklog: the backlog counts pending rows, due or not, and
// names the oldest and the earliest next attempt (a leased row's is its
// lease's end); delivered and failed rows leave it.
func testWebhookBacklog(t *testing.T, s paylink.Store) {
	backlog := func() paylink.WebhookBacklog {
		var b paylink.WebhookBacklog
		view(t, s, func(tx paylink.Tx) error {
			var err error
			b, err = tx.WebhookBacklog()
			return err
		})
		return b
	}
	if got := backlog(); got != (paylink.WebhookBacklog{}) {
		t.Errorf("empty outbox: got %+v, want zero", got)
	}
	m := NewMerchant(t, s)
	rows := []*paylink.WebhookDelivery{newDelivery(m, "msg_a", t0), newDelivery(m, "msg_b", t0.Add(time.Hour)), newDelivery(m, "msg_c", t0)}
	rows[0].CreatedAt, rows[1].CreatedAt, rows[2].CreatedAt = t0.Add(time.Minute), t0.Add(2*time.Minute), t0
	update(t, s, func(tx paylink.Tx) error {
		for _, d := range rows {
			if err := tx.CreateWebhookDelivery(d); err != nil {
				return err
			}
		}
		return nil
	})
	if got, want := backlog(), (paylink.WebhookBacklog{Pending: 3, Oldest: t0, FirstDue: t0}); got != want {
		t.Errorf("three pending: got %+v, want %+v", got, want)
	}
	update(t, s, func(tx paylink.Tx) error {
		ds, err := tx.ClaimWebhookDeliveries(t0, t0.Add(time.Minute), "lease", 5)
		if err != nil {
			return err
		}
		for _, d := range ds {
			if d.ID != "msg_c" {
				continue
			}
			d.State, d.Attempts, d.DeliveredAt = paylink.DeliveryDelivered, 1, t0.Add(time.Second)
			if ids, err := tx.FinishWebhookAttempts([]paylink.WebhookFinish{{Delivery: d, LeaseToken: "lease"}}); err != nil || len(ids) != 1 {
				return fmt.Errorf("finish msg_c: wrote %v, %w", ids, err)
			}
		}
		return nil
	})
	if got, want := backlog(), (paylink.WebhookBacklog{Pending: 2, Oldest: t0.Add(time.Minute), FirstDue: t0.Add(time.Minute)}); got != want {
		t.Errorf("after delivering the oldest: got %+v, want %+v (a leased row is still pending, due again when its lease ends)", got, want)
	}
}

// testWebhookFinishBatch: one call finishes a batch larger than one
// statement's rows, writing exactly the rows whose lease holds, and
// appends every attempt to the log.
func testWebhookFinishBatch(t *testing.T, s paylink.Store) {
	m := NewMerchant(t, s)
	const n = 150 // more than two statements' rows
	var claimed []*paylink.WebhookDelivery
	update(t, s, func(tx paylink.Tx) error {
		for i := range n {
			if err := tx.CreateWebhookDelivery(newDelivery(m, fmt.Sprintf("msg_batch%03d%s", i, m.ID), t0)); err != nil {
				return err
			}
		}
		var err error
		claimed, err = tx.ClaimWebhookDeliveries(t0, t0.Add(time.Minute), "held", n)
		return err
	})
	if len(claimed) != n {
		t.Fatalf("claimed %d rows, want %d", len(claimed), n)
	}
	var fs []paylink.WebhookFinish
	var as []*paylink.WebhookAttempt
	var want []string
	for i, d := range claimed {
		d.State, d.Attempts, d.LastStatusCode, d.DeliveredAt, d.UpdatedAt = paylink.DeliveryDelivered, 1, 200, t0.Add(time.Second), t0.Add(time.Second)
		token := "held"
		if i%7 == 3 {
			token = "lost" // another claimer's lease by now
		} else {
			want = append(want, d.ID)
		}
		fs = append(fs, paylink.WebhookFinish{Delivery: d, LeaseToken: token})
		as = append(as, &paylink.WebhookAttempt{DeliveryID: d.ID, Attempt: 1, URL: d.URL, StatusCode: 200, StartedAt: t0})
	}
	var got []string
	update(t, s, func(tx paylink.Tx) error {
		if err := tx.AddWebhookAttempts(as); err != nil {
			return err
		}
		var err error
		got, err = tx.FinishWebhookAttempts(fs)
		return err
	})
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("finish wrote %d rows, want the %d whose lease held", len(got), len(want))
	}
	view(t, s, func(tx paylink.Tx) error {
		for i, d := range claimed {
			stored, err := tx.WebhookDelivery(d.ID)
			if err != nil {
				return err
			}
			wantState, wantLease := paylink.DeliveryDelivered, ""
			if i%7 == 3 {
				wantState, wantLease = paylink.DeliveryPending, "held"
			}
			if stored.State != wantState || stored.LeaseToken != wantLease {
				t.Errorf("%s: got %s leased %q, want %s leased %q", d.ID, stored.State, stored.LeaseToken, wantState, wantLease)
			}
		}
		ids := make([]string, len(claimed))
		for i, d := range claimed {
			ids[i] = d.ID
		}
		logged, err := tx.WebhookAttempts(ids...)
		if err != nil || len(logged) != n {
			t.Errorf("attempts: got %d, %v; want %d", len(logged), err, n)
		}
		return nil
	})
}

// testWebhookHeld: rows finished as held for a receiver keep its name, stay
// pending, and are not claimed; the receivers held for are listed; a
// probe makes one of a receiver's rows due, still held; releasing them
// (up to a limit) makes them due, no longer held.
func testWebhookHeld(t *testing.T, s paylink.Store) {
	m := NewMerchant(t, s)
	ids := []string{"msg_held_a1", "msg_held_a2", "msg_held_b", "msg_deferred"}
	holdFor := []string{"a.example:8443", "a.example:8443", "b.example", ""}
	update(t, s, func(tx paylink.Tx) error {
		for _, id := range ids {
			if err := tx.CreateWebhookDelivery(newDelivery(m, id, t0)); err != nil {
				return err
			}
		}
		ds, err := tx.ClaimWebhookDeliveries(t0, t0.Add(time.Minute), "lease", len(ids))
		if err != nil || len(ds) != len(ids) {
			return fmt.Errorf("claimed %d rows, %w", len(ds), err)
		}
		fs := make([]paylink.WebhookFinish, len(ds))
		for i, d := range ds {
			j := slices.Index(ids, d.ID)
			d.HeldFor, d.NextAttemptAt = holdFor[j], t0.Add(24*time.Hour)
			if holdFor[j] == "" {
				d.NextAttemptAt = t0.Add(time.Minute)
			}
			fs[i] = paylink.WebhookFinish{Delivery: d, LeaseToken: "lease"}
		}
		_, err = tx.FinishWebhookAttempts(fs)
		return err
	})
	claim := func(at time.Time) []*paylink.WebhookDelivery {
		var got []*paylink.WebhookDelivery
		update(t, s, func(tx paylink.Tx) error {
			var err error
			got, err = tx.ClaimWebhookDeliveries(at, at.Add(time.Minute), fmt.Sprint("lease", at.UnixNano()), 10)
			return err
		})
		slices.SortFunc(got, func(a, b *paylink.WebhookDelivery) int { return strings.Compare(a.ID, b.ID) })
		return got
	}
	idsOf := func(ds []*paylink.WebhookDelivery) []string {
		out := make([]string, len(ds))
		for i, d := range ds {
			out[i] = d.ID
		}
		return out
	}
	view(t, s, func(tx paylink.Tx) error {
		hosts, err := tx.HeldWebhookReceivers()
		slices.Sort(hosts)
		if err == nil && !slices.Equal(hosts, []string{"a.example:8443", "b.example"}) {
			t.Errorf("receivers held for: got %v, want a.example:8443 and b.example", hosts)
		}
		return err
	})
	if got := idsOf(claim(t0.Add(2 * time.Minute))); !slices.Equal(got, []string{"msg_deferred"}) {
		t.Errorf("claim with three rows held: got %v, want the deferred row alone", got)
	}
	at := t0.Add(2 * time.Minute)
	update(t, s, func(tx paylink.Tx) error {
		found, err := tx.ProbeHeldWebhookDelivery("b.example", at)
		if err == nil && !found {
			t.Error("probe of b.example: found no held row")
		}
		return err
	})
	if got := claim(at.Add(30 * time.Second)); len(got) != 1 || got[0].ID != "msg_held_b" || got[0].HeldFor != "b.example" {
		t.Errorf("claim after a probe of b.example: got %v, want msg_held_b, still held for b.example", idsOf(got))
	}
	update(t, s, func(tx paylink.Tx) error {
		found, err := tx.ProbeHeldWebhookDelivery("b.example", at)
		if err == nil && found {
			t.Error("probe of b.example with its one row leased: found one, want none")
		}
		for _, r := range []struct{ limit, want int }{{1, 1}, {5, 1}, {5, 0}} { // one, then the rest, then none
			n, err := tx.ReleaseHeldWebhookDeliveries("a.example:8443", r.limit, at)
			if err != nil {
				return err
			}
			if n != r.want {
				t.Errorf("release up to %d of a.example's rows: released %d, want %d", r.limit, n, r.want)
			}
		}
		return nil
	})
	got := claim(at.Add(30 * time.Second))
	if !slices.Equal(idsOf(got), []string{"msg_held_a1", "msg_held_a2"}) || got[0].HeldFor != "" || got[1].HeldFor != "" {
		t.Errorf("claim after releasing a.example's rows: got %v, want both, no longer held", idsOf(got))
	}
}

// testWebhookHeldPendingOnly: a delivered or failed row that still
// carries a hold mark (a binary older than migration 0032 finished it
// during a rolling upgrade) is held for no one: it is not listed, probed,
// released or counted as held, and a probe makes the pending held row due.
func testWebhookHeldPendingOnly(t *testing.T, s paylink.Store) {
	m := NewMerchant(t, s)
	done, failed, held := newDelivery(m, "msg_done", t0), newDelivery(m, "msg_failed", t0), newDelivery(m, "msg_held", t0.Add(24*time.Hour))
	done.State, done.HeldFor = paylink.DeliveryDelivered, "c.example"
	failed.State, failed.HeldFor = paylink.DeliveryFailed, "d.example"
	held.HeldFor = "c.example"
	createDeliveries(t, s, done, failed, held)
	at := t0.Add(time.Hour)
	update(t, s, func(tx paylink.Tx) error {
		receivers, err := tx.HeldWebhookReceivers()
		if err == nil && !slices.Equal(receivers, []string{"c.example"}) {
			t.Errorf("receivers held for: got %v, want c.example alone", receivers)
		}
		if found, err := tx.ProbeHeldWebhookDelivery("c.example", at); err != nil || !found {
			return fmt.Errorf("probe of c.example: found %v, %w", found, err)
		}
		if n, err := tx.ReleaseHeldWebhookDeliveries("d.example", 10, at); err != nil || n != 0 {
			t.Errorf("release of d.example, whose one row is failed: released %d, %v; want none", n, err)
		}
		b, err := tx.WebhookBacklog()
		if err == nil && (b.Pending != 1 || b.Held != 1) {
			t.Errorf("backlog: got %d pending, %d held; want one of each", b.Pending, b.Held)
		}
		return err
	})
	checkDue(t, s, "msg_held", at)
}

// testWebhookProbeOldest: a probe makes the receiver's oldest held row
// due (by next attempt time, then id), the one held first.
func testWebhookProbeOldest(t *testing.T, s paylink.Store) {
	m := NewMerchant(t, s)
	var rows []*paylink.WebhookDelivery
	for _, r := range []struct {
		id   string
		next time.Duration
	}{{"msg_c", 3 * time.Hour}, {"msg_b", 2 * time.Hour}, {"msg_a", 4 * time.Hour}, {"msg_d", 2 * time.Hour}} {
		d := newDelivery(m, r.id, t0.Add(r.next))
		d.HeldFor = "e.example"
		rows = append(rows, d)
	}
	createDeliveries(t, s, rows...)
	update(t, s, func(tx paylink.Tx) error {
		found, err := tx.ProbeHeldWebhookDelivery("e.example", t0)
		if err == nil && !found {
			t.Error("probe of e.example: found no held row")
		}
		return err
	})
	checkDue(t, s, "msg_b", t0)
}

// createDeliveries stores ds.
func createDeliveries(t *testing.T, s paylink.Store, ds ...*paylink.WebhookDelivery) {
	t.Helper()
	update(t, s, func(tx paylink.Tx) error {
		for _, d := range ds {
			if err := tx.CreateWebhookDelivery(d); err != nil {
				return err
			}
		}
		return nil
	})
}

// checkDue checks that delivery id is due at at.
func checkDue(t *testing.T, s paylink.Store, id string, at time.Time) {
	t.Helper()
	view(t, s, func(tx paylink.Tx) error {
		d, err := tx.WebhookDelivery(id)
		if err == nil && !d.NextAttemptAt.Equal(at) {
			t.Errorf("%s: due at %s, want %s", id, d.NextAttemptAt, at)
		}
		return err
	})
}
