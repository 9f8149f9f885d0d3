package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/sqlstore"
)

// runDemo serves the sandbox on the embedded SQLite default with a demo
// merchant, and prints its keys, the test cards and a curl session.
func runDemo(ctx context.Context, env environment, args []string) error {
	f := newFlags("demo", env)
	dsn := f.str("db", defaultDB, "SQLite database file for the demo")
	addr := f.str("addr", "127.0.0.1:8080", "listen address host:port")
	if err := f.parse(args); err != nil {
		return ignoreHelp(err)
	}
	d, err := sqlstore.ParseDSN(*dsn)
	if err != nil {
		return err
	}
	if d.Engine != sqlstore.SQLite {
		return errors.New("demo runs on the embedded SQLite default; use serve for PostgreSQL")
	}
	cfg := serveConfig{dsn: *dsn, addr: *addr, service: paylink.Config{}, shutdownTimeout: defaultShutdownTimeout}
	cfg.ready = func(baseURL string, svc *paylink.Service) error {
		creds, err := demoCredentials(ctx, svc, d.Path+".demo.json")
		if err != nil {
			return err
		}
		printDemo(env, baseURL, creds)
		if err := printDemoUser(ctx, env, svc, baseURL, creds.MID, d.Path+".demo-user"); err != nil {
			return err
		}
		return printDemoLink(ctx, env, svc, creds)
	}
	return serve(ctx, env, cfg)
}

// demoCredentials onboards the demo merchant on first run and keeps its
// credentials in a mode-0600 file beside the database, so that later runs
// print the same working keys (a new API key when the kept one was rolled
// and has stopped working). Kept credentials whose merchant is not in the
// database (it was removed, the files beside it were not) are replaced by
// a new demo merchant's. Only the demo does this; real merchants' secrets
// are shown once and never stored.
func demoCredentials(ctx context.Context, svc *paylink.Service, path string) (paylink.Credentials, error) {
	var c paylink.Credentials
	if b, err := os.ReadFile(path); err == nil {
		if err := json.Unmarshal(b, &c); err != nil {
			return c, fmt.Errorf("demo credentials %s: %w", path, err)
		}
		c, err := workingDemoKey(ctx, svc, path, c)
		if !isNotFound(err) {
			return c, err
		}
	}
	return onboardDemo(ctx, svc, path)
}

// isNotFound reports whether err is the Service's not_found.
func isNotFound(err error) bool {
	var e *paylink.Error
	return errors.As(err, &e) && e.Kind == paylink.KindNotFound
}

// onboardDemo creates the demo merchant and keeps its credentials at path.
func onboardDemo(ctx context.Context, svc *paylink.Service, path string) (paylink.Credentials, error) {
	_, c, err := svc.CreateMerchant(ctx, paylink.NewMerchant{
		Name: "Demo Merchant Pty Ltd", TradingName: "Demo Coffee Roasters", Country: "AU",
		Settings: paylink.MerchantSettings{Surcharge: paylink.DefaultSurchargeRates()},
	})
	if err != nil {
		return c, fmt.Errorf("onboard demo merchant: %w", err)
	}
	return c, saveDemoCredentials(path, c)
}

// workingDemoKey returns c, with a new API key when the kept one no
// longer authenticates (rolled from the dashboard or with roll-api-key,
// and past its overlap), saving it. The key that roll made keeps working
// for the longest overlap, a week, beside the new one: someone may be
// using it.
func workingDemoKey(ctx context.Context, svc *paylink.Service, path string, c paylink.Credentials) (paylink.Credentials, error) {
	m, err := svc.Merchant(ctx, c.MID)
	if err != nil {
		return c, fmt.Errorf("demo merchant %s: %w", c.MID, err)
	}
	keys, err := svc.APIKeys(ctx, m)
	if err != nil {
		return c, err
	}
	id := paylink.APIKeyID(paylink.HashSecret(c.APIKey))
	for _, k := range keys {
		if k.ID == id && k.ActiveAt(svc.Now()) {
			return c, nil
		}
	}
	if c.APIKey, err = svc.RollAPIKey(ctx, c.MID, "", paylink.MaxAPIKeyOverlap); err != nil {
		return c, fmt.Errorf("new demo API key: %w", err)
	}
	return c, saveDemoCredentials(path, c)
}

// saveDemoCredentials writes c to path, mode 0600.
func saveDemoCredentials(path string, c paylink.Credentials) error {
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return fmt.Errorf("save demo credentials: %w", err)
	}
	return nil
}

