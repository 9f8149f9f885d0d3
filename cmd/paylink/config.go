package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/httpx"
	"github.com/paylink/paylink/internal/passwords"
	"github.com/paylink/paylink/internal/processor"
	"github.com/paylink/paylink/internal/sqlstore"
	"github.com/paylink/paylink/internal/vault"
)

// flags wraps a FlagSet whose defaults come from PAYLINK_* variables.
type flags struct {
	*flag.FlagSet
	env environment
	err error // a variable that does not parse, reported by parse
	// positional holds the arguments that are not flags, wherever they
	// stood; at most maxArgs are accepted (none unless a command says).
	positional []string
	maxArgs    int
}

// newFlags is the flag set of the command name ("merchant create"). The
// flag package prints nothing itself: parse prints the flags once, to
// standard output for -h and to standard error before a flag error, which
// main then prints once, as it prints every error.
func newFlags(name string, env environment) *flags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &flags{FlagSet: fs, env: env}
}

// printFlags writes the command's flags, with their help and defaults,
// to w.
func (f *flags) printFlags(w io.Writer) {
	if !f.hasFlags() {
		fmt.Fprintf(w, "paylink %s takes no flags\n", f.Name())
		return
	}
	fmt.Fprintf(w, "flags of paylink %s:\n", f.Name())
	f.VisitAll(func(fl *flag.Flag) { fl.DefValue = shownDefault(fl.DefValue) })
	f.SetOutput(w)
	defer f.SetOutput(io.Discard)
	f.PrintDefaults()
}

// shownDefault is a flag's default as -h prints it: one taken from a
// PAYLINK_* variable may be a database address with its password
// (PAYLINK_DB=postgres://user:password@host/db), which is hidden.
func shownDefault(v string) string { return sqlstore.RedactDSN(v) }

// envName maps a flag name to its variable: transaction-token-ttl ->
// PAYLINK_TRANSACTION_TOKEN_TTL.
func envName(flagName string) string {
	return "PAYLINK_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

func (f *flags) str(name, def, help string) *string {
	if v := f.env.getenv(envName(name)); v != "" {
		def = v
	}
	return f.String(name, def, help+" (env "+envName(name)+")")
}

func (f *flags) duration(name string, def time.Duration, help string) *time.Duration {
	p := new(time.Duration)
	*p = fromEnv(f, name, def, time.ParseDuration)
	f.DurationVar(p, name, *p, help+" (env "+envName(name)+")")
	return p
}

func (f *flags) integer(name string, def int, help string) *int {
	p := new(int)
	*p = fromEnv(f, name, def, strconv.Atoi)
	f.IntVar(p, name, *p, help+" (env "+envName(name)+")")
	return p
}

func (f *flags) float(name string, def float64, help string) *float64 {
	p := new(float64)
	*p = fromEnv(f, name, def, func(v string) (float64, error) { return strconv.ParseFloat(v, 64) })
	f.Float64Var(p, name, *p, help+" (env "+envName(name)+")")
	return p
}

// fromEnv is flag name's default: its variable parsed, or def when the
// variable is unset. A variable that does not parse is noted for parse
// to report.
func fromEnv[T any](f *flags, name string, def T, parse func(string) (T, error)) T {
	v := f.env.getenv(envName(name))
	if v == "" {
		return def
	}
	x, err := parse(v)
	if err != nil {
		f.err = errors.Join(f.err, fmt.Errorf("%s: %w", envName(name), err))
		return def
	}
	return x
}

// boolean is a boolean flag whose variable takes what strconv.ParseBool
// does (1, t, true, TRUE, 0, f, false, ...); another value is noted for
// parse to report, as a bad number is.
func (f *flags) boolean(name string, help string) *bool {
	def := fromEnv(f, name, false, strconv.ParseBool)
	return f.Bool(name, def, help+" (env "+envName(name)+")")
}

// parse parses args. -h prints the flags to standard output and returns
// errHelp, which the command treats as success; a flag error prints them
// to standard error and is returned with the command's name, to exit 1
// as every error does. Flags may come before or after the command's
// arguments (webhooks resend ID --db PATH); an argument the command does
// not take is an error, so that a path given without --db is never
// ignored for the default database.
func (f *flags) parse(args []string) error {
	if f.err != nil {
		return f.err
	}
	for {
		err := f.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			f.printFlags(f.env.stdout)
			return errHelp
		}
		if err != nil {
			f.printFlags(f.env.stderr)
			return fmt.Errorf("%s: %w", f.Name(), err)
		}
		if f.FlagSet.NArg() == 0 {
			break
		}
		f.positional = append(f.positional, f.FlagSet.Arg(0))
		args = f.FlagSet.Args()[1:]
	}
	if len(f.positional) > f.maxArgs {
		return f.unexpectedArg(f.positional[f.maxArgs])
	}
	return nil
}

