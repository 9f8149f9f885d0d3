package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/paylink/paylink"
)

// runMerchant runs the merchant commands: onboarding and settings.
func runMerchant(ctx context.Context, env environment, args []string) error {
	return runSubcommand(ctx, env, "merchant", []subcommand{
		{"create", "onboard a merchant and print its keys once", runMerchantCreate},
		{"list", "list merchants", runMerchantList},
		{"update", "change a merchant's webhook URL, whitelist, retries or payload", runMerchantUpdate},
		{"rotate-webhook-secret", "give a merchant a new webhook signing secret", runRotateWebhookSecret},
		{"roll-api-key", "give a merchant a new API key; the old one works for --overlap", runRollAPIKey},
	}, args)
}

// multiFlag collects a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// percentFlag is a surcharge rate given as a decimal percentage.
type percentFlag struct{ p *paylink.Percent }

func (f percentFlag) String() string {
	if f.p == nil {
		return ""
	}
	return f.p.String()
}

func (f percentFlag) Set(v string) error {
	p, err := paylink.ParsePercent(v)
	if err != nil {
		return err
	}
	*f.p = p
	return nil
}

func runMerchantCreate(ctx context.Context, env environment, args []string) error {
	f := newFlags("merchant create", env)
	dsn := f.str("db", defaultDB, "database DSN")
	n := paylink.NewMerchant{Settings: paylink.MerchantSettings{Surcharge: paylink.DefaultSurchargeRates()}}
	f.StringVar(&n.Name, "name", "", "legal name (required)")
	f.StringVar(&n.TradingName, "trading-name", "", "trading name shown to customers (required)")
	f.StringVar(&n.Country, "country", "AU", "ISO 3166-1 alpha-2 country of the merchant")
	f.StringVar(&n.Settings.Webhook.URL, "webhook-url", "", "company webhook URL")
	var domains multiFlag
	f.Var(&domains, "webhook-domain", "whitelisted webhook host (repeatable); the company webhook's host is added automatically")
	r := &n.Settings.Surcharge
	f.Var(percentFlag{&r.Debit}, "surcharge-debit", "domestic debit surcharge percent")
	f.Var(percentFlag{&r.Credit}, "surcharge-credit", "domestic credit surcharge percent")
	f.Var(percentFlag{&r.Amex}, "surcharge-amex", "domestic amex surcharge percent")
	f.Var(percentFlag{&r.International}, "surcharge-international", "international card surcharge percent")
	ddFee := directDebitFeeFlags(f)
	f.BoolVar(&n.Settings.Webhook.Legacy, "webhook-legacy", false, "send the older 16-field webhook payload instead of the full one")
	f.BoolVar(&n.Settings.Webhook.Retries, "webhook-retries", false, "retry failed webhooks with exponential backoff for up to 3 days (default: one attempt)")
	pricing := pricingFlags(f.FlagSet)
	asJSON := f.Bool("json", false, "print the credentials as one JSON object")
	if err := f.parse(args); err != nil {
		return ignoreHelp(err)
	}
	dd, err := ddFee()
	if err != nil {
		return err
	}
	n.Settings.DirectDebit = dd
	p, err := pricing.pricing()
	if err != nil {
		return err
	}
	n.Settings.Pricing = p
	n.Settings.Webhook.Domains = domains
	if err := n.Validate(); err != nil {
		return fmt.Errorf("create merchant: %w", err) // before the database is created
	}
	return withNewService(ctx, env, *dsn, func(svc *paylink.Service) error {
		m, creds, err := svc.CreateMerchant(ctx, n)
		if err != nil {
			return fmt.Errorf("create merchant: %w", err)
		}
		return printCredentials(env, m, creds, *asJSON)
	})
}

func printCredentials(env environment, m *paylink.Merchant, c paylink.Credentials, asJSON bool) error {
	if asJSON {
		return json.NewEncoder(env.stdout).Encode(map[string]string{
			"mid": c.MID, "api_key": c.APIKey, "company_token": c.CompanyToken,
			"webhook_secret": c.WebhookSecret, "name": m.Name, "trading_name": m.TradingName,
		})
	}
	fmt.Fprintf(env.stdout, "Merchant %q onboarded. These secrets are shown once; store them now.\n\n", m.TradingName)
	fmt.Fprintf(env.stdout, "mid:            %s\napi_key:        %s\ncompany_token:  %s\n", c.MID, c.APIKey, c.CompanyToken)
	if c.WebhookSecret != "" {
		fmt.Fprintf(env.stdout, "webhook_secret: %s\n", c.WebhookSecret)
	}
	return nil
}

func runMerchantList(ctx context.Context, env environment, args []string) error {
	f := newFlags("merchant list", env)
	dsn := f.str("db", defaultDB, "database DSN")
	if err := f.parse(args); err != nil {
		return ignoreHelp(err)
	}
	return withService(ctx, env, *dsn, func(svc *paylink.Service) error {
		ms, err := svc.ListMerchants(ctx)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "MID\tTRADING NAME\tNAME\tCOUNTRY\tCREATED")
		for _, m := range ms {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", m.ID, m.TradingName, m.Name, m.Country, m.CreatedAt.Format("2006-01-02 15:04"))
		}
		return tw.Flush()
	})
}

// runMerchantUpdate changes a merchant's webhook settings; only the flags
// given change anything, and the change is audited.
func runMerchantUpdate(ctx context.Context, env environment, args []string) error {
	f := newFlags("merchant update", env)
	dsn := f.str("db", defaultDB, "database DSN")
	mid := f.String("merchant", "", "mid of the merchant (required)")
	webhookURL := f.String("webhook-url", "", "new company webhook URL; its host joins the whitelist")
	var domains multiFlag
	f.Var(&domains, "webhook-domain", "whitelisted webhook host (repeatable); replaces the whitelist (the webhook URL's host stays); --webhook-domain= alone empties it")
	retries := f.Bool("webhook-retries", false, "retry failed webhooks with exponential backoff")
	legacy := f.Bool("webhook-legacy", false, "send the older 16-field webhook payload")
	if err := f.parse(args); err != nil {
		return ignoreHelp(err)
	}
	if *mid == "" {
		return errors.New("merchant update: --merchant is required")
	}
	var c paylink.SettingsChange
	set := map[string]bool{}
	f.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	if set["webhook-url"] {
		c.WebhookURL = webhookURL
	}
	if set["webhook-retries"] {
		c.WebhookRetries = retries
	}
	if set["webhook-legacy"] {
		c.WebhookLegacy = legacy
	}
	return withService(ctx, env, *dsn, func(svc *paylink.Service) error {
		if set["webhook-domain"] {
			// The Service normalises them and keeps the webhook URL's
			// host; an empty value names none, so --webhook-domain=
			// alone empties the list (a non-nil empty slice).
			c.WebhookDomains = slices.DeleteFunc(slices.Clone(domains), func(d string) bool { return strings.TrimSpace(d) == "" })
		}
		m, err := svc.UpdateSettings(ctx, *mid, c)
		if err != nil {
			return fmt.Errorf("merchant update: %w", err)
		}
		w := m.Settings.Webhook
		fmt.Fprintf(env.stdout, "Merchant %s: webhook_url=%q whitelist=%s retries=%t legacy=%t\n",
			m.ID, w.URL, strings.Join(w.Domains, ","), w.Retries, w.Legacy)
		return nil
	})
}
