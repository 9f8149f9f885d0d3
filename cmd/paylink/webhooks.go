package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/paylink/paylink"
)

// Webhooks: operator commands for the delivery log, manual redelivery,
// signing-secret rotation, and the pricing flags of merchant create.

// runWebhooks runs the webhook delivery log commands.
func runWebhooks(ctx context.Context, env environment, args []string) error {
	return runSubcommand(ctx, env, "webhooks", []subcommand{
		{"list", "show the webhook delivery log", runWebhooksList},
		{"resend", "queue a webhook delivery again", runWebhooksResend},
	}, args)
}

func runWebhooksList(ctx context.Context, env environment, args []string) error {
	f := newFlags("webhooks list", env)
	dsn := f.str("db", defaultDB, "database DSN")
	var filter paylink.WebhookFilter
	f.StringVar(&filter.MerchantID, "merchant", "", "only this merchant's deliveries (mid)")
	f.BoolVar(&filter.FailedOnly, "failed", false, "only failed deliveries")
	f.IntVar(&filter.Limit, "limit", 100, "at most this many deliveries, newest first, 1 to 10000")
	attempts := f.Bool("attempts", false, "also print every attempt of each delivery")
	if err := f.parse(args); err != nil {
		return ignoreHelp(err)
	}
	if err := inRange("limit", filter.Limit, 1, 10000); err != nil {
		return err
	}
	return withService(ctx, env, *dsn, func(svc *paylink.Service) error {
		ds, err := svc.ListWebhooks(ctx, filter)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
		// With --attempts a LATENCY column, which only attempts fill.
		header, latency := "", ""
		if *attempts {
			header, latency = "LATENCY\t", "\t"
		}
		fmt.Fprintf(tw, "ID\tMID\tREFERENCE\tSTATUS\tTARGET\tSTATE\tATTEMPTS\tLAST CODE\t%sCREATED\tURL\tLAST ERROR\n", header)
		for _, d := range ds {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s%s\t%s\t%s\n", d.ID, d.MerchantID, d.Reference, d.EventStatus,
				d.Target, d.State, d.Attempts, d.LastStatusCode, latency, d.CreatedAt.Format(time.RFC3339), d.URL, d.LastError)
			if *attempts {
				if err := printAttempts(ctx, tw, svc, d.ID); err != nil {
					return err
				}
			}
		}
		return tw.Flush()
	})
}

// printAttempts writes the attempts of delivery id as rows of the list's
// table below it, each value in the column of its delivery's like value:
// its number under ATTEMPTS, its HTTP status under LAST CODE, when it
// started under CREATED, its URL and error under URL and LAST ERROR, and
// how long it took under LATENCY, a column of attempts only.
func printAttempts(ctx context.Context, tw *tabwriter.Writer, svc *paylink.Service, id string) error {
	as, err := svc.WebhookAttempts(ctx, id)
	if err != nil {
		return err
	}
	for _, a := range as {
		fmt.Fprintf(tw, "  attempt\t\t\t\t\t\t%d\t%d\t%dms\t%s\t%s\t%s\n", a.Attempt, a.StatusCode,
			a.Latency.Milliseconds(), a.StartedAt.Format(time.RFC3339), a.URL, a.Error)
	}
	return nil
}

func runWebhooksResend(ctx context.Context, env environment, args []string) error {
	f := newFlags("webhooks resend", env)
	f.maxArgs = 1
	dsn := f.str("db", defaultDB, "database DSN")
	if err := f.parse(args); err != nil {
		return ignoreHelp(err)
	}
	if f.NArg() != 1 {
		return errors.New("webhooks resend: want exactly one delivery ID (see webhooks list)")
	}
	id := f.Arg(0)
	return withService(ctx, env, *dsn, func(svc *paylink.Service) error {
		if err := svc.ResendWebhook(ctx, id); err != nil {
			return err
		}
		fmt.Fprintf(env.stdout, "webhook %s queued for redelivery; a running paylink serve sends it within seconds\n", id)
		return nil
	})
}

