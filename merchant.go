package paylink

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Merchant is an onboarded company. Its secrets are stored only as hashes.
type Merchant struct {
	ID          string // the mid
	Name        string
	TradingName string
	Country     string
	// APIKeyHash is the hash of the current API key (api_keys holds the
	// previous ones of a roll); on a merchant from Authenticate, the key
	// that was presented.
	APIKeyHash       []byte
	CompanyTokenHash []byte
	Settings         MerchantSettings
	CreatedAt        time.Time
}

// MerchantSettings is the merchant's configuration, stored as one JSON
// document so that features can add settings without a schema change.
type MerchantSettings struct {
	Surcharge   SurchargeRates        `json:"surcharge"`
	Webhook     WebhookConfig         `json:"webhook"`
	Pricing     *Pricing              `json:"pricing,omitempty"`
	DirectDebit *DirectDebitFeeConfig `json:"direct_debit,omitempty"`
	Dashboard   DashboardSettings     `json:"dashboard,omitzero"`
}

// DashboardSettings are a merchant's security settings for its staff.
type DashboardSettings struct {
	// RequireTOTP makes every staff user set up two-factor sign-in before
	// any page but the set-up page opens.
	RequireTOTP bool `json:"require_totp,omitempty"`
}

// WebhookConfig is where and how a merchant's webhooks are delivered.
type WebhookConfig struct {
	URL     string   `json:"url,omitempty"`
	Domains []string `json:"domains,omitempty"` // whitelisted host names or IP literals, normalised (whitelist.go)
	// Legacy selects the older 16-field payload instead of the full one.
	Legacy bool `json:"legacy,omitempty"`
	// Retries enables automatic redelivery with exponential backoff.
	Retries bool `json:"retries,omitempty"`
	// Secrets are the sealed signing secrets, newest first; a second one is
	// present during a rotation's overlap period until PreviousUntil.
	Secrets       []SealedSecret `json:"secrets,omitempty"`
	PreviousUntil int64          `json:"previous_until,omitempty"` // unix seconds
}

// CurrentSecret is the version of the signing secret in force, which a
// rotation is made from (RotateWebhookSecret's from); "" when the
// merchant has none yet.
func (w WebhookConfig) CurrentSecret() string {
	if len(w.Secrets) == 0 {
		return ""
	}
	return w.Secrets[0].Version()
}

// SealedSecret is a secret encrypted by the vault.
type SealedSecret struct {
	KeyID      string `json:"key_id"`
	Ciphertext []byte `json:"ciphertext"`
}

// Version names this sealing of a secret without revealing it (a hash of
// its ciphertext): a form that showed the current webhook secret sends it
// back, so that a rotation made meanwhile refuses the form's. Re-sealing
// under a new master key gives the same secret a new version.
func (s SealedSecret) Version() string {
	sum := sha256.Sum256(s.Ciphertext)
	return hex.EncodeToString(sum[:8])
}

// SurchargeRates is a merchant's surcharge table. International applies
// to every card not issued in the merchant's country; otherwise Amex to
// amex cards and Debit or Credit by funding.
type SurchargeRates struct {
	Debit         Percent `json:"debit"`
	Credit        Percent `json:"credit"`
	Amex          Percent `json:"amex"`
	International Percent `json:"international"`
}

// DefaultSurchargeRates are used when onboarding sets none.
func DefaultSurchargeRates() SurchargeRates {
	return SurchargeRates{Debit: 5000, Credit: 12000, Amex: 25000, International: 29000}
}

// RateFor picks the rate for a card.
func (r SurchargeRates) RateFor(card CardInfo, regionClass string) Percent {
	switch {
	case regionClass != RegionDomestic:
		return r.International
	case card.Brand == BrandAmex:
		return r.Amex
	case card.Funding == FundingDebit:
		return r.Debit
	}
	return r.Credit
}

// Quote is the surcharge a card attracts on amount for a merchant in
// merchantCountry: the rate for the card and that rate applied, rounded
// once. The surcharge preview, the purchase and the hosted page's live
// quote all ask it, so what is previewed is what is charged.
func (r SurchargeRates) Quote(card CardInfo, merchantCountry string, amount int64) (Percent, int64) {
	return r.quoteIn(card, RegionClass(card.Country, merchantCountry), amount)
}

// quoteIn is Quote for a card whose region class is already known (a
// capture uses the class its hold recorded).
func (r SurchargeRates) quoteIn(card CardInfo, regionClass string, amount int64) (Percent, int64) {
	rate := r.RateFor(card, regionClass)
	return rate, rate.Apply(amount)
}

