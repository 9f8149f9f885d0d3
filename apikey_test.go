package paylink_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
)

// authenticates reports whether key authenticates on svc, and as which
// key id.
func authenticates(t *testing.T, svc *paylink.Service, key string) (bool, string) {
	t.Helper()
	m, err := svc.Authenticate(context.Background(), key)
	if err != nil {
		if paylink.AsError(err).Kind != paylink.KindUnauthorized {
			t.Fatalf("authenticate: got %v, want success or unauthorized", err)
		}
		return false, ""
	}
	return true, m.APIKeyID()
}

// wantAuth checks whether key authenticates at the clock's time now.
func wantAuth(t *testing.T, svc *paylink.Service, what, key string, want bool) {
	t.Helper()
	if got, _ := authenticates(t, svc, key); got != want {
		t.Errorf("%s: authenticates %t, want %t", what, got, want)
	}
}

// TestRollAPIKey: a roll issues a new key, the previous one works until
// the end of the overlap and not an instant later, even when this
// instance cached it a moment before; the roll is audited; bad input
// changes nothing; another merchant's key is untouched.
func TestRollAPIKey(t *testing.T) {
	onEngines(t, func(t *testing.T, env *apitest.Env) {
		ctx := context.Background()
		svc := env.Service
		m, other := env.Onboard(), env.Onboard()
		oldKey, oldID := m.Creds.APIKey, m.APIKeyID()
		wantAuth(t, svc, "old key before the roll", oldKey, true)

		for _, bad := range []time.Duration{-time.Second, paylink.MaxAPIKeyOverlap + time.Second, time.Nanosecond, 1500 * time.Millisecond} {
			_, err := svc.RollAPIKey(ctx, m.ID, "", bad)
			wantError(t, "overlap "+bad.String(), err, paylink.KindInvalid, paylink.CodeInvalidRequest)
		}
		_, err := svc.RollAPIKey(ctx, "MNOSUCHMERCHANT", "", time.Hour)
		wantError(t, "unknown merchant", err, paylink.KindNotFound, paylink.CodeNotFound)
		if keys, err := svc.APIKeys(ctx, m.Merchant); err != nil || len(keys) != 1 {
			t.Fatalf("after refused rolls: got %d keys, %v; want the first key only", len(keys), err)
		}

		rolledAt := env.Clock.Now().UTC().Truncate(time.Microsecond)
		newKey, err := svc.RollAPIKey(asStaff(t, svc, ctx, m.Merchant, "usr_1", paylink.PermAPIKeys), m.ID, "", time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		newID := paylink.APIKeyID(paylink.HashSecret(newKey))
		if !strings.HasPrefix(newKey, "pl_sk_") || newKey == oldKey {
			t.Fatalf("got new key %q, want a fresh pl_sk_ key", newKey)
		}
		for _, step := range []struct {
			name    string
			advance time.Duration
			key     string
			want    bool
			wantID  string
		}{
			{"new key at once", 0, newKey, true, newID},
			{"old key inside the overlap", 0, oldKey, true, oldID},
			{"old key a second before the end (cached now)", time.Hour - time.Second, oldKey, true, oldID},
			{"old key at the end of the overlap", time.Second, oldKey, false, ""},
			{"old key later", time.Minute, oldKey, false, ""},
			{"new key after the overlap", 0, newKey, true, newID},
			{"another merchant's key", 0, other.Creds.APIKey, true, other.APIKeyID()},
		} {
			env.Clock.Advance(step.advance)
			ok, id := authenticates(t, svc, step.key)
			if ok != step.want || id != step.wantID {
				t.Errorf("%s: got %t as %q, want %t as %q", step.name, ok, id, step.want, step.wantID)
			}
		}

		keys, err := svc.APIKeys(ctx, m.Merchant)
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) != 2 || keys[0].ID != newID || !keys[0].ExpiresAt.IsZero() ||
			keys[1].ID != oldID || !keys[1].ExpiresAt.Equal(rolledAt.Add(time.Hour)) {
			t.Errorf("got keys %+v %+v, want %s current then %s ending %s", keys[0], keys[len(keys)-1], newID, oldID, rolledAt.Add(time.Hour))
		}
		rows := auditLog(t, env, 0)
		var rotate, expired *paylink.AuditEvent
		for _, r := range rows {
			switch {
			case r.Action == paylink.AuditAPIKeyRotate:
				rotate = r
			case r.Action == paylink.AuditAuthenticate && r.Detail == "expired":
				expired = r
			}
		}
		if rotate == nil || rotate.MerchantID != m.ID || rotate.ObjectID != newID || rotate.ActorID != "usr_1" ||
			!strings.Contains(rotate.Detail, "previous="+oldID) || strings.Contains(rotate.Detail, newKey) {
			t.Errorf("got rotate row %+v, want %s of %s by usr_1 naming %s", rotate, newID, m.ID, oldID)
		}
		if expired == nil || expired.ObjectID != oldID || expired.Outcome != paylink.OutcomeDenied {
			t.Errorf("got expired-key row %+v, want a denied row naming %s", expired, oldID)
		}
	})
}

