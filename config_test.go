package paylink

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestConfigValidateProcessorTimeout(t *testing.T) {
	tests := []struct {
		timeout time.Duration
		ok      bool
	}{
		{0, true}, // the default
		{30 * time.Second, true},
		{MaxProcessorTimeout, true},
		{MaxProcessorTimeout + time.Second, false},
		{ProcessingTimeout, false},
		{-time.Second, false},
	}
	for _, tt := range tests {
		t.Run(tt.timeout.String(), func(t *testing.T) {
			if err := (Config{ProcessorTimeout: tt.timeout}).Validate(); (err == nil) != tt.ok {
				t.Errorf("got %v, want ok=%v", err, tt.ok)
			}
		})
	}
}

// TestConfigValidateTransactionTokenTTL: a token's lifetime is bounded,
// so that a key rotation, which keeps a retired key MaxTransactionTokenTTL
// and more, never drops the key of a token still alive (key rotation
// sweep: with 2 minutes of grace, a 5-minute token was refused 2m38s
// into its life after two rotations).
func TestConfigValidateTransactionTokenTTL(t *testing.T) {
	for _, tt := range []struct {
		ttl time.Duration
		ok  bool
	}{
		{0, true},
		{DefaultTransactionTokenTTL, true},
		{MaxTransactionTokenTTL, true},
		{MaxTransactionTokenTTL + time.Second, false},
		{-time.Second, false},
	} {
		if err := (Config{TransactionTokenTTL: tt.ttl}).Validate(); (err == nil) != tt.ok {
			t.Errorf("%s: got %v, want ok=%v", tt.ttl, err, tt.ok)
		}
	}
}

// TestNewServiceRefusesWhatValidateRefuses: each bounded setting out of
// range is refused by NewService, as a *SettingError naming the setting,
// where NewService clamped the three maxima with min() and read a negative
// duration as its default, so that a library user's 20-minute token
// lifetime silently became 15 minutes.
func TestNewServiceRefusesWhatValidateRefuses(t *testing.T) {
	for _, tt := range []struct {
		setting string
		cfg     Config
	}{
		{"TransactionTokenTTL", Config{TransactionTokenTTL: MaxTransactionTokenTTL + time.Second}},
		{"AuthenticationTimeout", Config{AuthenticationTimeout: MaxAuthenticationTimeout + time.Second}},
		{"ProcessorTimeout", Config{ProcessorTimeout: MaxProcessorTimeout + time.Second}},
		{"PreAuthExpiry", Config{PreAuthExpiry: -time.Hour}},
		{"DirectDebitClearing", Config{DirectDebitClearing: -time.Hour}},
		// A cut-off past a day settled up to a time not yet come
		// (verification sweep: SettleDue's cut-off was in the future).
		{"SettlementCutoff", Config{SettlementCutoff: 48 * time.Hour}},
		{"SettlementCutoff", Config{SettlementCutoff: 24 * time.Hour}},
		{"SettlementCutoff", Config{SettlementCutoff: -time.Minute}},
	} {
		s, err := NewService(tt.cfg, Deps{})
		var bad *SettingError
		if s != nil || !errors.As(err, &bad) || bad.Setting != tt.setting || !strings.Contains(err.Error(), tt.setting) {
			t.Errorf("%s out of range: got %v, %v; want it refused naming the setting", tt.setting, s, err)
		}
	}
	s, err := NewService(Config{TransactionTokenTTL: MaxTransactionTokenTTL, AuthenticationTimeout: MaxAuthenticationTimeout,
		ProcessorTimeout: MaxProcessorTimeout, SettlementCutoff: 23*time.Hour + 59*time.Minute}, Deps{})
	if err != nil || s.cfg.TransactionTokenTTL != MaxTransactionTokenTTL || s.cfg.PreAuthExpiry != DefaultPreAuthExpiry {
		t.Errorf("the bounds themselves and a default: got %+v, %v", s, err)
	}
}

// TestValidateNamesEverySettingOutOfRange: three settings out of range
// are all reported, in Validate's order, each a *SettingError, and
// errors.As still finds the first, through NewService's wrapping too
// (Validate returned the first alone, so a fix of one met the next only
// on the following try).
func TestValidateNamesEverySettingOutOfRange(t *testing.T) {
	cfg := Config{TransactionTokenTTL: MaxTransactionTokenTTL + time.Minute, PreAuthExpiry: -time.Hour,
		ProcessorTimeout: MaxProcessorTimeout + time.Second}
	want := []string{"TransactionTokenTTL", "PreAuthExpiry", "ProcessorTimeout"}
	_, err := NewService(cfg, Deps{})
	for name, err := range map[string]error{"Validate": cfg.Validate(), "NewService": err} {
		var got []string
		for _, bad := range SettingErrors(err) {
			got = append(got, bad.Setting)
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s: got settings %v, want %v", name, got, want)
		}
		for _, w := range want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: got %v, want it to name %s", name, err, w)
			}
		}
		var first *SettingError
		if !errors.As(err, &first) || first.Setting != want[0] {
			t.Errorf("%s: errors.As found %+v, want the first setting out of range, %s", name, first, want[0])
		}
	}
	if got := SettingErrors(Config{}.Validate()); got != nil {
		t.Errorf("a valid config: got %v, want none", got)
	}
}