// Pricing is the merchant's processing-fee configuration, the source of
// a webhook's fee_detail (fees.go computes the lines). Fixed amounts are
// fee micro-units (millionths of the transaction currency's major unit:
// 300000 is 0.30). The default fixed amounts (BlendedFixed, AmexFixed,
// ICPlusFixed, ServiceTransFee) have no currency of their own: they count
// in the unit of any payment's currency that FixedIn does not name
// (FixedFor). A nil Settings.Pricing means DefaultPricing.
type Pricing struct {
	// Model is "blended" (default) or "ic_plus" (interchange plus: an
	// ESTIMATED IC_PLUS line replaces the blended fee).
	Model          string  `json:"model,omitempty"`
	BlendedPercent Percent `json:"blended_percent"`
	BlendedFixed   int64   `json:"blended_fixed"`
	// Amex cards carry AMEX_FEE plus AMEX_FEE_TAX (GST on the fee).
	AmexPercent    Percent `json:"amex_percent"`
	AmexFixed      int64   `json:"amex_fixed"`
	AmexTaxPercent Percent `json:"amex_tax_percent"`
	// ICPlusPercent and ICPlusFixed estimate interchange-plus costs.
	ICPlusPercent Percent `json:"ic_plus_percent,omitempty"`
	ICPlusFixed   int64   `json:"ic_plus_fixed,omitempty"`
	// Optional fees: SERVICE_PROTECT_FEE (percent) and SERVICE_TRANS_FEE
	// (fixed per transaction); zero means the line is absent.
	ServiceProtectPercent Percent `json:"service_protect_percent,omitempty"`
	ServiceTransFee       int64   `json:"service_trans_fee,omitempty"`
	// Billable lists the fee codes invoiced separately (BILLABLE); every
	// other line is DEDUCTED from the payment before settlement.
	Billable []string `json:"billable,omitempty"`
	// FixedIn holds the fixed amounts of payments in a currency (keyed by
	// its ISO 4217 code), in place of the default ones above; absent in
	// the pricing of a merchant onboarded before it existed.
	FixedIn map[string]FixedFees `json:"fixed_in,omitempty"`
}

// DirectDebitFeeConfig is the merchant's direct debit fee: percent plus
// fixed, capped. Defined fully by the direct debit feature.
type DirectDebitFeeConfig struct {
	Percent Percent `json:"percent"`
	Fixed   int64   `json:"fixed"`
	Cap     int64   `json:"cap"`
}

// Credentials are a merchant's secrets, shown once at onboarding.
type Credentials struct {
	MID           string `json:"mid"`
	APIKey        string `json:"api_key"`
	CompanyToken  string `json:"company_token"`
	WebhookSecret string `json:"webhook_secret,omitempty"`
}

// NewMerchant describes a merchant to onboard.
type NewMerchant struct {
	Name        string
	TradingName string
	Country     string
	Settings    MerchantSettings
}

// Validate checks onboarding input: the names, the country, the webhook
// whitelist, the pricing's per-currency fixed amounts and the direct
// debit fee, every problem named at once.
func (n NewMerchant) Validate() error {
	f := FieldErrors{}
	if strings.TrimSpace(n.Name) == "" {
		f.Add("name", "is required")
	}
	if strings.TrimSpace(n.TradingName) == "" {
		f.Add("trading_name", "is required")
	}
	checkField(f, "name", n.Name, MaxFieldLength)
	checkField(f, "trading_name", n.TradingName, MaxFieldLength)
	if !IsCountryCode(n.Country) {
		f.Add("country", "must be an ISO 3166-1 alpha-2 code such as AU")
	}
	collectWhitelist(f, n.Settings.Webhook.URL, n.Settings.Webhook.Domains)
	if p := n.Settings.Pricing; p != nil {
		if err := p.Validate(); err != nil {
			f.Add("pricing", err.Error())
		}
	}
	if dd := n.Settings.DirectDebit; dd != nil {
		if err := dd.Validate(); err != nil {
			f.Add("direct_debit_fee", err.Error())
		}
	}
	return f.Err()
}