// unexpectedArg is the error for an argument the command does not take.
// Its hint fits the command: a command with --db is told that a path
// needs the flag, one without flags that it takes none.
func (f *flags) unexpectedArg(arg string) error {
	hint := ""
	switch {
	case f.Lookup("db") != nil:
		hint = " (flags take a value: --db PATH)"
	case f.maxArgs == 0 && !f.hasFlags():
		hint = " (" + f.Name() + " takes no arguments or flags)"
	}
	return fmt.Errorf("%s: unexpected argument %q%s", f.Name(), arg, hint)
}

// hasFlags reports whether the command defines any flag.
func (f *flags) hasFlags() bool {
	some := false
	f.VisitAll(func(*flag.Flag) { some = true })
	return some
}

// inRange refuses a count flag outside lo..hi.
func inRange(flagName string, n, lo, hi int) error {
	if n < lo || n > hi {
		return fmt.Errorf("--%s: got %d, want %d to %d", flagName, n, lo, hi)
	}
	return nil
}

// NArg is the number of arguments that are not flags.
func (f *flags) NArg() int { return len(f.positional) }

// Arg is the i-th argument that is not a flag.
func (f *flags) Arg(i int) string { return f.positional[i] }

var errHelp = errors.New("help requested")

const defaultDB = "paylink.db"

// openStore opens the database named by a DSN, creating and migrating
// it as needed: serve, demo and merchant create, the commands besides
// migrate that may start a database. Like serve, they leave a migration
// that older instances cannot serve beside to paylink migrate on a
// PostgreSQL database in use (sqlstore.OpenToServe): an operator may run
// them with a new build while the old one still serves.
func openStore(ctx context.Context, dsn string, opts ...sqlstore.Option) (*sqlstore.Store, error) {
	st, err := sqlstore.OpenToServe(ctx, dsn, opts...)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	return st, nil
}

// openExistingStore opens a database paylink has set up, at this
// binary's schema, creating nothing: every other command, so that a
// mistyped --db is an error rather than an empty database.
func openExistingStore(ctx context.Context, dsn string, opts ...sqlstore.Option) (*sqlstore.Store, error) {
	st, err := sqlstore.OpenExisting(ctx, dsn, opts...)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	return st, nil
}

// openVault loads the master keys: PAYLINK_MASTER_KEY (required with
// PostgreSQL, shared by every instance), or for SQLite only a key file
// next to the database, created on first use with mode 0600, which the
// vault follows when `paylink keys rotate` changes it. Previous keys for
// rotation are in PAYLINK_PREVIOUS_MASTER_KEYS, comma-separated. A key
// file that cannot be read again after a change is logged to log.
func openVault(env environment, dsn string, log *slog.Logger) (*vault.Vault, error) {
	d, err := sqlstore.ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	previous, err := previousKeys(env)
	if err != nil {
		return nil, err
	}
	hexKey := env.getenv("PAYLINK_MASTER_KEY")
	switch {
	case hexKey != "":
		k, err := vault.ParseKey(hexKey)
		if err != nil {
			return nil, fmt.Errorf("PAYLINK_MASTER_KEY: %w", err)
		}
		return vault.New(append([][]byte{k}, previous...)...)
	case d.Engine == sqlstore.Postgres:
		return nil, errors.New("PAYLINK_MASTER_KEY (64 hex characters) is required with PostgreSQL: every instance must share it")
	}
	v, err := vault.OpenKeyFile(keyFilePath(d), vault.KeyFileRecheck, log, previous...)
	if err != nil {
		return nil, fmt.Errorf("master key file: %w", err)
	}
	return v, nil
}

// checkKeyFileFor refuses to let openVault create a key file for a
// SQLite database that already has merchants: their secrets were sealed
// under a key kept elsewhere (a key file not copied with the database, or
// PAYLINK_MASTER_KEY not set this time), and a new key would open none of
// them and seal new secrets under a key nobody backed up.
func checkKeyFileFor(ctx context.Context, env environment, st *sqlstore.Store, dsn string) error {
	d, err := sqlstore.ParseDSN(dsn)
	if err != nil || d.Engine != sqlstore.SQLite || env.getenv("PAYLINK_MASTER_KEY") != "" {
		return err
	}
	if _, err := os.Stat(keyFilePath(d)); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	var some []*paylink.Merchant
	err = st.View(ctx, func(tx paylink.Tx) error {
		some, err = tx.MerchantsAtEnds(1)
		return err
	})
	if err != nil {
		return fmt.Errorf("master key file: %w", err)
	}
	if len(some) > 0 {
		return fmt.Errorf("master key file: %s is missing but the database holds merchants whose secrets were sealed under it: "+
			"restore it beside the database, or set PAYLINK_MASTER_KEY to the key they were sealed with", keyFilePath(d))
	}
	return nil
}