// runRotateWebhookSecret gives a merchant a new webhook signing secret,
// printed once; the previous one also signs for the overlap. It rotates
// the secret it read as current, and is refused when another rotation
// replaced that secret before this one was made.
func runRotateWebhookSecret(ctx context.Context, env environment, args []string) error {
	f := newFlags("merchant rotate-webhook-secret", env)
	dsn := f.str("db", defaultDB, "database DSN")
	mid := f.String("merchant", "", "mid of the merchant (required)")
	overlap := f.Duration("overlap", 24*time.Hour, "how long webhooks are also signed with the previous secret, in whole seconds (at most 168h)")
	if err := f.parse(args); err != nil {
		return ignoreHelp(err)
	}
	if *mid == "" {
		return errors.New("merchant rotate-webhook-secret: --merchant is required")
	}
	return withService(ctx, env, *dsn, func(svc *paylink.Service) error {
		m, err := svc.Merchant(ctx, *mid)
		if err != nil {
			return err
		}
		// Rotated from the secret read here, as the dashboard rotates
		// from the one its page showed: a rotation made meanwhile refuses
		// this one, rather than this one dropping the secret receivers
		// verify with (only two sign).
		from := m.Settings.Webhook.CurrentSecret()
		fmt.Fprintf(env.stderr, "Rotating the webhook signing secret of %s (version %s).\n", *mid, cmp.Or(from, "none yet"))
		secret, err := svc.RotateWebhookSecret(ctx, *mid, from, *overlap)
		if err != nil {
			return err
		}
		fmt.Fprintf(env.stdout, "New webhook signing secret for %s (shown once; store it now):\n\nwebhook_secret: %s\n\n"+
			"Webhooks carry signatures under both the new and the previous secret for %s.\n", *mid, secret, *overlap)
		return nil
	})
}

// pricingOptions are the fee flags of merchant create.
type pricingOptions struct {
	p        paylink.Pricing
	fixed    map[string]*string
	fixedIn  multiFlag
	billable multiFlag
	fs       *flag.FlagSet
}

// pricingFlags registers the fee flags; fixed amounts are decimals of
// the transaction currency with up to 6 places, the defaults' of any
// currency that --fee-fixed-in does not name.
func pricingFlags(fs *flag.FlagSet) *pricingOptions {
	o := &pricingOptions{p: paylink.DefaultPricing(), fixed: map[string]*string{}, fs: fs}
	p := &o.p
	fs.StringVar(&p.Model, "pricing-model", p.Model, "fee model: blended or ic_plus (interchange plus, ESTIMATED IC_PLUS line)")
	fs.Var(percentFlag{&p.BlendedPercent}, "fee-blended-percent", "SERVICE_BLENDED_FEE percent for non-amex cards")
	fs.Var(percentFlag{&p.AmexPercent}, "fee-amex-percent", "AMEX_FEE percent")
	fs.Var(percentFlag{&p.AmexTaxPercent}, "fee-amex-tax-percent", "AMEX_FEE_TAX: GST percent on the amex fee")
	fs.Var(percentFlag{&p.ICPlusPercent}, "fee-ic-plus-percent", "IC_PLUS estimate percent")
	fs.Var(percentFlag{&p.ServiceProtectPercent}, "fee-service-protect-percent", "SERVICE_PROTECT_FEE percent, 0 for none")
	for name, help := range map[string]string{
		"fee-blended-fixed": "SERVICE_BLENDED_FEE fixed part, in the unit of a currency --fee-fixed-in does not name (default 0.30)",
		"fee-amex-fixed":    "AMEX_FEE fixed part, in the unit of a currency --fee-fixed-in does not name (default 0.30)",
		"fee-ic-plus-fixed": "IC_PLUS estimate fixed part, in the unit of a currency --fee-fixed-in does not name (default 0.10)",
		"fee-service-trans": "SERVICE_TRANS_FEE per transaction, in the unit of a currency --fee-fixed-in does not name (default none)",
	} {
		o.fixed[name] = fs.String(name, "", help)
	}
	fs.Var(&o.fixedIn, "fee-fixed-in", "fixed amounts of payments in one currency, e.g. JPY:blended=30,amex=30 "+
		"(parts blended, amex, ic_plus, service_trans; every part the pricing charges; repeatable, once per currency)")
	fs.Var(&o.billable, "fee-billable", "fee code invoiced separately (BILLABLE) rather than DEDUCTED (repeatable)")
	return o
}

// changed reports whether any pricing flag was given.
func (o *pricingOptions) changed() bool {
	changed := false
	o.fs.Visit(func(f *flag.Flag) {
		changed = changed || strings.HasPrefix(f.Name, "fee-") || f.Name == "pricing-model"
	})
	return changed
}