// HashSecret is how API keys, company tokens, transaction tokens,
// dashboard session ids, invite tokens and recovery codes are stored:
// SHA-256 of the secret, so a copy of the table opens nothing. Secrets carry at least 128 bits of
// entropy, so a plain hash is not brute-forceable.
func HashSecret(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

// SecretMatches compares a presented secret with a stored hash in
// constant time.
func SecretMatches(secret string, hash []byte) bool {
	return subtle.ConstantTimeCompare(HashSecret(secret), hash) == 1
}

// apiKeyPrefix marks paylink API keys so they are recognisable in leaks.
const apiKeyPrefix = "pl_sk_"

// LooksLikeSecret reports whether s holds the start of one of paylink's
// own prefixed secrets, an API key (pl_sk_) or a webhook signing secret
// (whsec_): a value that must not be logged (a request id, for one).
func LooksLikeSecret(s string) bool {
	return strings.Contains(s, apiKeyPrefix) || strings.Contains(s, webhookSecretPrefix)
}

// MaskSecrets returns s with each of paylink's prefixed secrets in it
// (LooksLikeSecret) cut to its prefix and "…": what an error may say back
// about a key a client wrote ("token.pl_sk_…": 1).
func MaskSecrets(s string) string {
	if !LooksLikeSecret(s) {
		return s
	}
	for _, prefix := range []string{apiKeyPrefix, webhookSecretPrefix} {
		var b strings.Builder
		for {
			i := strings.Index(s, prefix)
			if i < 0 {
				break
			}
			end := i + len(prefix)
			for end < len(s) && (isLetter(s[end]) || s[end] >= '0' && s[end] <= '9' || s[end] == '_' || s[end] == '-') {
				end++
			}
			b.WriteString(s[:i] + prefix + "…")
			s = s[end:]
		}
		b.WriteString(s)
		s = b.String()
	}
	return s
}

func (s *Service) newCredentials() (Credentials, error) {
	mid, err := s.randomToken(12)
	if err != nil {
		return Credentials{}, err
	}
	key, err := s.newAPIKey()
	if err != nil {
		return Credentials{}, err
	}
	company, err := s.randomToken(TokenLength)
	if err != nil {
		return Credentials{}, err
	}
	return Credentials{MID: "M" + strings.ToUpper(mid), APIKey: key, CompanyToken: company}, nil
}

// newAPIKey returns a fresh API key: the prefix and 40 random characters
// (238 bits).
func (s *Service) newAPIKey() (string, error) {
	key, err := s.randomToken(40)
	if err != nil {
		return "", err
	}
	return apiKeyPrefix + key, nil
}

// CreateMerchant onboards a merchant and returns its credentials, which
// are not stored and cannot be shown again. The webhook whitelist is
// stored normalised, with the company webhook's host added.
func (s *Service) CreateMerchant(ctx context.Context, n NewMerchant) (*Merchant, Credentials, error) {
	if err := n.Validate(); err != nil {
		return nil, Credentials{}, err
	}
	domains, err := normalizeWhitelist(n.Settings.Webhook.URL, n.Settings.Webhook.Domains)
	if err != nil {
		return nil, Credentials{}, err
	}
	n.Settings.Webhook.Domains = domains
	creds, err := s.newCredentials()
	if err != nil {
		return nil, Credentials{}, Internal("create merchant", err)
	}
	secret, sealed, err := s.newWebhookSecret(creds.MID)
	if err != nil {
		return nil, Credentials{}, Internal("create merchant", err)
	}
	creds.WebhookSecret = secret
	n.Settings.Webhook.Secrets, n.Settings.Webhook.PreviousUntil = []SealedSecret{sealed}, 0
	m := &Merchant{
		ID: creds.MID, Name: n.Name, TradingName: n.TradingName, Country: n.Country,
		APIKeyHash: HashSecret(creds.APIKey), CompanyTokenHash: HashSecret(creds.CompanyToken),
		Settings: n.Settings, CreatedAt: s.now(),
	}
	err = s.store.Update(ctx, func(tx Tx) error {
		if err := tx.CreateMerchant(m); err != nil {
			return err
		}
		return s.auditOnboarding(ctx, tx, m)
	})
	if err != nil {
		return nil, Credentials{}, Internal("create merchant", err)
	}
	return m, creds, nil
}

// Authenticate finds the merchant whose API key this is. The key may be
// the current one or a previous one still inside its roll's overlap; the
// returned merchant's APIKeyHash is the key presented, so that its
// APIKeyID names the actor. A previous key past its end is refused, and
// the cache never keeps a key beyond its end.
func (s *Service) Authenticate(ctx context.Context, apiKey string) (*Merchant, error) {
	if apiKey == "" {
		s.auditDenied(ctx, AuditEvent{Action: AuditAuthenticate, ObjectType: ObjectAPIKey, Detail: "missing"})
		return nil, errUnauthorized
	}
	if !strings.HasPrefix(apiKey, apiKeyPrefix) || len(apiKey) > 128 {
		s.auditDenied(ctx, AuditEvent{Action: AuditAuthenticate, ObjectType: ObjectAPIKey, Detail: "malformed"})
		return nil, errUnauthorized
	}
	hash := HashSecret(apiKey)
	now := s.now()
	cached, gen := s.auth.get(apiKeyEntry(hash), now)
	if cached != nil {
		return cached, nil
	}
	key, m, err := s.loadAPIKey(ctx, hash)
	if errors.Is(err, ErrNotFound) {
		s.auditDenied(ctx, AuditEvent{Action: AuditAuthenticate, ObjectType: ObjectAPIKey, Detail: "unknown"})
		return nil, errUnauthorized
	}
	if err != nil {
		return nil, Internal("authenticate", err)
	}
	if !key.ActiveAt(now) {
		s.auditDenied(ctx, AuditEvent{MerchantID: key.MerchantID, Action: AuditAuthenticate, ObjectType: ObjectAPIKey,
			ObjectID: key.ID, Detail: "expired"})
		return nil, errUnauthorized
	}
	m.APIKeyHash = key.Hash
	s.auth.put(apiKeyEntry(hash), m, now, key.ExpiresAt, gen)
	return m, nil
}

// RefuseCredentials records an API request refused before any key was
// tried (detail says why: an Authorization header sent twice with two
// values), as Authenticate records the keys it refuses.
func (s *Service) RefuseCredentials(ctx context.Context, detail string) {
	s.auditDenied(ctx, AuditEvent{Action: AuditAuthenticate, ObjectType: ObjectAPIKey, Detail: detail})
}

// merchantByID reads a merchant inside tx through the cache of recent
// merchants: a hosted page names its merchant by the link's merchant id.
// Like an authenticated API request's, it is at most AuthCacheTTL old
// when another instance changed it, and current after a change here.
func (s *Service) merchantByID(tx Tx, id string) (*Merchant, error) {
	now := s.now()
	cached, gen := s.auth.get(merchantEntry(id), now)
	if cached != nil {
		return cached, nil
	}
	m, err := tx.Merchant(id)
	if err != nil {
		return nil, err
	}
	s.auth.put(merchantEntry(id), m, now, time.Time{}, gen)
	return m, nil
}

// loadAPIKey reads the key with hash and its merchant.
func (s *Service) loadAPIKey(ctx context.Context, hash []byte) (key *APIKey, m *Merchant, err error) {
	err = s.store.View(ctx, func(tx Tx) error {
		if key, err = tx.APIKeyByHash(hash); err != nil {
			return err
		}
		m, err = tx.Merchant(key.MerchantID)
		return err
	})
	return key, m, err
}

var errUnauthorized = Errorf(KindUnauthorized, CodeUnauthorized, "missing or invalid API key: send Authorization: Bearer <API_KEY>")

// auditOnboarding records a new merchant and the credentials it was
// given, inside the transaction that creates it.
func (s *Service) auditOnboarding(ctx context.Context, tx Tx, m *Merchant) error {
	for _, e := range []AuditEvent{
		{Action: AuditMerchantOnboard, ObjectType: ObjectMerchant, ObjectID: m.ID},
		{Action: AuditAPIKeyCreate, ObjectType: ObjectAPIKey, ObjectID: m.APIKeyID()},
		{Action: AuditWebhookSecretCreate, ObjectType: ObjectWebhookSecret, ObjectID: m.ID},
	} {
		e.MerchantID, e.Outcome = m.ID, OutcomeSuccess
		if err := s.audit(ctx, tx, e); err != nil {
			return err
		}
	}
	return nil
}

// CheckCompanyToken verifies that a company token belongs to m; a token
// that does not is an authentication failure and is audited.
func (s *Service) CheckCompanyToken(ctx context.Context, m *Merchant, token string) error {
	err := checkCompanyToken(m, token)
	if e, ok := err.(*Error); ok && e.Kind == KindForbidden {
		s.auditDenied(ctx, AuditEvent{MerchantID: m.ID, Action: AuditCompanyToken, ObjectType: ObjectCompanyToken,
			Detail: CodeCompanyTokenMismatch})
	}
	return err
}

// checkCompanyToken is the rule: present, and m's.
func checkCompanyToken(m *Merchant, token string) error {
	if token == "" {
		return &Error{Kind: KindInvalid, Code: CodeInvalidRequest, Message: "company token is required",
			Fields: map[string]string{"company_token": "is required"}}
	}
	if !SecretMatches(token, m.CompanyTokenHash) {
		return Errorf(KindForbidden, CodeCompanyTokenMismatch, "the company token does not belong to this API key's merchant")
	}
	return nil
}

// ListMerchants returns every merchant, oldest first.
func (s *Service) ListMerchants(ctx context.Context) ([]*Merchant, error) {
	var ms []*Merchant
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		ms, err = tx.ListMerchants()
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list merchants: %w", err)
	}
	return ms, nil
}