// keyFilePath is the master key file of a SQLite database.
func keyFilePath(d sqlstore.DSN) string { return d.Path + ".key" }

// previousKeys parses PAYLINK_PREVIOUS_MASTER_KEYS.
func previousKeys(env environment) ([][]byte, error) {
	var keys [][]byte
	for _, old := range strings.Split(env.getenv("PAYLINK_PREVIOUS_MASTER_KEYS"), ",") {
		if old = strings.TrimSpace(old); old == "" {
			continue
		}
		k, err := vault.ParseKey(old)
		if err != nil {
			return nil, fmt.Errorf("PAYLINK_PREVIOUS_MASTER_KEYS: %w", err)
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// newService wires the service from an open store.
func newService(ctx context.Context, env environment, st *sqlstore.Store, dsn string, cfg paylink.Config, log *slog.Logger) (*paylink.Service, error) {
	return newObservedService(ctx, env, st, dsn, cfg, log, nil)
}

// withService opens the existing database named by --db and runs fn
// with a service on it: the shape of every administrative command.
func withService(ctx context.Context, env environment, dsn string, fn func(*paylink.Service) error) error {
	return serviceOn(ctx, env, dsn, openExistingStore, fn)
}

// withNewService is withService for merchant create, which may start
// the database: it is created and migrated when missing. A schema newer
// than this binary's is warned about, as openExistingStore does.
func withNewService(ctx context.Context, env environment, dsn string, fn func(*paylink.Service) error) error {
	return serviceOn(ctx, env, dsn, openStoreWarning, fn)
}

// openStoreWarning is openStore, then OpenExisting's check of the
// schema (sqlstore.Store.CheckSchema): a schema newer than this binary's
// is warned about on the store's logger.
func openStoreWarning(ctx context.Context, dsn string, opts ...sqlstore.Option) (*sqlstore.Store, error) {
	st, err := openStore(ctx, dsn, opts...)
	if err != nil {
		return nil, err
	}
	if err := st.CheckSchema(ctx); err != nil {
		st.Close()
		return nil, fmt.Errorf("open database: %w", err)
	}
	return st, nil
}

// serviceOn opens the database with open and runs fn with a service on
// it.
func serviceOn(ctx context.Context, env environment, dsn string,
	open func(context.Context, string, ...sqlstore.Option) (*sqlstore.Store, error), fn func(*paylink.Service) error) error {
	log := newLogger(env.stderr)
	st, err := open(ctx, dsn, sqlstore.WithLogger(log))
	if err != nil {
		return err
	}
	defer st.Close()
	svc, err := newService(ctx, env, st, dsn, paylink.Config{}, log)
	if err != nil {
		return err
	}
	defer closeService(svc, log)
	return fn(svc)
}

// closeService stops svc's background work and waits for it (a bounded
// while), before the store it writes to closes: deferred after the
// store's Close, it runs first.
func closeService(svc *paylink.Service, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := svc.Close(ctx); err != nil {
		log.Warn("the service did not stop in time", "err", err)
	}
}

// newObservedService is newService with an Observer of payment outcomes
// (the metrics of a serving instance); obs may be nil.
func newObservedService(ctx context.Context, env environment, st *sqlstore.Store, dsn string, cfg paylink.Config, log *slog.Logger,
	obs paylink.Observer) (*paylink.Service, error) {
	if err := checkKeyFileFor(ctx, env, st, dsn); err != nil {
		return nil, err
	}
	v, err := openVault(env, dsn, log)
	if err != nil {
		return nil, err
	}
	return paylink.NewService(cfg, paylink.Deps{Store: st, Vault: v, Processor: &processor.Sandbox{}, Bank: &processor.Bank{},
		Logger: log, Observer: obs, Passwords: passwords.New()})
}

// levelFlag is a log level given by name (--log-level,
// PAYLINK_LOG_LEVEL), refused with the names it takes.
type levelFlag struct{ level *slog.Level }

func (v levelFlag) String() string {
	if v.level == nil { // the flag package's zero value
		return ""
	}
	return v.level.String()
}

// Set reads a level name as slog does: debug, info, warn or error, in
// any case.
func (v levelFlag) Set(s string) error {
	if err := v.level.UnmarshalText([]byte(s)); err != nil {
		return fmt.Errorf("%q is not a level: give debug, info, warn or error", s)
	}
	return nil
}

func newLogger(w io.Writer) *slog.Logger {
	return newLoggerAt(w, slog.LevelInfo)
}

// newLoggerAt logs JSON lines at level and above; a line logged with a
// request's context names the request id.
func newLoggerAt(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(httpx.LogHandler{Handler: slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level})})
}
