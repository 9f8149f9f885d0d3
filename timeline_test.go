package paylink_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
)

// receiver is a merchant's webhook endpoint answering status and body.
func receiver(t *testing.T, status int, body string) func(*paylink.NewMerchant) {
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(status)
		w.Write([]byte(body))
	}))
	t.Cleanup(hook.Close)
	return func(n *paylink.NewMerchant) {
		n.Settings.Webhook.URL, n.Settings.Webhook.Domains = hook.URL+"/hook", []string{"127.0.0.1"}
	}
}

// refund refunds amount of tr for m.
func refund(t *testing.T, env *apitest.Env, m *apitest.Merchant, tr *paylink.Transaction, amount int64) *paylink.Refund {
	t.Helper()
	ctx := context.Background()
	tok, err := env.Service.IssueTransactionToken(ctx, m.Merchant, m.Creds.CompanyToken)
	if err != nil {
		t.Fatal(err)
	}
	r, _, err := env.Service.Refund(ctx, m.Merchant, tr.Reference, paylink.RefundRequest{CompanyToken: m.Creds.CompanyToken,
		TransactionToken: tok, Amount: amount, Currency: tr.Currency, Customer: paylink.Customer{IPAddress: "203.0.113.7", Timezone: "UTC"}})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestPaymentTimeline gathers a payment's events, refund, postings,
// webhook attempts with their status codes and audit rows in time order,
// and keeps another merchant's payment out of reach.
func TestPaymentTimeline(t *testing.T) {
	onEngines(t, func(t *testing.T, env *apitest.Env) {
		ctx := context.Background()
		m := env.Onboard(receiver(t, http.StatusServiceUnavailable, "down for maintenance"))
		other := env.Onboard()
		tr := pay(t, env, m, payment{"4111111111111111", "jo@example.com", "INV-9", "", 1000, "AUD"})
		env.WaitWebhooks()
		theirs := pay(t, env, other, payment{"4111111111111111", "jo@example.com", "INV-9", "", 1000, "AUD"})
		env.WaitWebhooks()
		env.Clock.Advance(time.Minute)
		r := refund(t, env, m, tr, 400)

		tl, err := env.Service.PaymentTimeline(ctx, m.Merchant, tr.Reference)
		if err != nil {
			t.Fatal(err)
		}
		if tl.Transaction.Reference != tr.Reference || len(tl.Refunds) != 1 || tl.Refunds[0].Reference != r.Reference {
			t.Fatalf("got payment %s with %d refunds, want %s with refund %s", tl.Transaction.Reference, len(tl.Refunds), tr.Reference, r.Reference)
		}
		var seen []string
		for i, e := range tl.Entries {
			if i > 0 && e.At.Before(tl.Entries[i-1].At) {
				t.Errorf("entry %d (%s at %s) is before entry %d (%s)", i, e.Kind, e.At, i-1, tl.Entries[i-1].At)
			}
			seen = append(seen, describe(e))
		}
		for _, want := range []string{
			"event transaction.APPROVED " + tr.Reference,
			"webhook " + tr.Reference,
			"webhook_attempt 503 down for maintenance",
			"posting charge 1000",
			"refund " + r.Reference + " 400",
			"event refund.APPROVED " + r.Reference,
			"posting refund -400",
			"audit refund.create " + r.Reference,
		} {
			if !slices.Contains(seen, want) {
				t.Errorf("timeline has no %q; got %q", want, seen)
			}
		}
		approved, refunded := slices.Index(seen, "event transaction.APPROVED "+tr.Reference), slices.Index(seen, "refund "+r.Reference+" 400")
		if approved > refunded {
			t.Errorf("the approval (entry %d) comes after the refund (entry %d): %q", approved, refunded, seen)
		}
		for _, s := range seen {
			if strings.Contains(s, theirs.Reference) {
				t.Errorf("timeline shows another merchant's %q", s)
			}
		}

		for _, tt := range []struct {
			name string
			m    *apitest.Merchant
			ref  string
		}{
			{"another merchant's payment", m, theirs.Reference},
			{"this payment asked by another merchant", other, tr.Reference},
			{"unknown reference", m, "pr_nosuchpayment"},
			{"empty reference", m, ""},
		} {
			_, err := env.Service.PaymentTimeline(ctx, tt.m.Merchant, tt.ref)
			wantError(t, tt.name, err, paylink.KindNotFound, paylink.CodeNotFound)
		}
	})
}

// describe names an entry by what a test can predict.
func describe(e paylink.TimelineEntry) string {
	switch e.Kind {
	case paylink.TimelineEvent:
		return "event " + e.Event.Type + " " + e.Event.Reference
	case paylink.TimelineRefund:
		return "refund " + e.Refund.Reference + " " + itoa(e.Refund.Amount)
	case paylink.TimelinePosting:
		return "posting " + string(e.Posting.Kind) + " " + itoa(e.Posting.Amount)
	case paylink.TimelineWebhook:
		return "webhook " + e.Delivery.Reference
	case paylink.TimelineWebhookAttempt:
		return "webhook_attempt " + itoa(int64(e.Attempt.StatusCode)) + " " + e.Attempt.ResponseExcerpt
	case paylink.TimelineAudit:
		return "audit " + e.Audit.Action + " " + e.Audit.ObjectID
	}
	return "unknown kind " + e.Kind
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestWebhookLog lists a merchant's deliveries with each attempt's status
// code and a bounded response excerpt, filters the failed ones, pages,
// and resends only the merchant's own.
func TestWebhookLog(t *testing.T) {
	onEngines(t, func(t *testing.T, env *apitest.Env) {
		ctx := context.Background()
		long := "\x1b[31merror\r\n" + strings.Repeat("é", 600)
		m := env.Onboard(receiver(t, http.StatusInternalServerError, long))
		other := env.Onboard(receiver(t, http.StatusOK, "ok"))
		// Each webhook is sent before the next payment moves the clock,
		// so that no attempt outlives its lease on the test clock.
		first := pay(t, env, m, payment{"4111111111111111", "", "", "", 1000, "AUD"})
		env.WaitWebhooks()
		second := pay(t, env, m, payment{"4111111111111111", "", "", "", 2000, "AUD"})
		env.WaitWebhooks()
		theirs := pay(t, env, other, payment{"4111111111111111", "", "", "", 3000, "AUD"})
		env.WaitWebhooks()

		page, err := env.Service.WebhookLog(ctx, m.Merchant, paylink.WebhookLogFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Entries) != 2 || page.Next != "" || page.Entries[0].Delivery.Reference != second.Reference ||
			page.Entries[1].Delivery.Reference != first.Reference {
			t.Fatalf("got %d entries (next %q), want the deliveries of %s then %s", len(page.Entries), page.Next, second.Reference, first.Reference)
		}
		for _, e := range page.Entries {
			if e.Delivery.State != paylink.DeliveryFailed || len(e.Attempts) != 1 {
				t.Fatalf("got %s with %d attempts, want failed after 1", e.Delivery.State, len(e.Attempts))
			}
			a := e.Attempts[0]
			if a.StatusCode != http.StatusInternalServerError || len(a.ResponseExcerpt) > paylink.ResponseExcerptBytes ||
				!strings.HasPrefix(a.ResponseExcerpt, "\uFFFD[31merror\uFFFD\nééé") || !utf8.ValidString(a.ResponseExcerpt) {
				t.Errorf("got attempt %d with excerpt %q (%d bytes), want 500 with a clean excerpt of at most %d bytes",
					a.StatusCode, a.ResponseExcerpt, len(a.ResponseExcerpt), paylink.ResponseExcerptBytes)
			}
		}

		otherAll, err := env.Service.WebhookLog(ctx, other.Merchant, paylink.WebhookLogFilter{})
		if err != nil {
			t.Fatal(err)
		}
		otherFailed, err := env.Service.WebhookLog(ctx, other.Merchant, paylink.WebhookLogFilter{FailedOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(otherAll.Entries) != 1 || otherAll.Entries[0].Delivery.Reference != theirs.Reference ||
			otherAll.Entries[0].Attempts[0].ResponseExcerpt != "ok" || len(otherFailed.Entries) != 0 {
			t.Errorf("other merchant: got %d deliveries and %d failed, want its one delivered webhook only",
				len(otherAll.Entries), len(otherFailed.Entries))
		}

		var paged []string
		f := paylink.WebhookLogFilter{FailedOnly: true, Limit: 1}
		for range 5 {
			p, err := env.Service.WebhookLog(ctx, m.Merchant, f)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range p.Entries {
				paged = append(paged, e.Delivery.Reference)
			}
			if f.Cursor = p.Next; p.Next == "" {
				break
			}
		}
		if want := []string{second.Reference, first.Reference}; !slices.Equal(paged, want) {
			t.Errorf("pages of 1: got %v, want %v", paged, want)
		}

		for _, bad := range []paylink.WebhookLogFilter{{Limit: -1}, {Limit: paylink.MaxWebhookPage + 1}, {Cursor: "%%%"}} {
			_, err := env.Service.WebhookLog(ctx, m.Merchant, bad)
			wantError(t, "bad log filter", err, paylink.KindInvalid, paylink.CodeInvalidRequest)
		}

		id := page.Entries[0].Delivery.ID
		err = env.Service.ResendMerchantWebhook(ctx, other.Merchant, id)
		wantError(t, "another merchant's delivery", err, paylink.KindNotFound, paylink.CodeNotFound)
		err = env.Service.ResendMerchantWebhook(ctx, m.Merchant, "msg_nosuchdelivery")
		wantError(t, "unknown delivery", err, paylink.KindNotFound, paylink.CodeNotFound)
		for _, r := range auditLog(t, env, 0) {
			if r.Action == paylink.AuditWebhookResend {
				t.Fatalf("a refused resend was audited: %+v", r)
			}
		}
		if err := env.Service.ResendMerchantWebhook(asStaff(t, env.Service, ctx, m.Merchant, "usr_7", paylink.PermWebhooks), m.Merchant, id); err != nil {
			t.Fatal(err)
		}
		env.WaitWebhooks()
		after, err := env.Service.WebhookLog(ctx, m.Merchant, paylink.WebhookLogFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if got := len(after.Entries[0].Attempts); got != 2 || len(after.Entries[1].Attempts) != 1 {
			t.Errorf("after resend: got %d and %d attempts, want 2 for the resent delivery and 1 for the other",
				got, len(after.Entries[1].Attempts))
		}
		var resent *paylink.AuditEvent
		for _, r := range auditLog(t, env, 0) {
			if r.Action == paylink.AuditWebhookResend {
				resent = r
			}
		}
		if resent == nil || resent.MerchantID != m.ID || resent.ObjectID != id || resent.ActorID != "usr_7" {
			t.Errorf("got resend audit row %+v, want %s of %s by usr_7", resent, id, m.ID)
		}
	})
}

// TestResponseExcerpt bounds and cleans what a receiver answered.
func TestResponseExcerpt(t *testing.T) {
	for _, tt := range []struct {
		name, body, want string
	}{
		{"short text", "bad signature", "bad signature"},
		{"empty", "", ""},
		{"newline and tab kept", "a\n\tb", "a\n\tb"},
		{"control characters replaced", "a\x00b\x1bc\r", "a\uFFFDb\uFFFDc\uFFFD"},
		{"invalid UTF-8 replaced", "a\xffb", "a\uFFFDb"},
		{"cut to the bound", strings.Repeat("x", 1000), strings.Repeat("x", paylink.ResponseExcerptBytes)},
		{"cut at a character boundary", "x" + strings.Repeat("é", 600), "x" + strings.Repeat("é", (paylink.ResponseExcerptBytes-1)/2)},
		{"a 4-byte character cut after 3 bytes is left out", strings.Repeat("a", paylink.ResponseExcerptBytes-3) + "😀tail", strings.Repeat("a", paylink.ResponseExcerptBytes-3)},
		{"card numbers masked", "order failed: card 4242424242424242 exp 12/29", "order failed: card 424242******4242 exp 12/29"},
		{"a card number across the cut masked", strings.Repeat("a", paylink.ResponseExcerptBytes-10) + " 4242 4242 4242 4242",
			strings.Repeat("a", paylink.ResponseExcerptBytes-10) + " 424242***"},
		// Masking shortens the text, so the cut can reach the end of what
		// was read, where a number the read cut short is not found: its
		// digits are left out (a verification sweep).
		{"a number the read cut short, after masked ones",
			(strings.Repeat("4-1-1-1-1-1-1-1-1-1-1-1-1-1-1-1, ", 22) + strings.Repeat("x", 29) + "5555555555554444 end")[:paylink.ResponseExcerptRead],
			strings.Repeat("411111******1111, ", 22) + strings.Repeat("x", 29)},
		{"a number the read cut short in invisible padding", (strings.Repeat("x", 480) + "4111111111111" + strings.Repeat("\u200b", 100) + "111 end")[:paylink.ResponseExcerptRead],
			strings.Repeat("x", 480)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := paylink.ResponseExcerpt([]byte(tt.body)); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestReconciliations lists runs newest first with every variance.
func TestReconciliations(t *testing.T) {
	onEngines(t, func(t *testing.T, env *apitest.Env) {
		ctx := context.Background()
		day := env.Clock.Now().UTC().Format(time.DateOnly)
		first, err := env.Service.Reconcile(ctx, "first.csv", []paylink.AcquirerRecord{
			{Line: 2, Date: day, Reference: "pr_unknown1", Type: paylink.RecordCapture, Currency: "AUD", Amount: 1000}})
		if err != nil {
			t.Fatal(err)
		}
		env.Clock.Advance(time.Hour)
		second, err := env.Service.Reconcile(ctx, "second.csv", []paylink.AcquirerRecord{
			{Line: 2, Date: day, Reference: "pr_unknown2", Type: paylink.RecordCapture, Currency: "AUD", Amount: 2000},
			{Line: 3, Date: day, Reference: "pr_unknown3", Type: paylink.RecordCapture, Currency: "NZD", Amount: 3000}})
		if err != nil {
			t.Fatal(err)
		}
		for _, tt := range []struct {
			limit int
			want  []*paylink.Reconciliation
		}{
			{0, []*paylink.Reconciliation{second, first}},
			{1, []*paylink.Reconciliation{second}},
			{paylink.MaxReconciliations, []*paylink.Reconciliation{second, first}},
		} {
			got, err := env.Service.Reconciliations(ctx, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("limit %d: got %d runs, want %d", tt.limit, len(got), len(tt.want))
			}
			for i := range got {
				g, w := got[i], tt.want[i]
				if g.ID != w.ID || g.FileName != w.FileName || !slices.Equal(g.Days, w.Days) || !g.CreatedAt.Equal(w.CreatedAt) ||
					g.Matched != w.Matched || !slices.Equal(g.Variances, w.Variances) {
					t.Errorf("limit %d, run %d: got %+v, want %+v", tt.limit, i, g, w)
				}
			}
		}
		if len(second.Variances) != 2 || second.Variances[0].Kind != paylink.VarianceMissingInLedger {
			t.Errorf("got variances %+v, want two missing in the ledger", second.Variances)
		}
		for _, bad := range []int{-1, paylink.MaxReconciliations + 1} {
			_, err := env.Service.Reconciliations(ctx, bad)
			wantError(t, "bad limit", err, paylink.KindInvalid, paylink.CodeInvalidRequest)
		}
	})
}
