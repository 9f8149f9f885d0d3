package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/sqlstore"
	"github.com/paylink/paylink/internal/vault"
)

// TestRacingRollCommands: two roll-api-key commands, and two
// rotate-webhook-secret commands, that both read the merchant's current
// key (secret) before either rolls it: exactly one of each pair is
// carried out; the other fails saying that another roll was made and
// that it changed nothing, and prints no key. The key (secret) the
// winner printed is the current one, and the secret before the
// rotations still signs for the overlap. Both engines. Without the commands rolling from what
// they read, both of each pair were carried out, the second cutting the
// first's new key off (or dropping the secret receivers verify with).
func TestRacingRollCommands(t *testing.T) {
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			master := strings.Repeat("ab", 32)
			vars := map[string]string{"PAYLINK_MASTER_KEY": master}
			db := filepath.Join(t.TempDir(), "paylink.db")
			if engine == "postgres" {
				db = pg.Database(t)
			}
			out, err := runCLIWith(t, vars, "merchant", "create", "--db", db, "--name", "Acme Pty Ltd", "--trading-name", "Acme", "--json")
			if err != nil {
				t.Fatal(err)
			}
			var c creds
			if err := json.Unmarshal([]byte(out), &c); err != nil {
				t.Fatal(err)
			}
			before := loadMerchant(t, db, c.MID)
			t.Run("roll-api-key", func(t *testing.T) {
				key := raceCommands(t, engine, db, vars, c.MID, "roll-api-key", `api_key: (pl_sk_\w+)`)
				if !paylink.SecretMatches(key, loadMerchant(t, db, c.MID).APIKeyHash) {
					t.Errorf("the key the carried-out roll printed is not the current key")
				}
			})
			t.Run("rotate-webhook-secret", func(t *testing.T) {
				secret := raceCommands(t, engine, db, vars, c.MID, "rotate-webhook-secret", `webhook_secret: (whsec_\S+)`)
				wantSecrets(t, master, c.MID, loadMerchant(t, db, c.MID).Settings.Webhook, secret, before.Settings.Webhook.CurrentSecret())
			})
			// A merchant with no secret yet (one onboarded before
			// secrets were given, or whose secret an operator removed):
			// the first rotation is compare-and-set too, expecting none.
			// Without that both racing first rotations were carried out.
			t.Run("first rotate-webhook-secret", func(t *testing.T) {
				dropWebhookSecrets(t, db, c.MID)
				secret := raceCommands(t, engine, db, vars, c.MID, "rotate-webhook-secret", `webhook_secret: (whsec_\S+)`)
				wantSecrets(t, master, c.MID, loadMerchant(t, db, c.MID).Settings.Webhook, secret, "")
			})
		})
	}
}

// wantSecrets checks that w signs with secret, as printed, and with the
// secret of version previous (with no other when previous is "").
func wantSecrets(t *testing.T, master, mid string, w paylink.WebhookConfig, secret, previous string) {
	t.Helper()
	switch {
	case previous == "" && len(w.Secrets) != 1:
		t.Fatalf("got %d secrets, want the new one alone", len(w.Secrets))
	case previous != "" && (len(w.Secrets) != 2 || w.Secrets[1].Version() != previous):
		t.Fatalf("got %d secrets, want the new one and the one before the rotations (%s)", len(w.Secrets), previous)
	}
	mk, err := vault.ParseKey(master)
	if err != nil {
		t.Fatal(err)
	}
	v, err := vault.New(mk)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := v.Open(w.Secrets[0], paylink.SecretBinding(paylink.SecretWebhookSecret, mid, mid))
	if err != nil {
		t.Fatal(err)
	}
	if "whsec_"+base64.StdEncoding.EncodeToString(plain) != secret {
		t.Errorf("the secret the carried-out rotation printed is not the current secret")
	}
}

