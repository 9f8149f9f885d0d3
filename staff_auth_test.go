package paylink_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
)

// Staff authority (StaffContext) in place of the API's company and
// transaction tokens, on both engines.

// staffPurchase makes an approved (or pre-authorised) AUD card purchase of
// m through the API and returns its reference.
func staffPurchase(t *testing.T, env *apitest.Env, m *apitest.Merchant, amount string, preAuth bool) string {
	t.Helper()
	r := env.Post("/v5/purchase", m, env.CardPurchase(m, "4111111111111111", amount, func(b map[string]any) {
		if preAuth {
			apitest.Set(b, "purchase.should_service_apply_pre_authorisation", "true")
		}
	}))
	if r.Status != http.StatusOK {
		t.Fatalf("purchase: %d %s", r.Status, r.Raw)
	}
	return r.Str("purchase.purchase_reference")
}

func TestStaffContextAuthorisesOnlyItsMerchantAndPermission(t *testing.T) {
	usersEngine(t, func(t *testing.T, env *apitest.Env) {
		ctx := context.Background()
		m, other := env.Onboard(), env.Onboard()
		staff := newStaff(t, env, m, "staff@example.com", paylink.RoleStaff)
		viewer := newStaff(t, env, m, "viewer@example.com", paylink.RoleViewer)
		ref := staffPurchase(t, env, m, "20.00", false)
		otherRef := staffPurchase(t, env, other, "20.00", false)
		ss := &paylink.StaffSession{User: staff, Merchant: m.Merchant}

		if _, err := env.Service.StaffContext(ctx, &paylink.StaffSession{User: viewer, Merchant: m.Merchant}, paylink.PermRefund); code(err) != paylink.CodePermissionDenied {
			t.Errorf("viewer: got %v, want %s", err, paylink.CodePermissionDenied)
		}
		refundCtx, err := env.Service.StaffContext(ctx, ss, paylink.PermRefund)
		if err != nil {
			t.Fatal(err)
		}
		captureCtx, err := env.Service.StaffContext(ctx, ss, paylink.PermCapture)
		if err != nil {
			t.Fatal(err)
		}
		req := paylink.RefundRequest{Amount: 500, Currency: "AUD", Customer: paylink.Customer{IPAddress: "192.0.2.1", Timezone: "UTC"}}
		tests := []struct {
			name     string
			ctx      context.Context
			m        *paylink.Merchant
			ref      string
			wantCode string
		}{
			{"another merchant needs its tokens", refundCtx, other.Merchant, otherRef, paylink.CodeInvalidRequest},
			{"another permission needs the tokens", captureCtx, m.Merchant, ref, paylink.CodeInvalidRequest},
			{"no staff authority needs the tokens", ctx, m.Merchant, ref, paylink.CodeInvalidRequest},
			{"staff authority refunds", refundCtx, m.Merchant, ref, ""},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, _, err := env.Service.Refund(tt.ctx, tt.m, tt.ref, req)
				if got := code(err); got != tt.wantCode {
					t.Errorf("got %q (%v), want %q", got, err, tt.wantCode)
				}
			})
		}
		tx, err := env.Service.TransactionStatus(ctx, other.Merchant, otherRef)
		if err != nil || tx.Refunded != 0 {
			t.Errorf("other merchant's payment: refunded %v (%v), want 0", tx, err)
		}
		if tx, err = env.Service.TransactionStatus(ctx, m.Merchant, ref); err != nil || tx.Refunded != 500 {
			t.Errorf("refunded: got %v (%v), want 500", tx, err)
		}
	})
}

// TestStaffNeedTheRoutesAuthority: the Service itself refuses a dashboard
// user who rolls the API key, rotates the webhook secret, resends a
// webhook or cancels a link without staff authority for that permission,
// whatever route called it; the CLI and the API act by their own.
func TestStaffNeedTheRoutesAuthority(t *testing.T) {
	usersEngine(t, func(t *testing.T, env *apitest.Env) {
		m := env.Onboard()
		admin := newStaff(t, env, m, "admin@example.com", paylink.RoleAdmin)
		asStaff := paylink.WithActor(context.Background(), paylink.Actor{Kind: paylink.ActorStaff, ID: admin.ID})
		ss := &paylink.StaffSession{User: admin, Merchant: m.Merchant}
		authority := func(p paylink.Permission) context.Context {
			ctx, err := env.Service.StaffContext(asStaff, ss, p)
			if err != nil {
				t.Fatal(err)
			}
			return ctx
		}
		calls := map[string]struct {
			p  paylink.Permission
			do func(context.Context) error
		}{
			"roll the API key": {paylink.PermAPIKeys, func(ctx context.Context) error {
				_, err := env.Service.RollAPIKey(ctx, m.ID, "", 0)
				return err
			}},
			"rotate the webhook secret": {paylink.PermWebhooks, func(ctx context.Context) error {
				_, err := env.Service.RotateWebhookSecret(ctx, m.ID, env.WebhookSecretVersion(m.ID), 0)
				return err
			}},
			"resend a webhook": {paylink.PermWebhooks, func(ctx context.Context) error {
				return env.Service.ResendMerchantWebhook(ctx, m.Merchant, "msg_none")
			}},
			"cancel a link": {paylink.PermLinks, func(ctx context.Context) error {
				_, _, err := env.Service.CancelLink(ctx, m.Merchant, "lnk_none")
				return err
			}},
		}
		for name, c := range calls {
			for _, ctx := range []context.Context{asStaff, authority(paylink.PermView)} {
				if err := c.do(ctx); code(err) != paylink.CodePermissionDenied {
					t.Errorf("%s as staff without its authority: got %v, want %s", name, err, paylink.CodePermissionDenied)
				}
			}
			if err := c.do(authority(c.p)); code(err) == paylink.CodePermissionDenied {
				t.Errorf("%s with its authority: refused (%v)", name, err)
			}
			cli := paylink.WithActor(context.Background(), paylink.Actor{Kind: paylink.ActorCLI, ID: "test"})
			if err := c.do(cli); code(err) == paylink.CodePermissionDenied {
				t.Errorf("%s from the CLI: refused (%v)", name, err)
			}
		}
	})
}

// asStaff is ctx acting as dashboard user id of m, with the authority of
// a route of permission p (as the dashboard gives it).
func asStaff(t *testing.T, svc *paylink.Service, ctx context.Context, m *paylink.Merchant, id string, p paylink.Permission) context.Context {
	t.Helper()
	ctx = paylink.WithActor(ctx, paylink.Actor{Kind: paylink.ActorStaff, ID: id})
	ctx, err := svc.StaffContext(ctx, &paylink.StaffSession{User: &paylink.User{ID: id, MerchantID: m.ID, Role: paylink.RoleAdmin}, Merchant: m}, p)
	if err != nil {
		t.Fatal(err)
	}
	return ctx
}
