package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/sqlstore"
	"github.com/paylink/paylink/internal/vault"
)

// Keys: master key rotation (docs/operations.md, "Key rotation").

// runKeys runs the master key commands.
func runKeys(ctx context.Context, env environment, args []string) error {
	return runSubcommand(ctx, env, "keys", []subcommand{
		{"rotate", "re-encrypt stored secrets under the current master key", runKeysRotate},
	}, args)
}

// errOldKeysInUse makes `keys rotate` exit non-zero when secrets are still
// sealed under an old key after it ran, so scripts can tell.
var errOldKeysInUse = errors.New("some secrets still use an old key: run paylink keys rotate again")

func runKeysRotate(ctx context.Context, env environment, args []string) error {
	f := newFlags("keys rotate", env)
	dsn := f.str("db", defaultDB, "database DSN")
	batch := f.Int("batch", 100, "secrets re-encrypted per database transaction, 1 to 10000")
	if err := f.parse(args); err != nil {
		return ignoreHelp(err)
	}
	if err := inRange("batch", *batch, 1, 10000); err != nil {
		return err
	}
	d, err := sqlstore.ParseDSN(*dsn)
	if err != nil {
		return err
	}
	log := newLogger(env.stderr)
	st, err := openExistingStore(ctx, *dsn, sqlstore.WithLogger(log))
	if err != nil {
		return err
	}
	defer st.Close()
	if err := refuseNewerSchema(ctx, st); err != nil {
		return err
	}
	if err := checkKeyFileFor(ctx, env, st, *dsn); err != nil {
		return err // a new key file would open none of the merchants' secrets
	}
	var v *vault.Vault
	if env.getenv("PAYLINK_MASTER_KEY") == "" && d.Engine == sqlstore.SQLite {
		unlock, err := vault.LockKeyFile(keyFilePath(d))
		if err != nil {
			return err
		}
		defer unlock()
		v, err = rotateKeyFile(ctx, env, st, keyFilePath(d), log)
		if err != nil {
			return err
		}
	} else if v, err = openVault(env, *dsn, log); err != nil {
		return err
	} else if err := opensSecrets(ctx, st, v, log); err != nil {
		return err
	}
	svc, err := rotationService(st, v, log)
	if err != nil {
		return err
	}
	defer closeService(svc, log)
	fmt.Fprintf(env.stdout, "active key: %s\n", v.KeyID())
	res, err := svc.RotateKeys(ctx, paylink.KeyRotation{Batch: *batch, OnBatch: func(r paylink.RotationResult) {
		fmt.Fprintf(env.stderr, "re-encrypted %d so far\n", r.Resealed)
	}})
	fmt.Fprintf(env.stdout, "re-encrypted: %d\nfingerprints recomputed: %d\n", res.Resealed, res.Fingerprinted)
	if res.Unreadable > 0 {
		fmt.Fprintf(env.stdout, "could not open: %d (sealed under a key this command was not given, or damaged: the log names each)\n", res.Unreadable)
	}
	if err != nil {
		return fmt.Errorf("key rotation stopped: %w", err)
	}
	fmt.Fprintf(env.stdout, "still under an old key: %d\n", res.Remaining)
	if res.Remaining > 0 {
		return errOldKeysInUse
	}
	return nil
}

// refuseNewerSchema refuses a database whose schema is newer than this
// binary's: a later release may seal secrets in columns this one does not
// know, which a rotation would leave under the old key while reporting
// none left.
func refuseNewerSchema(ctx context.Context, st *sqlstore.Store) error {
	have, err := st.AppliedVersion(ctx)
	if err != nil {
		return err
	}
	if want := sqlstore.SchemaVersion(st.Engine()); have > want {
		return fmt.Errorf("keys rotate: the database is at schema version %d, newer than this paylink's %d: "+
			"a later release may seal secrets this one does not know of; run that release's paylink keys rotate", have, want)
	}
	return nil
}

// rotationService is a service for key rotation with the vault v, which
// may differ from the one openVault would give (a key file being
// rotated). Rotation calls no processor and renders no page.
func rotationService(st *sqlstore.Store, v *vault.Vault, log *slog.Logger) (*paylink.Service, error) {
	return paylink.NewService(paylink.Config{}, paylink.Deps{Store: st, Vault: v, Logger: log})
}