func printDemo(env environment, baseURL string, c paylink.Credentials) {
	w := env.stdout
	fmt.Fprintf(w, `
paylink sandbox is running at %s  (Ctrl-C to stop)

Demo merchant
  mid:            %s
  api_key:        %s
  company_token:  %s

Test cards (any future expiry; any CVC of 3 digits, 4 on amex)
  4111111111111111  visa credit AU        approved
  4000056655665556  visa debit AU         approved
  5555555555554444  mastercard credit AU  approved
  5105105105105100  mastercard debit AU   approved (corporate)
  378282246310005   amex credit AU        approved
  4000008260000000  visa credit GB        approved (international)
  4000000000000002  visa credit AU        declined: do not honour (05)
  4000000000009995  visa debit AU         declined: insufficient funds (51)
  4000000000000119  visa credit AU        failed: processing error
  4000000000003220  visa credit AU        3-D Secure challenge when requested
  4000000000003063  visa credit AU        3-D Secure frictionless when requested

Try it (copy and paste into another terminal):

BASE=%s
KEY=%s
COMPANY=%s
TT=$(curl -s -X POST $BASE/v5/transaction_token -H "Authorization: Bearer $KEY" \
  -d "{\"company_token\":\"$COMPANY\"}" | sed -E 's/.*"transaction_token":"([A-Za-z0-9]+)".*/\1/')
curl -s -X POST $BASE/v5/purchase -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' -d '{
  "token": {"company_token": "'$COMPANY'", "transaction_token": "'$TT'"},
  "customer": {"ip_address": "203.0.113.7", "timezone": "Australia/Sydney", "email": "jo@example.com"},
  "card": {"number": "4111111111111111", "expiry_month": "12", "expiry_year": "%02d", "cvc": "123", "holder_name": "Jo Citizen"},
  "purchase": {"amount": 10.50, "currency": "AUD", "invoice_number": "INV-1001", "should_service_apply_surcharge": true}
}'
curl -s $BASE/v5/purchase/INV-1001 -H "Authorization: Bearer $KEY"
`, baseURL, c.MID, c.APIKey, c.CompanyToken, baseURL, c.APIKey, c.CompanyToken, (time.Now().Year()+3)%100)
}

// printDemoLink creates a fresh payment link for the demo merchant and
// prints its two pages, so the hosted page can be tried in a browser.
func printDemoLink(ctx context.Context, env environment, svc *paylink.Service, c paylink.Credentials) error {
	m, err := svc.Authenticate(ctx, c.APIKey)
	if err != nil {
		return fmt.Errorf("demo merchant: %w", err)
	}
	_, urls, err := svc.CreateLink(ctx, m, paylink.NewLink{
		Amount: 4950, Currency: "AUD", MerchantReference: "DEMO-ORDER-1",
		Customer: paylink.Customer{FirstName: "Jo", LastName: "Citizen", Email: "jo@example.com", Reference: "CUST-1",
			City: "Sydney", State: "NSW", Postcode: "2000", CountryCode: "AU"},
	})
	if err != nil {
		return fmt.Errorf("demo payment link: %w", err)
	}
	fmt.Fprintf(env.stdout, `
Payment link (AUD 49.50, open in a browser):
  hosted page:       %s
  virtual terminal:  %s
Create your own:
curl -s -X POST $BASE/v5/payment-links -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \
  -d '{"amount": 49.50, "currency": "AUD", "merchantReference": "ORDER-1", "customer": {"first_name": "Jo", "email": "jo@example.com"}}'
`, urls.Page, urls.VirtualTerminal)
	return nil
}

// demoUserEmail is the demo merchant's dashboard admin.
const demoUserEmail = "demo@example.com"

// printDemoUser makes sure the demo merchant has a dashboard admin whose
// password is the one kept (mode 0600, like the demo keys) beside the
// database, and prints how to sign in.
func printDemoUser(ctx context.Context, env environment, svc *paylink.Service, baseURL, mid, path string) error {
	email, password, err := demoUser(ctx, svc, mid, path)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, `
Dashboard (open in a browser):
  %s/dashboard/login
  email:     %s
  password:  %s
`, baseURL, email, password)
	return nil
}

// demoUser returns the demo admin's email and a password that signs in.
// It trusts nothing it kept: the admin is created when it is missing (a
// new database beside an old password file), and given the kept password
// again when that no longer signs in (changed in the dashboard), or a new
// random one, kept, when there is none. The email is demoUserEmail, or,
// when another merchant's user holds that (the demo merchant was made
// again on a database that kept its old admin), one naming this merchant.
func demoUser(ctx context.Context, svc *paylink.Service, mid, path string) (email, password string, err error) {
	if password, err = demoPassword(path); err != nil {
		return "", "", err
	}
	email = demoUserEmail
	u, err := svc.UserByEmail(ctx, email)
	if err == nil && u.MerchantID != mid {
		email = "demo+" + mid + "@example.com"
		u, err = svc.UserByEmail(ctx, email)
	}
	switch {
	case isNotFound(err):
		_, err = svc.CreateUser(ctx, paylink.NewUser{MerchantID: mid, Email: email, Role: paylink.RoleAdmin, Password: password})
	case err == nil:
		err = signsIn(ctx, svc, u, password)
	}
	if err != nil {
		return "", "", fmt.Errorf("demo dashboard user: %w", err)
	}
	return email, password, nil
}

// demoPassword is the demo admin's password kept at path, or a new
// random one, kept there, when there is none.
func demoPassword(path string) (string, error) {
	if b, err := os.ReadFile(path); err == nil && len(b) > 0 {
		return string(b), nil
	}
	p, err := paylink.RandomToken(rand.Reader, 20)
	if err != nil {
		return "", fmt.Errorf("demo dashboard password: %w", err)
	}
	if err := os.WriteFile(path, []byte(p), 0o600); err != nil {
		return "", fmt.Errorf("save demo dashboard user: %w", err)
	}
	return p, nil
}

// signsIn gives u the password when it is not already u's.
func signsIn(ctx context.Context, svc *paylink.Service, u *paylink.User, password string) error {
	ok, err := svc.PasswordMatches(u, password)
	if err != nil || ok {
		return err
	}
	return svc.SetPassword(ctx, u, password)
}