// pricing returns the configured pricing, or nil (the defaults) when no
// fee flag was given.
func (o *pricingOptions) pricing() (*paylink.Pricing, error) {
	if !o.changed() {
		return nil, nil
	}
	p := o.p
	if p.Model != paylink.PricingBlended && p.Model != paylink.PricingICPlus {
		return nil, fmt.Errorf("--pricing-model must be %s or %s", paylink.PricingBlended, paylink.PricingICPlus)
	}
	targets := map[string]*int64{"fee-blended-fixed": &p.BlendedFixed, "fee-amex-fixed": &p.AmexFixed,
		"fee-ic-plus-fixed": &p.ICPlusFixed, "fee-service-trans": &p.ServiceTransFee}
	for name, v := range o.fixed {
		if *v == "" {
			continue
		}
		micros, err := parseFixedFee(*v)
		if err != nil {
			return nil, fmt.Errorf("--%s: %w", name, err)
		}
		*targets[name] = micros
	}
	for _, v := range o.fixedIn {
		code, fixed, err := parseFixedIn(v, p)
		if err != nil {
			return nil, fmt.Errorf("--fee-fixed-in %q: %w", v, err)
		}
		if _, dup := p.FixedIn[code]; dup {
			return nil, fmt.Errorf("--fee-fixed-in %q: %s is given twice", v, code)
		}
		if p.FixedIn == nil {
			p.FixedIn = map[string]paylink.FixedFees{}
		}
		p.FixedIn[code] = fixed
	}
	codes := []string{paylink.FeeServiceBlended, paylink.FeeServiceProtect, paylink.FeeAmex, paylink.FeeAmexTax,
		paylink.FeeICPlus, paylink.FeeServiceTrans, paylink.FeeDirectDebit}
	for _, c := range o.billable {
		if !slices.Contains(codes, strings.ToUpper(c)) {
			return nil, fmt.Errorf("--fee-billable %q: want one of %s", c, strings.Join(codes, ", "))
		}
		p.Billable = append(p.Billable, strings.ToUpper(c))
	}
	return &p, nil
}

// parseFixedFee parses a fixed fee amount: a non-negative decimal with
// up to 6 places (fee micro-units), at most paylink.MaxFixedFee.
func parseFixedFee(v string) (int64, error) {
	micros, err := paylink.ParseAmount(v, paylink.Currency{Code: "fee", Exponent: 6})
	if err != nil || micros < 0 || micros > paylink.MaxFixedFee {
		return 0, fmt.Errorf("want a non-negative amount with up to 6 decimals, at most %s", paylink.FormatMicros(paylink.MaxFixedFee))
	}
	return micros, nil
}

// parseFixedIn parses one --fee-fixed-in value, CUR:part=amount,...,
// into the currency's code and its fixed amounts. Every part that p
// charges must be given (amex always; blended or ic_plus by the model;
// service_trans when p has a transaction fee): a part left out would be
// zero, not the default's amount in another currency's unit.
func parseFixedIn(v string, p paylink.Pricing) (string, paylink.FixedFees, error) {
	var fixed paylink.FixedFees
	code, list, ok := strings.Cut(v, ":")
	cur, known := paylink.LookupCurrency(code)
	switch {
	case !ok || strings.TrimSpace(list) == "":
		return "", fixed, errors.New("want CUR:part=amount,..., e.g. JPY:blended=30,amex=30")
	case !known:
		return "", fixed, fmt.Errorf("%q is not an ISO 4217 currency code paylink accepts", code)
	}
	parts := map[string]*int64{"blended": &fixed.Blended, "amex": &fixed.Amex, "ic_plus": &fixed.ICPlus, "service_trans": &fixed.ServiceTrans}
	given := map[string]bool{}
	for item := range strings.SplitSeq(list, ",") {
		name, amount, _ := strings.Cut(item, "=")
		name = strings.ToLower(strings.TrimSpace(name))
		target, ok := parts[name]
		switch {
		case !ok:
			return "", fixed, fmt.Errorf("unknown part %q: want blended, amex, ic_plus or service_trans", name)
		case given[name]:
			return "", fixed, fmt.Errorf("%s is given twice", name)
		}
		micros, err := parseFixedFee(amount)
		if err != nil {
			return "", fixed, fmt.Errorf("%s: %w", name, err)
		}
		*target, given[name] = micros, true
	}
	for _, name := range chargedFixedParts(p) {
		if !given[name] {
			return "", fixed, fmt.Errorf("%s is missing: give every fixed part the pricing charges (%s)",
				name, strings.Join(chargedFixedParts(p), ", "))
		}
	}
	return cur.Code, fixed, nil
}

// chargedFixedParts names the fixed parts that p charges on some payment.
func chargedFixedParts(p paylink.Pricing) []string {
	parts := []string{"amex"}
	if p.Model == paylink.PricingICPlus {
		parts = append(parts, "ic_plus")
	} else {
		parts = append(parts, "blended")
	}
	if p.ServiceTransFee > 0 {
		parts = append(parts, "service_trans")
	}
	return parts
}