// dropWebhookSecrets leaves merchant mid with no webhook signing secret,
// as a merchant onboarded before secrets were given has.
func dropWebhookSecrets(t *testing.T, db, mid string) {
	t.Helper()
	st, err := sqlstore.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	err = st.Update(context.Background(), func(tx paylink.Tx) error {
		m, err := tx.Merchant(mid)
		if err != nil {
			return err
		}
		m.Settings.Webhook.Secrets, m.Settings.Webhook.PreviousUntil = nil, 0
		return tx.UpdateMerchantSettings(mid, m.Settings)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// raceCommands runs merchant sub twice at once while the test holds the
// lock a roll takes (on SQLite the one writer's, on PostgreSQL the
// merchant's settings lock), until both commands said on stderr what
// they roll from (or 5 s passed, less than SQLite's busy timeout). It
// checks that exactly one was carried out and the other refused, and
// returns the secret the one printed (the submatch of want).
func raceCommands(t *testing.T, engine, db string, vars map[string]string, mid, sub, want string) string {
	t.Helper()
	release := holdRollLock(t, engine, db, mid)
	var wg sync.WaitGroup
	outs := make([]bytes.Buffer, 2)
	stderrs := []*watchedWriter{newWatchedWriter(), newWatchedWriter()}
	errs := make([]error, 2)
	for i := range 2 {
		wg.Go(func() {
			defer close(stderrs[i].done)
			errs[i] = run(context.Background(), []string{"merchant", sub, "--db", db, "--merchant", mid, "--overlap", "1h"},
				func(k string) string { return vars[k] }, &outs[i], stderrs[i])
		})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, w := range stderrs {
		w.waitFor(ctx, "Rolling API key", "Rotating the webhook signing secret")
	}
	release()
	wg.Wait()
	var secret string
	done := 0
	for i, err := range errs {
		if err == nil {
			done++
			if m := regexp.MustCompile(want).FindStringSubmatch(outs[i].String()); m != nil {
				secret = m[1]
			}
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, "meanwhile") || !strings.Contains(msg, "nothing was changed") ||
			strings.Contains(msg, "pl_sk_") || strings.Contains(msg, "whsec_") || outs[i].Len() != 0 {
			t.Errorf("%s refused: got %q, stdout %q; want an error saying another roll was made and nothing changed, no secret",
				sub, msg, outs[i].String())
		}
	}
	if done != 1 || secret == "" {
		t.Fatalf("%d of 2 racing %s commands carried out (a secret printed: %t), want 1", done, sub, secret != "")
	}
	return secret
}

// holdRollLock takes the lock a roll of merchant mid waits for, and
// returns its release.
func holdRollLock(t *testing.T, engine, db, mid string) func() {
	t.Helper()
	ctx := context.Background()
	driver, lock, unlock := "sqlite", "BEGIN IMMEDIATE", "ROLLBACK"
	if engine == "postgres" {
		driver, lock, unlock = "pgx", "SELECT pg_advisory_lock(hashtext('settings/"+mid+"'))",
			"SELECT pg_advisory_unlock(hashtext('settings/"+mid+"'))"
	}
	sdb, err := sql.Open(driver, db)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := sdb.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, lock); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release := func() {
		once.Do(func() {
			if _, err := conn.ExecContext(ctx, unlock); err != nil {
				t.Error(err)
			}
			conn.Close()
			sdb.Close()
		})
	}
	t.Cleanup(release)
	return release
}

// watchedWriter is a command's stderr that a test can wait on for a line.
type watchedWriter struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{}
	done    chan struct{} // closed when the command returned
}

func newWatchedWriter() *watchedWriter {
	return &watchedWriter{changed: make(chan struct{}, 1), done: make(chan struct{})}
}

func (w *watchedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	select {
	case w.changed <- struct{}{}:
	default:
	}
	return w.buf.Write(p)
}

// waitFor waits until w holds one of texts, its command returned, or ctx
// ends.
func (w *watchedWriter) waitFor(ctx context.Context, texts ...string) {
	for {
		w.mu.Lock()
		s := w.buf.String()
		w.mu.Unlock()
		for _, text := range texts {
			if strings.Contains(s, text) {
				return
			}
		}
		select {
		case <-w.changed:
		case <-w.done:
			return
		case <-ctx.Done():
			return
		}
	}
}
