package paylink_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
	"github.com/paylink/paylink/internal/pgtest"
	"github.com/paylink/paylink/internal/processor"
	"github.com/paylink/paylink/internal/vault"
)

// The audit log at the Service level, on both engines: every audited
// operation writes its row with its actor, object and outcome; failed or
// rolled-back operations write none; no secret or card data is stored.

// eachEngine runs fn on a fresh SQLite file and on a fresh PostgreSQL
// database of a server started for this test.
func eachEngine(t *testing.T, fn func(t *testing.T, dsn string)) {
	var pg pgtest.Shared
	pg.Start()
	defer pg.Stop()
	t.Run("sqlite", func(t *testing.T) { fn(t, "") })
	t.Run("postgres", func(t *testing.T) { fn(t, pg.Database(t)) })
}

// auditLog reads the rows after id.
func auditLog(t *testing.T, env *apitest.Env, after int64) []*paylink.AuditEvent {
	t.Helper()
	rows, err := env.Service.AuditLog(context.Background(), paylink.AuditFilter{AfterID: after, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// wantRow is the part of an audit row a step decides.
type wantRow struct {
	action, objectType, objectID string
	outcome                      paylink.AuditOutcome
	detail                       string
}

// auditCase is one audited operation: run as actor, it writes want.
type auditCase struct {
	name  string
	actor paylink.Actor
	do    func(ctx context.Context) ([]wantRow, error)
}

// clerk is an API caller of merchant m, as the API's wrapper sets it.
func clerk(m *paylink.Merchant, requestID string) paylink.Actor {
	return paylink.Actor{Kind: paylink.ActorAPIKey, ID: m.APIKeyID(), IP: "198.51.100.7", RequestID: requestID}
}

// fixture is a merchant and the helpers the cases share.
type fixture struct {
	env   *apitest.Env
	m     *paylink.Merchant
	creds paylink.Credentials
}

func (f *fixture) token(t *testing.T, ctx context.Context) string {
	t.Helper()
	tok, err := f.env.Service.IssueTransactionToken(ctx, f.m, f.creds.CompanyToken)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

const testPAN, testCVC = "4111111111111111", "987"

// purchase makes an approved purchase, or a hold when preAuth.
func (f *fixture) purchase(t *testing.T, ctx context.Context, preAuth bool) *paylink.Transaction {
	t.Helper()
	tx, err := f.env.Service.Purchase(ctx, f.m, paylink.PurchaseRequest{
		CompanyToken: f.creds.CompanyToken, TransactionToken: f.token(t, ctx),
		Customer: paylink.Customer{IPAddress: "203.0.113.7", Timezone: "UTC"},
		Card: &paylink.CardDetails{Number: testPAN, ExpiryMonth: 12, ExpiryYear: f.env.Clock.Now().Year() + 3,
			CVC: testCVC, HolderName: "Jo Citizen"},
		Amount: 1000, Currency: "AUD", PreAuth: preAuth,
	})
	if err != nil {
		t.Fatal(err)
	}
	return tx
}

func TestAuditLogRecordsEveryEvent(t *testing.T) {
	eachEngine(t, func(t *testing.T, dsn string) {
		env := apitest.Start(t, apitest.Options{DSN: dsn})
		svc := env.Service
		f := &fixture{env: env}
		cli := paylink.Actor{Kind: paylink.ActorCLI, ID: "merchant create"}
		var cases []auditCase
		cases = append(cases, auditCase{name: "onboarding", actor: cli, do: func(ctx context.Context) ([]wantRow, error) {
			var err error
			f.m, f.creds, err = svc.CreateMerchant(ctx, paylink.NewMerchant{Name: "Acme Pty Ltd", TradingName: "Acme", Country: "AU"})
			if err != nil {
				return nil, err
			}
			return []wantRow{
				{paylink.AuditMerchantOnboard, paylink.ObjectMerchant, f.m.ID, paylink.OutcomeSuccess, ""},
				{paylink.AuditAPIKeyCreate, paylink.ObjectAPIKey, f.m.APIKeyID(), paylink.OutcomeSuccess, ""},
				{paylink.AuditWebhookSecretCreate, paylink.ObjectWebhookSecret, f.m.ID, paylink.OutcomeSuccess, ""},
			}, nil
		}})
		for _, bad := range []struct{ name, key, detail string }{
			{"missing API key", "", "missing"},
			{"malformed API key", "Basic abc", "malformed"},
			{"unknown API key", "pl_sk_" + strings.Repeat("x", 40), "unknown"},
		} {
			cases = append(cases, auditCase{name: bad.name,
				actor: paylink.Actor{Kind: paylink.ActorAPIKey, IP: "192.0.2.1", RequestID: "req-" + bad.detail},
				do: func(ctx context.Context) ([]wantRow, error) {
					if _, err := svc.Authenticate(ctx, bad.key); paylink.AsError(err).Kind != paylink.KindUnauthorized {
						return nil, errors.New("authenticated with a bad key")
					}
					return []wantRow{{paylink.AuditAuthenticate, paylink.ObjectAPIKey, "", paylink.OutcomeDenied, bad.detail}}, nil
				}})
		}
		add := func(name string, do func(ctx context.Context) ([]wantRow, error)) {
			cases = append(cases, auditCase{name: name, actor: paylink.Actor{}, do: do})
		}
		add("company token of another merchant", func(ctx context.Context) ([]wantRow, error) {
			if _, err := svc.IssueTransactionToken(ctx, f.m, "not-the-company-token"); paylink.AsError(err).Kind != paylink.KindForbidden {
				return nil, errors.New("accepted a wrong company token")
			}
			return []wantRow{{paylink.AuditCompanyToken, paylink.ObjectCompanyToken, "", paylink.OutcomeDenied, paylink.CodeCompanyTokenMismatch}}, nil
		})
		var linkID string
		add("payment link created", func(ctx context.Context) ([]wantRow, error) {
			l, _, err := svc.CreateLink(ctx, f.m, paylink.NewLink{Amount: 2500, Currency: "AUD", MerchantReference: "INV-1"})
			if err != nil {
				return nil, err
			}
			linkID = l.ID
			return []wantRow{{paylink.AuditLinkCreate, paylink.ObjectPaymentLink, l.ID, paylink.OutcomeSuccess, "amount=25.00 currency=AUD"}}, nil
		})
		add("payment link cancelled", func(ctx context.Context) ([]wantRow, error) {
			_, _, err := svc.CancelLink(ctx, f.m, linkID)
			return []wantRow{{paylink.AuditLinkCancel, paylink.ObjectPaymentLink, linkID, paylink.OutcomeSuccess, ""}}, err
		})
		add("card token invalidated", func(ctx context.Context) ([]wantRow, error) {
			c, err := svc.TokenizeCard(ctx, f.m, paylink.TokenizeRequest{CompanyToken: f.creds.CompanyToken, MultiUse: true,
				Card: &paylink.CardDetails{Number: testPAN, ExpiryMonth: 12, ExpiryYear: f.env.Clock.Now().Year() + 3,
					CVC: testCVC, HolderName: "Jo Citizen"}})
			if err != nil {
				return nil, err
			}
			_, err = svc.InvalidateCardToken(ctx, f.m, f.creds.CompanyToken, c.Token)
			return []wantRow{{paylink.AuditCardInvalidate, paylink.ObjectCard, c.Info.Fingerprint, paylink.OutcomeSuccess, ""}}, err
		})
		var captured *paylink.Transaction
		add("capture", func(ctx context.Context) ([]wantRow, error) {
			hold := f.purchase(t, ctx, true)
			var err error
			captured, err = svc.Capture(ctx, f.m, hold.Reference, paylink.CaptureRequest{CompanyToken: f.creds.CompanyToken,
				TransactionToken: f.token(t, ctx), Amount: 1000, Currency: "AUD"})
			return []wantRow{{paylink.AuditCapture, paylink.ObjectTransaction, hold.Reference, paylink.OutcomeSuccess, "APPROVED amount=10.00 currency=AUD"}}, err
		})
		add("cancel", func(ctx context.Context) ([]wantRow, error) {
			hold := f.purchase(t, ctx, true)
			_, err := svc.Cancel(ctx, f.m, hold.Reference, paylink.CancelRequest{CompanyToken: f.creds.CompanyToken,
				TransactionToken: f.token(t, ctx)})
			return []wantRow{{paylink.AuditCancel, paylink.ObjectTransaction, hold.Reference, paylink.OutcomeSuccess, "PRE_AUTHORISED_REVERSED amount=10.00 currency=AUD"}}, err
		})
		add("refund", func(ctx context.Context) ([]wantRow, error) {
			r, _, err := svc.Refund(ctx, f.m, captured.Reference, paylink.RefundRequest{CompanyToken: f.creds.CompanyToken,
				TransactionToken: f.token(t, ctx), Customer: paylink.Customer{IPAddress: "203.0.113.7", Timezone: "UTC"}, Amount: 400, Currency: "AUD"})
			if err != nil {
				return nil, err
			}
			return []wantRow{{paylink.AuditRefund, paylink.ObjectRefund, r.Reference, paylink.OutcomeSuccess, "APPROVED amount=4.00 currency=AUD"}}, nil
		})
		var expiring *paylink.Transaction
		add("hold for the expiry job", func(ctx context.Context) ([]wantRow, error) {
			expiring = f.purchase(t, ctx, true)
			return nil, nil // a purchase is in the transaction history, not the audit log
		})
		cases = append(cases, auditCase{name: "hold expired by the job", actor: paylink.Actor{Kind: paylink.ActorSystem, ID: "preauth-expiry"},
			do: func(ctx context.Context) ([]wantRow, error) {
				env.Clock.Advance(8 * 24 * time.Hour)
				n, err := svc.ExpirePreAuths(ctx)
				if n != 1 {
					return nil, errors.Join(err, errors.New("expired no hold"))
				}
				return []wantRow{{paylink.AuditExpire, paylink.ObjectTransaction, expiring.Reference, paylink.OutcomeSuccess, "PRE_AUTHORISED_REVERSED amount=10.00 currency=AUD"}}, nil
			}})
		cases = append(cases, auditCase{name: "webhook secret rotated", actor: paylink.Actor{Kind: paylink.ActorCLI, ID: "merchant rotate-webhook-secret"},
			do: func(ctx context.Context) ([]wantRow, error) {
				_, err := svc.RotateWebhookSecret(ctx, f.m.ID, env.WebhookSecretVersion(f.m.ID), time.Hour)
				return []wantRow{{paylink.AuditWebhookSecretRotate, paylink.ObjectWebhookSecret, f.m.ID, paylink.OutcomeSuccess, "overlap=3600s"}}, err
			}})
		cases = append(cases, auditCase{name: "settings and whitelist changed", actor: paylink.Actor{Kind: paylink.ActorStaff, ID: "user_42", IP: "198.51.100.9", RequestID: "req-settings"},
			do: func(ctx context.Context) ([]wantRow, error) {
				retries := true
				_, err := svc.UpdateSettings(ctx, f.m.ID, paylink.SettingsChange{WebhookRetries: &retries,
					WebhookDomains: []string{"hooks.example.com", "example.org"}})
				return []wantRow{
					{paylink.AuditSettingsUpdate, paylink.ObjectMerchant, f.m.ID, paylink.OutcomeSuccess, "webhook.domains,webhook.retries"},
					{paylink.AuditWhitelistUpdate, paylink.ObjectMerchant, f.m.ID, paylink.OutcomeSuccess, "hooks.example.com,example.org"},
				}, err
			}})
		cases = append(cases, auditCase{name: "settings unchanged", actor: cli, do: func(ctx context.Context) ([]wantRow, error) {
			retries := true
			_, err := svc.UpdateSettings(ctx, f.m.ID, paylink.SettingsChange{WebhookRetries: &retries})
			return nil, err // nothing changed, nothing to audit
		}})

		var debit *paylink.Transaction
		add("direct debit", func(ctx context.Context) ([]wantRow, error) {
			var err error
			debit, err = svc.DirectDebit(ctx, f.m, paylink.DirectDebitRequest{CompanyToken: f.creds.CompanyToken,
				TransactionToken: f.token(t, ctx), Amount: 1000, Currency: "AUD",
				Account:  paylink.BankAccount{BSB: "062-000", Number: "1234" + processor.AccountRefundRejected, HolderName: "Jo Citizen"},
				Customer: paylink.Customer{IPAddress: "203.0.113.7", Timezone: "UTC"}})
			if err != nil {
				return nil, err
			}
			env.Clock.Advance(73 * time.Hour)
			_, err = svc.ClearDirectDebits(ctx)
			return nil, err // debits and their clearing are in the history, not here
		})
		add("direct debit refund rejected by the bank", func(ctx context.Context) ([]wantRow, error) {
			r, _, err := svc.RefundDirectDebit(ctx, f.m, debit.Reference, paylink.RefundRequest{CompanyToken: f.creds.CompanyToken,
				TransactionToken: f.token(t, ctx), Customer: paylink.Customer{IPAddress: "203.0.113.7", Timezone: "UTC"},
				Amount: 300, Currency: "AUD"})
			if err != nil {
				return nil, err
			}
			return []wantRow{{paylink.AuditRefund, paylink.ObjectRefund, r.Reference, paylink.OutcomeFailure, "FAILED amount=3.00 currency=AUD"}}, nil
		})

		var last int64
		for i, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				actor := tc.actor
				if actor == (paylink.Actor{}) {
					actor = clerk(f.m, "req-"+tc.name)
				}
				want, err := tc.do(paylink.WithActor(context.Background(), actor))
				if err != nil {
					t.Fatalf("case %d: %v", i, err)
				}
				got := auditLog(t, env, last)
				if len(got) > 0 {
					last = got[len(got)-1].ID
				}
				checkRows(t, got, want, actor, merchantOf(f.m, tc.name), env.Clock.Now())
			})
		}
		t.Run("no secret or card data", func(t *testing.T) {
			checkNoSecrets(t, auditLog(t, env, 0), f.creds.APIKey, f.creds.CompanyToken, f.creds.WebhookSecret,
				"1234"+processor.AccountRefundRejected)
		})
	})
}

// merchantOf is the merchant an audited row names: none for a key that
// matched no merchant.
func merchantOf(m *paylink.Merchant, name string) string {
	if strings.HasSuffix(name, "API key") {
		return ""
	}
	return m.ID
}

// checkRows compares the rows an operation wrote with what it should.
func checkRows(t *testing.T, got []*paylink.AuditEvent, want []wantRow, actor paylink.Actor, mid string, now time.Time) {
	t.Helper()
	if len(got) != len(want) {
		for _, e := range got {
			t.Logf("row: %+v", *e)
		}
		t.Fatalf("got %d audit rows, want %d", len(got), len(want))
	}
	for i, e := range got {
		w := want[i]
		gotRow := wantRow{e.Action, e.ObjectType, e.ObjectID, e.Outcome, e.Detail}
		if gotRow != w {
			t.Errorf("row %d: got %+v, want %+v", i, gotRow, w)
		}
		if money, want := e.Money(), wantMoney(w.detail); money != want {
			t.Errorf("row %d (%s): Money %q, want %q", i, e.Action, money, want)
		}
		gotActor := paylink.Actor{Kind: e.ActorKind, ID: e.ActorID, IP: e.SourceIP, RequestID: e.RequestID}
		if gotActor != actor {
			t.Errorf("row %d actor: got %+v, want %+v", i, gotActor, actor)
		}
		if e.MerchantID != mid {
			t.Errorf("row %d merchant: got %q, want %q", i, e.MerchantID, mid)
		}
		if !e.At.Equal(now.Truncate(time.Microsecond)) || e.At.Location() != time.UTC {
			t.Errorf("row %d time: got %v, want %v in UTC", i, e.At, now)
		}
	}
}

// wantMoney is what AuditEvent.Money should read from a detail: the
// amount and currency it ends with, "" for none.
func wantMoney(detail string) string {
	_, money, ok := strings.Cut(" "+detail, " amount=")
	if !ok {
		return ""
	}
	amount, currency, _ := strings.Cut(money, " currency=")
	return currency + " " + amount
}

// checkNoSecrets fails when any field of any row contains a secret, the
// PAN or its last ten digits, or is the CVC.
func checkNoSecrets(t *testing.T, rows []*paylink.AuditEvent, secrets ...string) {
	t.Helper()
	if len(rows) == 0 {
		t.Fatal("no audit rows to scan")
	}
	secrets = append(secrets, testPAN, testPAN[len(testPAN)-10:])
	for _, e := range rows {
		for _, v := range []string{e.MerchantID, string(e.ActorKind), e.ActorID, e.SourceIP, e.RequestID,
			e.Action, e.ObjectType, e.ObjectID, string(e.Outcome), e.Detail} {
			for _, s := range secrets {
				if s != "" && strings.Contains(v, s) {
					t.Errorf("audit row %d (%s) holds a secret or card number in %q", e.ID, e.Action, v)
				}
			}
			if v == testCVC {
				t.Errorf("audit row %d (%s) holds the CVC", e.ID, e.Action)
			}
		}
	}
}

func TestAuditLogFailedOperationsLeaveNoRow(t *testing.T) {
	eachEngine(t, func(t *testing.T, dsn string) {
		env := apitest.Start(t, apitest.Options{DSN: dsn})
		am := env.Onboard()
		f := &fixture{env: env, m: am.Merchant, creds: am.Creds}
		ctx := paylink.WithActor(context.Background(), clerk(f.m, "req-fail"))
		svc := env.Service
		hold := f.purchase(t, ctx, true)
		sale := f.purchase(t, ctx, false)
		tests := []struct {
			name, code string
			do         func() error
		}{
			{"capture with a spent transaction token", paylink.CodeTransactionTokenInvalid, func() error {
				_, err := svc.Capture(ctx, f.m, hold.Reference, paylink.CaptureRequest{CompanyToken: f.creds.CompanyToken,
					TransactionToken: "spent", Amount: 1000, Currency: "AUD"})
				return err
			}},
			{"capture above the hold", paylink.CodeAmountExceedsAuthorised, func() error {
				_, err := svc.Capture(ctx, f.m, hold.Reference, paylink.CaptureRequest{CompanyToken: f.creds.CompanyToken,
					TransactionToken: f.token(t, ctx), Amount: 1001, Currency: "AUD"})
				return err
			}},
			{"cancel of a captured sale", paylink.CodeInvalidState, func() error {
				_, err := svc.Cancel(ctx, f.m, sale.Reference, paylink.CancelRequest{CompanyToken: f.creds.CompanyToken,
					TransactionToken: f.token(t, ctx)})
				return err
			}},
			{"refund above the total", paylink.CodeAmountExceedsRefundable, func() error {
				_, _, err := svc.Refund(ctx, f.m, sale.Reference, paylink.RefundRequest{CompanyToken: f.creds.CompanyToken,
					TransactionToken: f.token(t, ctx), Customer: paylink.Customer{IPAddress: "203.0.113.7", Timezone: "UTC"}, Amount: 5000, Currency: "AUD"})
				return err
			}},
			{"cancel of an unknown link", paylink.CodeNotFound, func() error {
				_, _, err := svc.CancelLink(ctx, f.m, "lnk_nope")
				return err
			}},
			{"rotation for an unknown merchant", paylink.CodeNotFound, func() error {
				_, err := svc.RotateWebhookSecret(ctx, "MNOPE", "", time.Hour)
				return err
			}},
			{"settings of an unknown merchant", paylink.CodeNotFound, func() error {
				retries := true
				_, err := svc.UpdateSettings(ctx, "MNOPE", paylink.SettingsChange{WebhookRetries: &retries})
				return err
			}},
		}
		before := auditLog(t, env, 0)
		last := before[len(before)-1].ID
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if got := paylink.AsError(tt.do()); got == nil || got.Code != tt.code {
					t.Fatalf("got error %v, want code %s", got, tt.code)
				}
				if got := auditLog(t, env, last); len(got) != 0 {
					t.Errorf("got %d audit rows (first %+v), want none", len(got), *got[0])
				}
			})
		}
	})
}