// rotateKeyFile prepares the SQLite key file for a rotation and returns
// the vault to rotate with. A rotation still under way (a previous key in
// the file and secrets sealed under an old key) is resumed with the keys
// as they are. Otherwise previous keys that nothing uses any more are
// dropped, and a new active key is put first, the old active key kept as
// previous until the next rotation finds nothing sealed under it. Within
// keyDropGrace of the last rotation no key is dropped, whatever the
// database says (recentRotation).
func rotateKeyFile(ctx context.Context, env environment, st *sqlstore.Store, path string, log *slog.Logger) (*vault.Vault, error) {
	keys, err := vault.LoadOrCreateKeyFile(path)
	if err != nil {
		return nil, fmt.Errorf("master key file: %w", err)
	}
	previous, err := previousKeys(env)
	if err != nil {
		return nil, err
	}
	v, err := vault.New(append(keys, previous...)...)
	if err != nil {
		return nil, err
	}
	if err := opensSecrets(ctx, st, v, log); err != nil {
		return nil, err
	}
	svc, err := rotationService(st, v, log)
	if err != nil {
		return nil, err
	}
	defer closeService(svc, log)
	pending, err := svc.CountSecretsToRotate(ctx)
	if err != nil {
		return nil, err
	}
	if len(keys) > 1 && pending > 0 {
		fmt.Fprintf(env.stdout, "resuming a rotation: %d secrets still under an old key\n", pending)
		return v, nil
	}
	kept, verb := keys[:1], "dropped previous key %s: nothing is sealed under it\n"
	if recentRotation(path) {
		kept, verb = keys, "kept previous key %s: the last rotation was less than "+keyDropGrace.String()+
			" ago, and a serving paylink may still be storing a secret it sealed under it\n"
	}
	for _, k := range keys[1:] {
		id, err := vault.KeyIDOf(k)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(env.stdout, verb, id)
	}
	key, err := vault.NewKey()
	if err != nil {
		return nil, err
	}
	keys = append([][]byte{key}, kept...)
	if err := vault.WriteKeyFile(path, keys); err != nil {
		return nil, err
	}
	fmt.Fprintf(env.stdout, "new key written to %s; the previous key is kept until the next rotation\n", path)
	return vault.New(append(keys, previous...)...)
}

// opensSecrets refuses a rotation whose keys do not open the stored
// secrets, as serve refuses to start (CheckSecretsOpen), before anything
// is written: with another database's key file, a rotation wrote a new
// key into it and logged a failure for every secret.
func opensSecrets(ctx context.Context, st *sqlstore.Store, v *vault.Vault, log *slog.Logger) error {
	svc, err := rotationService(st, v, log)
	if err != nil {
		return err
	}
	defer closeService(svc, log)
	if err := svc.CheckSecretsOpen(ctx); err != nil {
		return fmt.Errorf("%w: nothing was changed (give the keys the secrets were sealed under: the key file, PAYLINK_MASTER_KEY, PAYLINK_PREVIOUS_MASTER_KEYS)", err)
	}
	return nil
}

// keyDropGrace is how long after a rotation its demoted key stays in the
// key file even when the database holds nothing sealed under it: a
// serving paylink re-reads the file about once a second
// (vault.KeyFileRecheck) and seals a card before the transaction that
// stores it, which may commit up to MaxRequestTime later, and a
// transaction token authenticated under the key may be spent up to
// MaxTransactionTokenTTL after it was issued. Two rotations run back to
// back would otherwise drop a key a card is about to be stored under, for
// good, or refuse a customer's token minutes into its life.
const keyDropGrace = max(paylink.MaxRequestTime, paylink.MaxTransactionTokenTTL) + 30*time.Second

// recentRotation reports whether the key file at path was written (by a
// rotation) less than keyDropGrace ago; true when that cannot be told.
func recentRotation(path string) bool {
	fi, err := os.Stat(path)
	return err != nil || time.Since(fi.ModTime()) < keyDropGrace
}