// TestRollAPIKeyWithoutOverlap: an overlap of 0 revokes every previous
// key at once, including one this instance had just cached, and a key
// already ending keeps its earlier end.
func TestRollAPIKeyWithoutOverlap(t *testing.T) {
	onEngines(t, func(t *testing.T, env *apitest.Env) {
		ctx := context.Background()
		svc := env.Service
		m := env.Onboard()
		first := m.Creds.APIKey
		second, err := svc.RollAPIKey(ctx, m.ID, "", time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		wantAuth(t, svc, "first key in its overlap (cached)", first, true)
		wantAuth(t, svc, "second key (cached)", second, true)
		third, err := svc.RollAPIKey(ctx, m.ID, "", 0)
		if err != nil {
			t.Fatal(err)
		}
		wantAuth(t, svc, "first key after a roll without overlap", first, false)
		wantAuth(t, svc, "second key after a roll without overlap", second, false)
		wantAuth(t, svc, "third key", third, true)
		env.Clock.Advance(2 * time.Hour)
		wantAuth(t, svc, "third key later", third, true)
	})
}

// TestRollAPIKeyOnAnotherInstance: an instance that cached the previous
// key before another instance rolled it reads the key's end when its
// cache entry runs out, and refuses the key from that end on, not a
// cache period later.
func TestRollAPIKeyOnAnotherInstance(t *testing.T) {
	test := func(t *testing.T, a *apitest.Env, dsn string) {
		b := apitest.Start(t, apitest.Options{DSN: dsn, Clock: a.Clock})
		m := a.Onboard()
		wantAuth(t, b.Service, "old key on b before the roll", m.Creds.APIKey, true)
		overlap := 3 * paylink.AuthCacheTTL
		newKey, err := a.Service.RollAPIKey(context.Background(), m.ID, "", overlap)
		if err != nil {
			t.Fatal(err)
		}
		wantAuth(t, b.Service, "new key on b", newKey, true)
		a.Clock.Advance(paylink.AuthCacheTTL + time.Second)
		wantAuth(t, b.Service, "old key on b inside the overlap, read again", m.Creds.APIKey, true)
		a.Clock.Advance(overlap - paylink.AuthCacheTTL - time.Second)
		wantAuth(t, b.Service, "old key on b at the end of the overlap", m.Creds.APIKey, false)
	}
	onEnginesShared(t, test)
}

// TestRollAPIKeyWhileAuthenticating: requests authenticating the old key
// while a roll without overlap commits may read it before the commit, but
// none of them leaves it cached: once the roll returns, the old key is
// refused. Run with -race.
func TestRollAPIKeyWhileAuthenticating(t *testing.T) {
	onEngines(t, func(t *testing.T, env *apitest.Env) {
		m := env.Onboard()
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
						env.Service.Authenticate(context.Background(), m.Creds.APIKey)
					}
				}
			}()
		}
		newKey, err := env.Service.RollAPIKey(context.Background(), m.ID, "", 0)
		for range 50 {
			if ok, _ := authenticates(t, env.Service, m.Creds.APIKey); ok {
				t.Error("the old key authenticated after a roll without overlap returned")
				break
			}
		}
		close(stop)
		wg.Wait()
		if err != nil {
			t.Fatal(err)
		}
		wantAuth(t, env.Service, "new key", newKey, true)
	})
}

// TestRacingRollsAndRotationsFromOnePage: six API key rolls, and six
// webhook secret rotations, sent at once, each naming the key or secret
// a page showed: exactly one of each is carried out, the others refused
// as conflicts, on both engines (verification sweep: on PostgreSQL two
// to six racing rolls all passed the check, each reading the old key
// before the others committed).
func TestRacingRollsAndRotationsFromOnePage(t *testing.T) {
	onEngines(t, func(t *testing.T, env *apitest.Env) {
		ctx := context.Background()
		for round := range 5 {
			m := env.Onboard()
			mm, err := env.Service.Merchant(ctx, m.ID)
			if err != nil {
				t.Fatal(err)
			}
			secret := mm.Settings.Webhook.Secrets[0].Version()
			for name, act := range map[string]func() error{
				"roll": func() error { _, err := env.Service.RollAPIKey(ctx, m.ID, m.APIKeyID(), time.Hour); return err },
				"rotation": func() error {
					_, err := env.Service.RotateWebhookSecret(ctx, m.ID, secret, time.Hour)
					return err
				},
			} {
				if done := racing(t, 6, act); done != 1 {
					t.Errorf("round %d: %d of 6 racing %ss from one page carried out, want 1", round, done, name)
				}
			}
		}
	})
}

// racing runs act n times at once and counts those that succeeded; any
// failure but a conflict is the test's error.
func racing(t *testing.T, n int, act func() error) int {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, n)
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			errs[i] = act()
		})
	}
	close(start)
	wg.Wait()
	done := 0
	for _, err := range errs {
		switch {
		case err == nil:
			done++
		case paylink.AsError(err).Kind != paylink.KindConflict:
			t.Errorf("a racing call: %v, want success or a conflict", err)
		}
	}
	return done
}