// failingStore is the real store with one fault injected: adding a
// history event of type failType fails, after the audit row was written
// in the same transaction, so that the whole change rolls back.
type failingStore struct {
	paylink.Store
	failType string
}

func (s failingStore) Update(ctx context.Context, fn func(paylink.Tx) error) error {
	return s.Store.Update(ctx, func(tx paylink.Tx) error { return fn(failingTx{Tx: tx, failType: s.failType}) })
}

type failingTx struct {
	paylink.Tx
	failType string
}

func (tx failingTx) AddEvent(e *paylink.Event) error {
	if e.Type == tx.failType {
		return errors.New("injected fault")
	}
	return tx.Tx.AddEvent(e)
}

func TestAuditRowRollsBackWithItsChange(t *testing.T) {
	eachEngine(t, func(t *testing.T, dsn string) {
		env := apitest.Start(t, apitest.Options{DSN: dsn})
		am := env.Onboard()
		f := &fixture{env: env, m: am.Merchant, creds: am.Creds}
		ctx := paylink.WithActor(context.Background(), clerk(f.m, "req-rollback"))
		hold := f.purchase(t, ctx, true)
		v, err := vault.New(bytes.Repeat([]byte{7}, vault.KeySize))
		if err != nil {
			t.Fatal(err)
		}
		faulty, err := paylink.NewService(env.Service.Config(), paylink.Deps{Store: failingStore{env.Store, "transaction.APPROVED"},
			Vault: v, Processor: &processor.Sandbox{}, Clock: env.Clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		defer faulty.Close(ctx)
		last := auditLog(t, env, 0)
		_, err = faulty.Capture(ctx, f.m, hold.Reference, paylink.CaptureRequest{CompanyToken: f.creds.CompanyToken,
			TransactionToken: f.token(t, ctx), Amount: 1000, Currency: "AUD"})
		if err == nil {
			t.Fatal("capture succeeded despite the injected fault")
		}
		if got := auditLog(t, env, last[len(last)-1].ID); len(got) != 0 {
			t.Errorf("got %d audit rows after a rolled-back capture (first %+v), want none", len(got), *got[0])
		}
	})
}

func TestAuthFailureAuditIsRateLimited(t *testing.T) {
	eachEngine(t, func(t *testing.T, dsn string) {
		env := apitest.Start(t, apitest.Options{DSN: dsn})
		// attempt sends n bad keys from ip at once, as a flood would.
		attempt := func(ip string, n int) {
			ctx := paylink.WithActor(context.Background(), paylink.Actor{Kind: paylink.ActorAPIKey, IP: ip})
			var wg sync.WaitGroup
			for range n {
				wg.Go(func() {
					if _, err := env.Service.Authenticate(ctx, "pl_sk_wrong"); err == nil {
						t.Error("a wrong key authenticated")
					}
				})
			}
			wg.Wait()
		}
		count := func() map[string]int {
			out := map[string]int{}
			for _, e := range auditLog(t, env, 0) {
				out[e.SourceIP]++
			}
			return out
		}
		// The flooding address sends more than the total: its suppressed
		// failures do not spend the other addresses' rows.
		attempt("192.0.2.1", paylink.AuthFailuresTotal+15)
		attempt("192.0.2.2", 3)
		got := count()
		if got["192.0.2.1"] != paylink.AuthFailuresPerIP || got["192.0.2.2"] != 3 {
			t.Errorf("got rows per address %v, want %d for the flooding one and 3 for the other", got, paylink.AuthFailuresPerIP)
		}
		if !strings.Contains(env.LogText(), "over the audit limit") {
			t.Error("the suppression was not logged")
		}
		env.Clock.Advance(time.Minute)
		attempt("192.0.2.1", 1)
		if got := count()["192.0.2.1"]; got != paylink.AuthFailuresPerIP+1 {
			t.Errorf("next minute: got %d rows for the address, want %d", got, paylink.AuthFailuresPerIP+1)
		}
		// One IPv6 client can pick any address of its /64: it has one
		// budget, not one per address (it used to fill the total alone).
		env.Clock.Advance(time.Minute)
		for i := range paylink.AuthFailuresPerIP + 10 {
			attempt(fmt.Sprintf("2001:db8:1:2::%x", i+1), 1)
		}
		rows := 0
		for ip, n := range count() {
			if strings.HasPrefix(ip, "2001:db8:1:2:") {
				rows += n
			}
		}
		if rows != paylink.AuthFailuresPerIP {
			t.Errorf("rows for one /64 spread over many addresses: got %d, want %d", rows, paylink.AuthFailuresPerIP)
		}
	})
}

// TestSourceIP: the remote address's host, with or without a port, and an
// IPv6 zone dropped, so that the customer's ip_address check accepts it.
func TestSourceIP(t *testing.T) {
	for _, c := range []struct{ remote, want string }{
		{"203.0.113.7:52100", "203.0.113.7"},
		{"203.0.113.7", "203.0.113.7"},
		{"[2001:db8::1]:52100", "2001:db8::1"},
		{"2001:db8::1", "2001:db8::1"},
		{"[fe80::1%eth0]:52100", "fe80::1"},
		{"fe80::1%eth0", "fe80::1"},
	} {
		if got := paylink.SourceIP(c.remote); got != c.want {
			t.Errorf("SourceIP(%q) = %q, want %q", c.remote, got, c.want)
		}
	}
}

// TestAuditEventMoney reads the amount a money action's row names, and
// nothing from a row written before rows named it or of another action.
func TestAuditEventMoney(t *testing.T) {
	for _, tt := range []struct {
		action, detail, want string
	}{
		{paylink.AuditRefund, "APPROVED amount=12.34 currency=AUD", "AUD 12.34"},
		{paylink.AuditCapture, "processor_unavailable amount=1200 currency=JPY", "JPY 1200"},
		{paylink.AuditLinkCreate, "amount=42.000 currency=KWD", "KWD 42.000"},
		{paylink.AuditRefund, "APPROVED", ""},                  // written before rows named the amount
		{paylink.AuditCancel, "amount=10.00", ""},              // no currency
		{paylink.AuditUserRemove, "amount=1 currency=AUD", ""}, // not a money action
	} {
		e := paylink.AuditEvent{Action: tt.action, Detail: tt.detail}
		if got := e.Money(); got != tt.want {
			t.Errorf("%s %q: got %q, want %q", tt.action, tt.detail, got, tt.want)
		}
	}
}
