package paylink

import (
	"errors"
	"fmt"
	"time"
)

// Defaults of Config's durations, defined once: NewService applies them
// to zero values (withDefaults) and `paylink serve` shows them as its
// flags' defaults. Two more live beside the rules that bound them:
// DefaultAuthenticationTimeout (threeds.go) and DefaultProcessorTimeout
// (processorcall.go).
const (
	DefaultTransactionTokenTTL = 5 * time.Minute
	DefaultPreAuthExpiry       = 7 * 24 * time.Hour
	DefaultDirectDebitClearing = 72 * time.Hour
)

// MaxTransactionTokenTTL bounds a transaction token's lifetime (the spec
// gives 5 minutes): a token is authenticated under the master key it was
// issued under, which a key rotation keeps at least this long
// (`paylink keys rotate`), so a token never outlives its key.
const MaxTransactionTokenTTL = 15 * time.Minute

// Config holds the service's tunables.
type Config struct {
	BaseURL             string        // public address of this service, for page URLs
	TransactionTokenTTL time.Duration // default DefaultTransactionTokenTTL
	PreAuthExpiry       time.Duration // default DefaultPreAuthExpiry
	// DirectDebitClearing is how long a direct debit stays PENDING before
	// the clearing job asks the bank for its outcome (default
	// DefaultDirectDebitClearing).
	DirectDebitClearing time.Duration
	// SettlementCutoff is the time of day, since midnight UTC, of the
	// daily settlement run; default midnight.
	SettlementCutoff time.Duration
	// AuthenticationTimeout is the lifetime of a 3-D Secure attempt,
	// answered or not, and of a payment link's claim by an attempt;
	// default DefaultAuthenticationTimeout, at most
	// MaxAuthenticationTimeout.
	AuthenticationTimeout time.Duration
	// WebhookRetries enables automatic webhook retries with backoff for
	// every merchant (each merchant can also enable them alone).
	WebhookRetries bool
	// ProcessorTimeout is the deadline of every processor and bank call
	// (default DefaultProcessorTimeout, at most MaxProcessorTimeout):
	// a call that outlasts it is abandoned and its item left for the
	// recovery job's inquiry.
	ProcessorTimeout time.Duration
	// RecordProcessingFirst records every card purchase PROCESSING before
	// asking the processor, even one that answers in process (see
	// InProcessProcessor): how a remote acquirer's payments are always
	// recorded, for measuring that path with the sandbox.
	RecordProcessingFirst bool
}

// SettingError is a Config setting out of its range, as Validate
// reports it: keyed by the setting's field name, so that a command line
// can report it under its own flag's name.
type SettingError struct {
	Setting string        // the Config field, such as "TransactionTokenTTL"
	Got     time.Duration // the value refused
	Max     time.Duration // the upper bound; 0: none
	Why     string        // why the bound is what it is; "" without one
}

// Want says what the setting takes besides 0 (its default): "a positive
// duration", or "at most 15m0s (why)".
func (e *SettingError) Want() string {
	if e.Got < 0 {
		return "a positive duration"
	}
	return fmt.Sprintf("at most %s (%s)", e.Max, e.Why)
}

func (e *SettingError) Error() string {
	return fmt.Sprintf("config: %s %s: want %s, or 0 for the default", e.Setting, e.Got, e.Want())
}

// Validate checks the tunables that have limits, the one place they are
// written: a duration is 0 (its default) or positive, and four have an
// upper bound. It reports every setting out of range, each a
// *SettingError, joined (errors.Join): errors.As finds the first, and
// SettingErrors lists them all, so that a caller can name each at once
// rather than one a try. NewService refuses what it refuses.
func (c Config) Validate() error {
	var bad []error
	for _, s := range []SettingError{
		{Setting: "TransactionTokenTTL", Got: c.TransactionTokenTTL, Max: MaxTransactionTokenTTL,
			Why: "a key rotation keeps a retired key that long"},
		{Setting: "PreAuthExpiry", Got: c.PreAuthExpiry},
		{Setting: "DirectDebitClearing", Got: c.DirectDebitClearing},
		{Setting: "AuthenticationTimeout", Got: c.AuthenticationTimeout, Max: MaxAuthenticationTimeout,
			Why: "a challenged card's number is kept " + CardRetention.String()},
		{Setting: "ProcessorTimeout", Got: c.ProcessorTimeout, Max: MaxProcessorTimeout,
			Why: "half the recovery threshold " + ProcessingTimeout.String()},
		// A time of day: past it, the daily settlement would settle up to
		// a cut-off not yet come, payments still committing with it.
		{Setting: "SettlementCutoff", Got: c.SettlementCutoff, Max: 24*time.Hour - time.Minute,
			Why: "a time of day, since midnight UTC; 0 is midnight"},
	} {
		if s.Got < 0 || (s.Max > 0 && s.Got > s.Max) {
			bad = append(bad, &s)
		}
	}
	return errors.Join(bad...)
}

// SettingErrors lists the settings out of range that err, an error of
// Validate or one wrapping it, holds, in Validate's order; none for an
// error that holds none.
func SettingErrors(err error) []*SettingError {
	var out []*SettingError
	var walk func(error)
	walk = func(e error) {
		switch e := e.(type) {
		case *SettingError:
			out = append(out, e)
		case interface{ Unwrap() []error }:
			for _, inner := range e.Unwrap() {
				walk(inner)
			}
		case interface{ Unwrap() error }:
			walk(e.Unwrap())
		}
	}
	walk(err)
	return out
}

// withDefaults is c with each zero duration replaced by its default.
func (c Config) withDefaults() Config {
	for _, d := range []struct {
		field *time.Duration
		def   time.Duration
	}{
		{&c.TransactionTokenTTL, DefaultTransactionTokenTTL},
		{&c.PreAuthExpiry, DefaultPreAuthExpiry},
		{&c.AuthenticationTimeout, DefaultAuthenticationTimeout},
		{&c.DirectDebitClearing, DefaultDirectDebitClearing},
		{&c.ProcessorTimeout, DefaultProcessorTimeout},
	} {
		if *d.field == 0 {
			*d.field = d.def
		}
	}
	return c
}
