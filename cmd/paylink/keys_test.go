package main

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/sqlstore"
	"github.com/paylink/paylink/internal/vault"
)

// rotationEnv is one engine set up for key rotation tests: a database, a
// serving service and the environment of `paylink keys rotate`.
type rotationEnv struct {
	dsn      string
	engine   sqlstore.Engine
	store    *sqlstore.Store
	tokenise *paylink.Service // the service the cards were vaulted with
	serve    *paylink.Service // the service that keeps serving during the rotation
	rotate   map[string]string
	oldKeyID string
}

// newRotationEnv sets an engine up. On SQLite the serving service follows
// the key file, as `paylink serve` does; on PostgreSQL the keys come from
// the environment and the instances were restarted with the new key
// active and the old one previous before the rotation (the documented
// procedure).
func newRotationEnv(t *testing.T, engine sqlstore.Engine) *rotationEnv {
	t.Helper()
	e := &rotationEnv{engine: engine}
	var tokeniseVars, serveVars map[string]string
	if engine == sqlstore.SQLite {
		e.dsn = filepath.Join(t.TempDir(), "paylink.db")
	} else {
		e.dsn = pg.Database(t)
		oldKey, newKey := strings.Repeat("1a", 32), strings.Repeat("2b", 32)
		tokeniseVars = map[string]string{"PAYLINK_MASTER_KEY": oldKey}
		serveVars = map[string]string{"PAYLINK_MASTER_KEY": newKey, "PAYLINK_PREVIOUS_MASTER_KEYS": oldKey}
		e.rotate = serveVars
	}
	st, err := openStore(context.Background(), e.dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	e.store = st
	if e.tokenise, err = newService(context.Background(), envWith(tokeniseVars), st, e.dsn, paylink.Config{}, nil); err != nil {
		t.Fatal(err)
	}
	e.serve = e.tokenise
	if engine == sqlstore.Postgres {
		if e.serve, err = newService(context.Background(), envWith(serveVars), st, e.dsn, paylink.Config{}, nil); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// keysRotate runs `paylink keys rotate` and returns its output.
func (e *rotationEnv) keysRotate(ctx context.Context, stderr io.Writer, extra ...string) (string, error) {
	var out bytes.Buffer
	args := append([]string{"keys", "rotate", "--db", e.dsn}, extra...)
	err := run(ctx, args, func(k string) string { return e.rotate[k] }, &out, stderr)
	return out.String(), err
}

// merchantCards is a merchant with its credentials and card tokens.
type merchantCards struct {
	m      *paylink.Merchant
	creds  paylink.Credentials
	tokens []string
	pans   []string // the PAN of each token
}

var testPANs = []string{"4111111111111111", "5555555555554444", "4242424242424242"}

// vaultCards onboards merchants and tokenises n multi-use cards for each
// (the same PANs at every merchant), remembering the old key id.
func (e *rotationEnv) vaultCards(t *testing.T, merchants, n int) []*merchantCards {
	t.Helper()
	ctx := context.Background()
	var out []*merchantCards
	for i := range merchants {
		m, creds, err := e.tokenise.CreateMerchant(ctx, paylink.NewMerchant{Name: fmt.Sprintf("Shop %d Pty Ltd", i), TradingName: "Shop",
			Country: "AU", Settings: paylink.MerchantSettings{Surcharge: paylink.DefaultSurchargeRates()}})
		if err != nil {
			t.Fatal(err)
		}
		mc := &merchantCards{m: m, creds: creds}
		for j := range n {
			pan := testPANs[j%len(testPANs)]
			c, err := e.tokenise.TokenizeCard(ctx, m, paylink.TokenizeRequest{CompanyToken: creds.CompanyToken, MultiUse: true,
				Card: &paylink.CardDetails{Number: pan, ExpiryMonth: 12, ExpiryYear: time.Now().Year() + 3, HolderName: "Jo Citizen"}})
			if err != nil {
				t.Fatal(err)
			}
			e.oldKeyID = c.Sealed.KeyID
			mc.tokens, mc.pans = append(mc.tokens, c.Token), append(mc.pans, pan)
		}
		out = append(out, mc)
	}
	return out
}

// purchase pays 10.00 with a card token through the serving service.
func (e *rotationEnv) purchase(ctx context.Context, mc *merchantCards, token string) error {
	tt, err := e.serve.IssueTransactionToken(ctx, mc.m, mc.creds.CompanyToken)
	if err != nil {
		return fmt.Errorf("transaction token: %w", err)
	}
	tr, err := e.serve.Purchase(ctx, mc.m, paylink.PurchaseRequest{CompanyToken: mc.creds.CompanyToken, TransactionToken: tt,
		CardToken: token, Amount: 1000, Currency: "AUD",
		Customer: paylink.Customer{IPAddress: "203.0.113.7", Timezone: "Australia/Sydney"}})
	if err != nil {
		return fmt.Errorf("purchase: %w", err)
	}
	if tr.Status != paylink.StatusApproved {
		return fmt.Errorf("purchase: got status %s, want APPROVED", tr.Status)
	}
	return nil
}

// underKey counts the stored secrets sealed under keyID, read straight
// from the tables: cards, direct debits, link tokens, webhook secrets.
func (e *rotationEnv) underKey(t *testing.T, keyID string) int {
	t.Helper()
	var total int
	for _, q := range []string{
		`SELECT COUNT(*) FROM cards WHERE key_id = $1 OR fingerprint_key_id = $1`,
		`SELECT COUNT(*) FROM transactions WHERE secret_key_id = $1`,
		`SELECT COUNT(*) FROM payment_links WHERE tokens_key_id = $1`,
		`SELECT COUNT(*) FROM merchants WHERE settings LIKE '%' || $1 || '%'`,
	} {
		var n int
		if err := e.store.DB().QueryRow(q, keyID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		total += n
	}
	return total
}

func rotationEngines(t *testing.T, fn func(t *testing.T, engine sqlstore.Engine)) {
	for _, engine := range []sqlstore.Engine{sqlstore.SQLite, sqlstore.Postgres} {
		t.Run(string(engine), func(t *testing.T) { fn(t, engine) })
	}
}

var reencrypted = regexp.MustCompile(`(?m)^re-encrypted: (\d+)$`)

// reencryptedCount reads "re-encrypted: N" from the command's output.
func reencryptedCount(t *testing.T, out string) int {
	t.Helper()
	m := reencrypted.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no re-encrypted count in output:\n%s", out)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// TestKeyRotationWhileServing: card tokens keep working while `paylink
// keys rotate` re-encrypts them (on PostgreSQL, two rotations at once),
// and afterwards every token still pays and nothing is left under the old
// key.
func TestKeyRotationWhileServing(t *testing.T) {
	rotationEngines(t, func(t *testing.T, engine sqlstore.Engine) {
		e := newRotationEnv(t, engine)
		shops := e.vaultCards(t, 2, 12)
		secrets := 2*12 + 2 // cards and one webhook secret per merchant
		if got := e.underKey(t, e.oldKeyID); got != secrets {
			t.Fatalf("before: got %d secrets under the old key, want %d", got, secrets)
		}
		ctx := context.Background()
		stop := make(chan struct{})
		var wg sync.WaitGroup
		var mu sync.Mutex
		var failures []error
		var paid int
		for _, mc := range shops {
			wg.Go(func() {
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					err := e.purchase(ctx, mc, mc.tokens[i%len(mc.tokens)])
					mu.Lock()
					if err != nil {
						failures = append(failures, err)
					} else {
						paid++
					}
					mu.Unlock()
				}
			})
		}
		rotations := 1
		if engine == sqlstore.Postgres {
			rotations = 2 // keys from the environment: two rotations may run at once (batches of one, so they interleave)
		}
		outs := make([]string, rotations)
		errs := make([]error, rotations)
		var rw sync.WaitGroup
		for i := range rotations {
			rw.Go(func() { outs[i], errs[i] = e.keysRotate(ctx, io.Discard, "--batch", "1") })
		}
		rw.Wait()
		close(stop)
		wg.Wait()
		total := 0
		for i := range rotations {
			if errs[i] != nil {
				t.Fatalf("keys rotate %d: %v\n%s", i, errs[i], outs[i])
			}
			if !strings.Contains(outs[i], "still under an old key: 0") {
				t.Errorf("keys rotate %d: got output\n%s\nwant it to say nothing is left under an old key", i, outs[i])
			}
			total += reencryptedCount(t, outs[i])
		}
		if total != secrets {
			t.Errorf("got %d re-encryptions in all, want each of the %d secrets re-encrypted exactly once", total, secrets)
		}
		for _, err := range failures {
			t.Errorf("purchase during the rotation: %v", err)
		}
		if paid == 0 {
			t.Errorf("no purchase completed during the rotation")
		}
		for _, mc := range shops {
			for _, tok := range mc.tokens {
				if err := e.purchase(ctx, mc, tok); err != nil {
					t.Errorf("after the rotation: %v", err)
				}
			}
		}
		if got := e.underKey(t, e.oldKeyID); got != 0 {
			t.Errorf("after: got %d secrets under the old key %s, want 0", got, e.oldKeyID)
		}
		checkFingerprints(t, e, shops)
		if engine == sqlstore.SQLite {
			checkKeyFile(t, e, 2)
		}
	})
}

// checkFingerprints: after the rotation, fingerprints are per merchant:
// equal for one card at one merchant, different across merchants.
func checkFingerprints(t *testing.T, e *rotationEnv, shops []*merchantCards) {
	t.Helper()
	byShopPAN := map[string]string{}
	for _, mc := range shops {
		for i, tok := range mc.tokens {
			c, err := e.serve.LookupCard(context.Background(), mc.m, mc.creds.CompanyToken, tok)
			if err != nil {
				t.Fatal(err)
			}
			key := mc.m.ID + "/" + mc.pans[i]
			if prev, ok := byShopPAN[key]; ok && prev != c.Info.Fingerprint {
				t.Errorf("one card at one merchant: got fingerprints %s and %s, want equal", prev, c.Info.Fingerprint)
			}
			byShopPAN[key] = c.Info.Fingerprint
		}
	}
	for _, pan := range testPANs {
		if a, b := byShopPAN[shops[0].m.ID+"/"+pan], byShopPAN[shops[1].m.ID+"/"+pan]; a == b {
			t.Errorf("one card at two merchants: got the same fingerprint %s, want different ones", a)
		}
	}
}

// checkKeyFile: the key file holds the new active key and, until the
// next rotation, the old one.
func checkKeyFile(t *testing.T, e *rotationEnv, want int) {
	t.Helper()
	keys, err := vault.ReadKeyFile(e.dsn + ".key")
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != want {
		t.Fatalf("got %d keys in the key file, want %d", len(keys), want)
	}
	active, _ := vault.KeyIDOf(keys[0])
	previous, _ := vault.KeyIDOf(keys[len(keys)-1])
	if active == e.oldKeyID || (want > 1 && previous != e.oldKeyID) {
		t.Errorf("got key file [%s ... %s], want the new key first and the old %s kept after it", active, previous, e.oldKeyID)
	}
}

// cancelOnWrite cancels a context on its first write: the rotate command
// reports each committed batch on stderr, so this interrupts it right
// after its first batch, as a Ctrl-C or a crash would.
type cancelOnWrite struct{ cancel context.CancelFunc }

func (c cancelOnWrite) Write(p []byte) (int, error) {
	c.cancel()
	return len(p), nil
}

// TestKeyRotationResumesAfterInterruption: a rotation stopped after one
// batch leaves that batch re-encrypted and the rest under the old key
// (exit status says so); running it again resumes, without another new
// key, and finishes.
func TestKeyRotationResumesAfterInterruption(t *testing.T) {
	rotationEngines(t, func(t *testing.T, engine sqlstore.Engine) {
		e := newRotationEnv(t, engine)
		shops := e.vaultCards(t, 1, 10)
		secrets := 10 + 1
		ctx, cancel := context.WithCancel(context.Background())
		out, err := e.keysRotate(ctx, cancelOnWrite{cancel}, "--batch", "4")
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("interrupted rotation: got %v, want context.Canceled\n%s", err, out)
		}
		if got := reencryptedCount(t, out); got != 4 {
			t.Errorf("interrupted rotation: got %d re-encrypted, want one batch of 4", got)
		}
		if got := e.underKey(t, e.oldKeyID); got != secrets-4 {
			t.Errorf("after the interruption: got %d secrets under the old key, want %d", got, secrets-4)
		}
		// Its audit row says what it left (key rotation sweep: remaining=0
		// while 410 were left).
		if row := lastRotationAudit(t, e); row.Outcome != paylink.OutcomeFailure || !strings.Contains(row.Detail, fmt.Sprintf("remaining=%d stopped", secrets-4)) {
			t.Errorf("the interrupted rotation's audit row: got %+v, want a failure with remaining=%d stopped", row, secrets-4)
		}
		if err := e.purchase(context.Background(), shops[0], shops[0].tokens[0]); err != nil {
			t.Errorf("purchase between the runs: %v", err)
		}
		out, err = e.keysRotate(context.Background(), io.Discard, "--batch", "4")
		if err != nil {
			t.Fatalf("resumed rotation: %v\n%s", err, out)
		}
		if got := reencryptedCount(t, out); got != secrets-4 {
			t.Errorf("resumed rotation: got %d re-encrypted, want the remaining %d", got, secrets-4)
		}
		if got := e.underKey(t, e.oldKeyID); got != 0 {
			t.Errorf("after resuming: got %d secrets under the old key, want 0", got)
		}
		if engine == sqlstore.SQLite {
			if !strings.Contains(out, "resuming a rotation") {
				t.Errorf("resumed rotation output:\n%s\nwant it to say it resumed", out)
			}
			checkKeyFile(t, e, 2) // resumed with the same new key, not a third one
		}
		for _, tok := range shops[0].tokens {
			if err := e.purchase(context.Background(), shops[0], tok); err != nil {
				t.Errorf("after the rotation: %v", err)
			}
		}
	})
}

// TestKeyRotationExitStatusAndKeyFileLifecycle: on the SQLite key file a
// finished rotation keeps the old key as previous; the next rotation
// drops it (nothing uses it) and adds another key; a secret under a key
// the command does not have makes the exit status non-zero.
func TestKeyRotationExitStatusAndKeyFileLifecycle(t *testing.T) {
	e := newRotationEnv(t, sqlstore.SQLite)
	shops := e.vaultCards(t, 1, 2)
	first := e.oldKeyID
	recovery := enrolTwoFactor(t, e.tokenise, shops[0].m.ID)
	var progress bytes.Buffer
	if out, err := e.keysRotate(context.Background(), &progress); err != nil {
		t.Fatalf("first rotation: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(progress.String()), "\n")
	for i := 1; i < len(lines); i++ {
		if lines[i] == lines[i-1] {
			t.Errorf("progress repeats a line:\n%s", progress.String())
		}
	}
	// A second rotation right after the first keeps the first key: a
	// serving paylink may still be storing a card it sealed under it.
	out, err := e.keysRotate(context.Background(), io.Discard)
	if err != nil {
		t.Fatalf("second rotation: %v\n%s", err, out)
	}
	if !strings.Contains(out, "kept previous key "+first) {
		t.Errorf("second rotation, right after the first, output:\n%s\nwant it to keep the first key %s", out, first)
	}
	if keys, err := vault.ReadKeyFile(e.dsn + ".key"); err != nil || len(keys) != 3 {
		t.Fatalf("after two rotations back to back: got %d keys (%v), want 3", len(keys), err)
	}
	// A transaction token's lifetime after the last rotation, nothing is
	// dropped yet: a token issued under the first key may still be spent
	// (key rotation sweep: with 2 minutes of grace, a 5-minute token was
	// refused after two rotations).
	within := time.Now().Add(-paylink.DefaultTransactionTokenTTL)
	if err := os.Chtimes(e.dsn+".key", within, within); err != nil {
		t.Fatal(err)
	}
	if out, err := e.keysRotate(context.Background(), io.Discard); err != nil || !strings.Contains(out, "kept previous key "+first) {
		t.Errorf("a rotation a token's lifetime after the last: %v, output:\n%s\nwant it to keep the first key %s", err, out, first)
	}
	// Past keyDropGrace, the next rotation drops what nothing uses.
	past := time.Now().Add(-keyDropGrace - time.Second)
	if err := os.Chtimes(e.dsn+".key", past, past); err != nil {
		t.Fatal(err)
	}
	out, err = e.keysRotate(context.Background(), io.Discard)
	if err != nil {
		t.Fatalf("third rotation: %v\n%s", err, out)
	}
	if !strings.Contains(out, "dropped previous key "+first) {
		t.Errorf("third rotation output:\n%s\nwant it to drop the first key %s", out, first)
	}
	keys, err := vault.ReadKeyFile(e.dsn + ".key")
	if err != nil || len(keys) != 2 {
		t.Fatalf("after three rotations: got %d keys (%v), want 2 (active and previous)", len(keys), err)
	}
	for _, k := range keys {
		if id, _ := vault.KeyIDOf(k); id == first {
			t.Errorf("the first key %s is still in the key file", first)
		}
	}
	for _, tok := range shops[0].tokens {
		if err := e.purchase(context.Background(), shops[0], tok); err != nil {
			t.Errorf("after three rotations: %v", err)
		}
	}
	if err := secondFactor(e.serve, recovery); err != nil {
		t.Errorf("two-factor sign-in after three rotations: %v", err)
	}

	stranger, err := vault.New(bytes.Repeat([]byte{9}, vault.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := paylink.NewService(paylink.Config{}, paylink.Deps{Store: e.store, Vault: stranger})
	if err != nil {
		t.Fatal(err)
	}
	defer foreign.Close(context.Background())
	card, err := foreign.TokenizeCard(context.Background(), shops[0].m, paylink.TokenizeRequest{CompanyToken: shops[0].creds.CompanyToken,
		Card: &paylink.CardDetails{Number: testPANs[0], ExpiryMonth: 12, ExpiryYear: time.Now().Year() + 3}})
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	out, err = e.keysRotate(context.Background(), &logs)
	if !errors.Is(err, errOldKeysInUse) || !strings.Contains(out, "could not open: 1") || !strings.Contains(out, "still under an old key: 1") {
		t.Errorf("with a secret under an unknown key: got %v and output\n%s\nwant errOldKeysInUse, 1 not opened, 1 left", err, out)
	}
	// The log names the card the operator must deal with, by what is no
	// credential: its merchant and fingerprint, never its token (key
	// rotation sweep: it named the kind alone).
	if l := logs.String(); !strings.Contains(l, `"secret":"fingerprint `+card.Info.Fingerprint) || !strings.Contains(l, shops[0].m.ID) || strings.Contains(l, card.Token) {
		t.Errorf("the log of the card it could not open:\n%s\nwant its merchant and fingerprint, not its token", l)
	}
}

// TestKeyRotationMigratesLegacyFingerprints: cards fingerprinted before
// fingerprints were per merchant (one service-wide value, no key id) get
// the per-merchant fingerprint from RotateKeys, with no key change, at
// the Service level on both engines.
func TestKeyRotationMigratesLegacyFingerprints(t *testing.T) {
	rotationEngines(t, func(t *testing.T, engine sqlstore.Engine) {
		e := newRotationEnv(t, engine)
		e.serve = e.tokenise // no new key: only the fingerprints are out of date
		shops := e.vaultCards(t, 2, 3)
		want := map[string]string{}
		for _, mc := range shops {
			for _, tok := range mc.tokens {
				c, err := e.serve.LookupCard(context.Background(), mc.m, mc.creds.CompanyToken, tok)
				if err != nil {
					t.Fatal(err)
				}
				want[tok] = c.Info.Fingerprint
			}
		}
		driver, source := "pgx", e.dsn
		if engine == sqlstore.SQLite {
			driver = "sqlite"
		}
		raw, err := sql.Open(driver, source)
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
		if _, err := raw.Exec(`UPDATE cards SET fingerprint = 'legacy-service-wide', fingerprint_key_id = ''`); err != nil {
			t.Fatal(err)
		}
		res, err := e.serve.RotateKeys(context.Background(), paylink.KeyRotation{Batch: 2})
		if err != nil {
			t.Fatal(err)
		}
		if res.Resealed != 0 || res.Fingerprinted != 6 || res.Remaining != 0 {
			t.Errorf("got %+v, want 0 re-sealed, 6 fingerprints recomputed, 0 remaining", res)
		}
		for _, mc := range shops {
			for _, tok := range mc.tokens {
				c, err := e.serve.LookupCard(context.Background(), mc.m, mc.creds.CompanyToken, tok)
				if err != nil {
					t.Fatal(err)
				}
				if c.Info.Fingerprint != want[tok] || c.FingerprintKeyID == "" || c.FingerprintKeyID != c.Sealed.KeyID {
					t.Errorf("after migration: got fingerprint %s under %q, want %s under the active key", c.Info.Fingerprint, c.FingerprintKeyID, want[tok])
				}
			}
		}
	})
}

// TestKeysRotateBesideARunningServer: the real binary rotates the key
// file of a database a `paylink serve` process is serving; that process
// opens the re-encrypted card, serves a card vaulted just after the
// rotation (sealed under either key: the server looks at its key file at
// most once per vault.KeyFileRecheck) and seals cards under the new key
// once that time has passed, without a restart.
func TestKeysRotateBesideARunningServer(t *testing.T) {
	db := filepath.Join(t.TempDir(), "paylink.db")
	c := createMerchant(t, db)
	s := startServe(t, db)
	tokenise := func() string {
		t.Helper()
		code, out := s.post(c.APIKey, "/v5/tokenize_card", map[string]any{"company_token": c.CompanyToken,
			"card": testCard("4111111111111111"), "customer": map[string]any{"store_card_permission": true}})
		tok, _ := get(out, "card.token").(string)
		if code != 200 || tok == "" {
			t.Fatalf("tokenize: %d %v", code, out)
		}
		return tok
	}
	before := tokenise()
	out, err := exec.Command(binary, "keys", "rotate", "--db", db).Output()
	if err != nil || !strings.Contains(string(out), "still under an old key: 0") {
		t.Fatalf("keys rotate: %v\n%s", err, out)
	}
	soon := tokenise()
	time.Sleep(vault.KeyFileRecheck)
	after := tokenise()
	for _, tok := range []string{before, soon, after} {
		got := s.purchase(c, map[string]any{"token": tok}, "12.00", nil)
		if st := get(got, "purchase.status"); st != "APPROVED" {
			t.Errorf("purchase with a card token after the rotation: got %v, want APPROVED", st)
		}
	}
	keys, err := vault.ReadKeyFile(db + ".key")
	if err != nil {
		t.Fatal(err)
	}
	active, _ := vault.KeyIDOf(keys[0])
	st, err := sqlstore.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var stale int
	if err := st.DB().QueryRow(`SELECT COUNT(*) FROM cards WHERE key_id <> $1 AND token <> $2`, active, soon).Scan(&stale); err != nil {
		t.Fatal(err)
	}
	if stale != 0 {
		t.Errorf("got %d cards sealed under another key than the new active %s, want 0 (the server must seal new cards under it)", stale, active)
	}
}

// Two-factor sign-in across rotations: a staff user's TOTP secret is
// sealed like the other secrets.
const (
	staffEmail    = "owner@example.com"
	staffPassword = "correct staple battery horse"
)

// enrolTwoFactor creates an admin of merchant mid with two-factor sign-in
// on and returns one of its recovery codes.
func enrolTwoFactor(t *testing.T, svc *paylink.Service, mid string) string {
	t.Helper()
	ctx := context.Background()
	if _, err := svc.CreateUser(ctx, paylink.NewUser{MerchantID: mid, Email: staffEmail, Role: paylink.RoleAdmin, Password: staffPassword}); err != nil {
		t.Fatal(err)
	}
	in, err := svc.SignIn(ctx, staffEmail, staffPassword)
	if err != nil {
		t.Fatal(err)
	}
	ss, err := svc.StaffSession(ctx, in.Token, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	secret, err := svc.BeginTOTP(ctx, ss)
	if err != nil {
		t.Fatal(err)
	}
	codes, err := svc.ConfirmTOTP(ctx, ss, paylink.TOTPCode(secret, time.Now()), staffPassword)
	if err != nil {
		t.Fatal(err)
	}
	return codes[0]
}

// secondFactor signs the enrolled user in with a recovery code, which
// opens the user's sealed TOTP secret first.
func secondFactor(svc *paylink.Service, recovery string) error {
	ctx := context.Background()
	in, err := svc.SignIn(ctx, staffEmail, staffPassword)
	if err != nil {
		return err
	}
	ss, err := svc.StaffSession(ctx, in.Token, time.Hour)
	if err != nil {
		return err
	}
	return svc.VerifySecondFactor(ctx, ss, recovery)
}

// TestKeyRotationResealsIdempotentAnswers: an idempotency key's stored
// answer is sealed (its text is not in the row) and a rotation re-seals
// it, after which the replay still answers with it.
func TestKeyRotationResealsIdempotentAnswers(t *testing.T) {
	rotationEngines(t, func(t *testing.T, engine sqlstore.Engine) {
		e := newRotationEnv(t, engine)
		ctx := context.Background()
		m := e.vaultCards(t, 1, 1)[0].m
		answer := []byte(`{"url":"https://pay.example/pay/SECRETPAGETOKEN"}`)
		hash := []byte("request hash")
		replay, claim, err := e.tokenise.BeginIdempotent(ctx, m, "order-1", hash)
		if err != nil || replay != nil {
			t.Fatalf("claim: got %v, %v", replay, err)
		}
		if err := e.tokenise.FinishIdempotent(ctx, claim, 201, answer); err != nil {
			t.Fatal(err)
		}
		stored := func() (keyID string, response []byte) {
			t.Helper()
			if err := e.store.DB().QueryRow(`SELECT response_key_id, response FROM idempotency_keys WHERE key = 'order-1'`).
				Scan(&keyID, &response); err != nil {
				t.Fatal(err)
			}
			return keyID, response
		}
		if keyID, response := stored(); keyID != e.oldKeyID || bytes.Contains(response, []byte("SECRETPAGETOKEN")) {
			t.Fatalf("stored answer: key %q, %q; want it sealed under %s", keyID, response, e.oldKeyID)
		}
		if out, err := e.keysRotate(ctx, io.Discard); err != nil || !strings.Contains(out, "still under an old key: 0") {
			t.Fatalf("keys rotate: %v\n%s", err, out)
		}
		if keyID, _ := stored(); keyID == e.oldKeyID || keyID == "" {
			t.Errorf("after the rotation: answer under %q, want the new key", keyID)
		}
		replay, _, err = e.serve.BeginIdempotent(ctx, m, "order-1", hash)
		if err != nil || replay == nil || replay.Status != 201 || !bytes.Equal(replay.Response, answer) {
			t.Errorf("replay after the rotation: got %+v, %v; want status 201 and the answer", replay, err)
		}
		var rows []*paylink.AuditEvent
		if err := e.store.View(ctx, func(tx paylink.Tx) error {
			rows, err = tx.AuditEvents(paylink.AuditFilter{Action: paylink.AuditMasterKeyRotate, Limit: 10})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if len(rows) != 1 || rows[0].ActorKind != paylink.ActorCLI || rows[0].ActorID != "keys rotate" ||
			rows[0].Outcome != paylink.OutcomeSuccess || rows[0].ObjectID == e.oldKeyID || !strings.Contains(rows[0].Detail, "re-encrypted=") {
			t.Errorf("audit rows of the rotation: got %+v, want one success by the CLI naming the new key", rows)
		}
	})
}

// TestKeysRotateWithoutItsKeyFile: a SQLite database with merchants whose
// key file is missing (copied without it) is refused, as serve refuses
// it, and no key file is written: a new one would open none of the
// merchants' secrets and could be backed up in place of the real one.
func TestKeysRotateWithoutItsKeyFile(t *testing.T) {
	e := newRotationEnv(t, sqlstore.SQLite)
	e.vaultCards(t, 1, 1)
	if err := os.Rename(e.dsn+".key", e.dsn+".key.elsewhere"); err != nil {
		t.Fatal(err)
	}
	out, err := e.keysRotate(context.Background(), io.Discard)
	if err == nil || !strings.Contains(err.Error(), "is missing") {
		t.Errorf("got %v and output\n%s\nwant the missing key file named", err, out)
	}
	if _, err := os.Stat(e.dsn + ".key"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("key file after the refusal: got %v, want none written", err)
	}
}

// cancelAfter cancels a context on its nth write: the rotate command
// reports each committed batch on stderr.
type cancelAfter struct {
	n      *int
	cancel context.CancelFunc
}

func (c cancelAfter) Write(p []byte) (int, error) {
	if *c.n--; *c.n == 0 {
		c.cancel()
	}
	return len(p), nil
}

// TestARotationStoppedAnywhereIsCaughtAtStartUp: a rotation stopped after
// any batch, whichever kind of secret it was at (cards, two-factor
// secrets, ...), leaves merchants' webhook secrets under the old key, as
// they are rotated last: an instance started without that key refuses to
// start (CheckSecretsOpen samples them) instead of answering two-factor
// sign-ins or card payments with 500s.
func TestARotationStoppedAnywhereIsCaughtAtStartUp(t *testing.T) {
	for stop := 1; stop <= 3; stop++ { // two cards, one two-factor secret, then the webhook secret
		t.Run(fmt.Sprint("after batch ", stop), func(t *testing.T) {
			e := newRotationEnv(t, sqlstore.SQLite)
			shops := e.vaultCards(t, 1, 2)
			enrolTwoFactor(t, e.tokenise, shops[0].m.ID)
			ctx, cancel := context.WithCancel(context.Background())
			n := stop
			if _, err := e.keysRotate(ctx, cancelAfter{&n, cancel}, "--batch", "1"); !errors.Is(err, context.Canceled) {
				t.Fatalf("interrupted rotation: got %v, want context.Canceled", err)
			}
			keys, err := vault.ReadKeyFile(e.dsn + ".key")
			if err != nil {
				t.Fatal(err)
			}
			onlyNew, err := vault.New(keys[0])
			if err != nil {
				t.Fatal(err)
			}
			svc, err := paylink.NewService(paylink.Config{}, paylink.Deps{Store: e.store, Vault: onlyNew})
			if err != nil {
				t.Fatal(err)
			}
			defer svc.Close(context.Background())
			if err := svc.CheckSecretsOpen(context.Background()); err == nil {
				t.Errorf("start-up check with the new key alone after %d batches: passed, want it to refuse", stop)
			}
		})
	}
}

// TestKeysRotateWithTheWrongKeysChangesNothing: a key file that opens
// none of the database's secrets (another database's) is refused before
// anything is written, as serve refuses it (key rotation sweep: the
// rotation wrote a new key into that file and logged a failure for every
// secret).
func TestKeysRotateWithTheWrongKeysChangesNothing(t *testing.T) {
	e := newRotationEnv(t, sqlstore.SQLite)
	e.vaultCards(t, 1, 1)
	key, err := vault.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	path := e.dsn + ".key"
	if err := vault.WriteKeyFile(path, [][]byte{key}); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	out, err := e.keysRotate(context.Background(), &logs)
	if err == nil || !strings.Contains(err.Error(), "nothing was changed") {
		t.Errorf("rotation with another database's key file: got %v\n%s\nwant a refusal saying nothing was changed", err, out)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("the key file was rewritten")
	}
	if strings.Contains(logs.String(), "cannot open a stored secret") {
		t.Errorf("the refusal logged the secrets one by one:\n%s", logs.String())
	}
}

// lastRotationAudit is the newest master_key.rotate audit row.
func lastRotationAudit(t *testing.T, e *rotationEnv) *paylink.AuditEvent {
	t.Helper()
	var rows []*paylink.AuditEvent
	err := e.store.View(context.Background(), func(tx paylink.Tx) error {
		var err error
		rows, err = tx.AuditEvents(paylink.AuditFilter{Action: paylink.AuditMasterKeyRotate, Limit: 1})
		return err
	})
	if err != nil || len(rows) == 0 {
		t.Fatalf("rotation audit rows: %d, %v", len(rows), err)
	}
	return rows[0]
}
