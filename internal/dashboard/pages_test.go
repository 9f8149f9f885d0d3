package dashboard_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
)

// The links, developers and balances pages: roles, CSRF, isolation
// between merchants, idempotent creation and the audit trail.

// formKey is the idempotency key of a page's form.
func formKey(t *testing.T, p page) string {
	t.Helper()
	m := regexp.MustCompile(`name="idempotency_key" value="([^"]+)"`).FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("no idempotency key on the page (status %d)", p.status)
	}
	return m[1]
}

// formSecret is the version of the signing secret the page's rotation
// form names as current, which the rotation is made from.
func formSecret(t *testing.T, p page) string {
	t.Helper()
	m := regexp.MustCompile(`name="current_secret" value="([^"]*)"`).FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("no current secret on the page (status %d)", p.status)
	}
	return m[1]
}

// staffAudit is the actor of the merchant's audit rows of an action.
func staffAudit(t *testing.T, env *apitest.Env, mid, action string) []string {
	t.Helper()
	rows, err := env.Service.AuditLog(context.Background(), paylink.AuditFilter{MerchantID: mid, Action: action, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range rows {
		out = append(out, string(r.ActorKind)+":"+r.ActorID)
	}
	return out
}

// linkCount is how many links m has.
func linkCount(t *testing.T, env *apitest.Env, m *apitest.Merchant) int {
	t.Helper()
	ls, err := env.Service.ListLinks(context.Background(), m.Merchant, 0)
	if err != nil {
		t.Fatal(err)
	}
	return len(ls)
}

// linkForm is a valid create form, sent as the page fills it in (the
// surcharge box checked) with an expiry of 30 days.
func linkForm(csrf, key string) url.Values {
	return url.Values{"csrf": {csrf}, "idempotency_key": {key}, "amount": {"12.50"}, "currency": {"AUD"},
		"merchantReference": {"ORDER-7"}, "customer.email": {"jo@example.com"}, "surcharge": {"on"}, "expires_in_days": {"30"}}
}

func TestLinksPage(t *testing.T) {
	eachEngine(t, func(t *testing.T, dsn string) {
		env := apitest.Start(t, apitest.Options{DSN: dsn})
		m, other := env.Onboard(), env.Onboard()
		staff := addUser(t, env, m, "staff@example.com", paylink.RoleStaff)
		addUser(t, env, m, "viewer@example.com", paylink.RoleViewer)
		theirs, _, err := env.Service.CreateLink(context.Background(), other.Merchant, paylink.NewLink{Amount: 100, Currency: "AUD", MerchantReference: "X"})
		if err != nil {
			t.Fatal(err)
		}

		b := signedIn(t, env, "staff@example.com")
		list := b.get("/dashboard/links")
		if list.status != http.StatusOK || !strings.Contains(list.body, `id="create-link"`) {
			t.Fatalf("links page: got %d without the create form, want 200 with it", list.status)
		}
		key := formKey(t, list)

		t.Run("CSRF refused", func(t *testing.T) {
			if p := b.post("/dashboard/links", linkForm("wrong", key)); p.status != http.StatusForbidden {
				t.Errorf("got %d, want 403", p.status)
			}
			if p := b.postFrom("https://evil.example", "/dashboard/links", linkForm(list.csrf(), key)); p.status != http.StatusForbidden {
				t.Errorf("other origin: got %d, want 403", p.status)
			}
			if n := linkCount(t, env, m); n != 0 {
				t.Errorf("got %d links, want 0", n)
			}
		})
		for _, bad := range []struct{ name, field, value, errorID string }{
			{"bad amount", "amount", "12.505", "amount-error"},
			{"reference that is no invoice number", "merchantReference", "..", "ref-error"},
			{"no days", "expires_in_days", "0", "expires-error"},
			{"days that are no number", "expires_in_days", "soon", "expires-error"},
			{"more days than a link may last", "expires_in_days", "367", "expires-error"},
			// Each customer field's problem is beside it (the accessibility
			// sweep found these four with no message or aria-invalid).
			{"a card number as first name", "customer.first_name", "4111 1111 1111 1111", "first-name-error"},
			{"a card number as last name", "customer.last_name", "4111 1111 1111 1111", "last-name-error"},
			{"a phone number too long", "customer.phone", strings.Repeat("1", paylink.MaxFieldLength+1), "phone-error"},
			{"a customer reference with a control character", "customer.reference", "C-1\x01", "customer-reference-error"},
		} {
			t.Run(bad.name, func(t *testing.T) {
				f := linkForm(list.csrf(), key)
				f.Set(bad.field, bad.value)
				p := b.post("/dashboard/links", f)
				if p.status != http.StatusBadRequest || !strings.Contains(p.body, `id="`+bad.errorID+`"`) ||
					!strings.Contains(p.body, `aria-describedby="`+bad.errorID+`"`) {
					t.Errorf("got %d, want 400 with the %s's error tied to it", p.status, bad.field)
				}
				if n := linkCount(t, env, m); n != 0 {
					t.Errorf("got %d links, want 0", n)
				}
			})
		}
		// PostgreSQL refuses bytes that are not UTF-8 in a text parameter:
		// each of these was a 500 there.
		t.Run("not UTF-8", func(t *testing.T) {
			f := linkForm(list.csrf(), key)
			f.Set("merchantReference", "REF\xff")
			if p := b.post("/dashboard/links", f); p.status != http.StatusBadRequest {
				t.Errorf("a reference that is not UTF-8: got %d, want 400", p.status)
			}
			f = linkForm(list.csrf(), key)
			f.Set("idempotency_key", "a\x00b")
			if p := b.post("/dashboard/links", f); p.status != http.StatusBadRequest {
				t.Errorf("a NUL in the form: got %d, want 400", p.status)
			}
			if p := b.post("/dashboard/links/%ff/cancel", url.Values{"csrf": {list.csrf()}}); p.status != http.StatusBadRequest {
				t.Errorf("a link id that is not UTF-8: got %d, want 400", p.status)
			}
			for _, path := range []string{"/dashboard/payments?q=%ff", "/dashboard/payments?cursor=MTcwMDAwMDAwMDAwMDAwMC7_",
				"/dashboard/payments?cursor=MS4A", "/dashboard/payments/pr%00"} {
				if p := b.get(path); p.status != http.StatusBadRequest {
					t.Errorf("GET %s: got %d, want 400", path, p.status)
				}
			}
			if n := linkCount(t, env, m); n != 0 {
				t.Errorf("got %d links, want 0", n)
			}
		})

		created := b.post("/dashboard/links", linkForm(list.csrf(), key))
		loc := created.header.Get("Location")
		if created.status != http.StatusSeeOther || !strings.HasPrefix(loc, "/dashboard/links/lnk_") {
			t.Fatalf("create: got %d to %q, want 303 to the link (%s)", created.status, loc, created.body)
		}
		id := strings.TrimSuffix(strings.TrimPrefix(loc, "/dashboard/links/"), "?done=created")
		l, urls, err := env.Service.Link(context.Background(), m.Merchant, id)
		if err != nil || l.Amount != 1250 || l.MerchantReference != "ORDER-7" || l.Customer.Email != "jo@example.com" ||
			!l.ApplySurcharge || l.ExpiresAt.Sub(l.CreatedAt) != 30*24*time.Hour {
			t.Fatalf("got link %+v, %v, want AUD 12.50 for ORDER-7, surcharged, taking payment for 30 days", l, err)
		}
		shown := b.get(loc)
		for _, want := range []string{urls.Page, urls.VirtualTerminal, `id="open-vt"`, `id="cancel-link"`,
			`<dd id="link-surcharge">added on the page</dd>`, `<dd id="link-expires">` + l.ExpiresAt.UTC().Format("2006-01-02 15:04:05 UTC")} {
			if !strings.Contains(shown.body, want) {
				t.Errorf("link page lacks %q", want)
			}
		}
		if got, want := staffAudit(t, env, m.ID, paylink.AuditLinkCreate), []string{"staff:" + staff.ID}; strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("create audit actors: got %v, want %v", got, want)
		}

		t.Run("resubmitted form", func(t *testing.T) {
			again := b.post("/dashboard/links", linkForm(list.csrf(), key))
			if again.status != http.StatusSeeOther || again.header.Get("Location") != loc {
				t.Errorf("got %d to %q, want 303 to %q", again.status, again.header.Get("Location"), loc)
			}
			if n := linkCount(t, env, m); n != 1 {
				t.Errorf("got %d links, want 1", n)
			}
		})
		t.Run("listed", func(t *testing.T) {
			p := b.get("/dashboard/links")
			if !strings.Contains(p.body, id) || !strings.Contains(p.body, "unpaid") || strings.Contains(p.body, theirs.ID) {
				t.Errorf("list: want %s unpaid and not %s", id, theirs.ID)
			}
		})
		t.Run("another merchant's link", func(t *testing.T) {
			if p := b.get("/dashboard/links/" + theirs.ID); p.status != http.StatusNotFound {
				t.Errorf("view: got %d, want 404", p.status)
			}
			if p := b.post("/dashboard/links/"+theirs.ID+"/cancel", url.Values{"csrf": {list.csrf()}}); p.status != http.StatusNotFound {
				t.Errorf("cancel: got %d, want 404", p.status)
			}
			if l, _, _ := env.Service.Link(context.Background(), other.Merchant, theirs.ID); l.Status != paylink.LinkUnpaid {
				t.Errorf("their link: got %s, want unpaid", l.Status)
			}
		})

		viewer := signedIn(t, env, "viewer@example.com")
		t.Run("viewer reads only", func(t *testing.T) {
			p := viewer.get("/dashboard/links")
			if p.status != http.StatusOK || strings.Contains(p.body, `id="create-link"`) || !strings.Contains(p.body, id) {
				t.Errorf("got %d, want 200 listing %s without the create form", p.status, id)
			}
			if p := viewer.get("/dashboard/links/" + id); strings.Contains(p.body, `id="cancel-link"`) || strings.Contains(p.body, urls.VirtualTerminal) {
				t.Errorf("viewer's link page offers cancel or the virtual terminal")
			}
			tok := viewer.token()
			if p := viewer.post("/dashboard/links", linkForm(tok, "viewer-key")); p.status != http.StatusForbidden {
				t.Errorf("create: got %d, want 403", p.status)
			}
			if p := viewer.post("/dashboard/links/"+id+"/cancel", url.Values{"csrf": {tok}}); p.status != http.StatusForbidden {
				t.Errorf("cancel: got %d, want 403", p.status)
			}
			if n := linkCount(t, env, m); n != 1 {
				t.Errorf("got %d links, want 1", n)
			}
			if l, _, _ := env.Service.Link(context.Background(), m.Merchant, id); l.Status != paylink.LinkUnpaid {
				t.Errorf("got %s, want unpaid", l.Status)
			}
		})

		t.Run("cancel", func(t *testing.T) {
			p := b.post("/dashboard/links/"+id+"/cancel", url.Values{"csrf": {list.csrf()}})
			if p.status != http.StatusSeeOther {
				t.Fatalf("got %d, want 303", p.status)
			}
			if l, _, _ := env.Service.Link(context.Background(), m.Merchant, id); l.Status != paylink.LinkCancelled {
				t.Errorf("got %s, want cancelled", l.Status)
			}
			if got := staffAudit(t, env, m.ID, paylink.AuditLinkCancel); len(got) != 1 || got[0] != "staff:"+staff.ID {
				t.Errorf("cancel audit actors: got %v, want the staff user", got)
			}
			if p := b.get("/dashboard/links/" + id); strings.Contains(p.body, `id="open-vt"`) {
				t.Error("a cancelled link still offers the virtual terminal")
			}
		})

		t.Run("no surcharge and no end", func(t *testing.T) {
			fresh := b.get("/dashboard/links")
			if !strings.Contains(fresh.body, `id="surcharge" name="surcharge" checked`) {
				t.Errorf("the surcharge box is not checked at first:\n%s", fresh.body)
			}
			f := linkForm(fresh.csrf(), formKey(t, fresh))
			f.Del("surcharge")
			f.Set("expires_in_days", "")
			p := b.post("/dashboard/links", f)
			id := strings.TrimSuffix(strings.TrimPrefix(p.header.Get("Location"), "/dashboard/links/"), "?done=created")
			l, _, err := env.Service.Link(context.Background(), m.Merchant, id)
			if err != nil || l.ApplySurcharge || !l.ExpiresAt.IsZero() {
				t.Fatalf("got link %+v, %v; want no surcharge and no end", l, err)
			}
			if shown := b.get("/dashboard/links/" + id); !strings.Contains(shown.body, `<dd id="link-surcharge">none</dd>`) ||
				!strings.Contains(shown.body, `<dd id="link-expires">no end</dd>`) {
				t.Errorf("the link page does not say it has no surcharge and no end:\n%s", shown.body)
			}
		})
	})
}

// apiStatus is the status of GET /v5/balance with an API key.
func apiStatus(env *apitest.Env, m *apitest.Merchant, key string) int {
	c := *m
	c.Creds.APIKey = key
	return env.Do(http.MethodGet, "/v5/balance", &c, nil).Status
}

func TestDevelopersPage(t *testing.T) {
	eachEngine(t, func(t *testing.T, dsn string) {
		env := apitest.Start(t, apitest.Options{DSN: dsn})
		m := env.Onboard()
		admin := addUser(t, env, m, "admin@example.com", paylink.RoleAdmin)
		addUser(t, env, m, "staff@example.com", paylink.RoleStaff)
		addUser(t, env, m, "viewer@example.com", paylink.RoleViewer)
		keysBefore := func() int {
			ks, err := env.Service.APIKeys(context.Background(), m.Merchant)
			if err != nil {
				t.Fatal(err)
			}
			return len(ks)
		}

		for _, email := range []string{"staff@example.com", "viewer@example.com"} {
			t.Run("refused to "+email, func(t *testing.T) {
				b := signedIn(t, env, email)
				if p := b.get("/dashboard/developers"); p.status != http.StatusForbidden {
					t.Errorf("page: got %d, want 403", p.status)
				}
				tok := b.token()
				for _, path := range []string{"/dashboard/developers/keys/roll", "/dashboard/developers/webhook-secret"} {
					p := b.post(path, url.Values{"csrf": {tok}, "idempotency_key": {"k-" + email}, "overlap": {"0s"}})
					if p.status != http.StatusForbidden {
						t.Errorf("%s: got %d, want 403", path, p.status)
					}
				}
				if n := keysBefore(); n != 1 {
					t.Errorf("got %d keys, want 1", n)
				}
				if got := auditActions(t, env, m.ID); count(got, paylink.AuditAPIKeyRotate)+count(got, paylink.AuditWebhookSecretRotate) != 0 {
					t.Errorf("got a rotation in the audit log: %v", got)
				}
			})
		}

		b := signedIn(t, env, "admin@example.com")
		dev := b.get("/dashboard/developers")
		if dev.status != http.StatusOK || !strings.Contains(dev.body, m.APIKeyID()) {
			t.Fatalf("page: got %d, want 200 listing key %s", dev.status, m.APIKeyID())
		}
		t.Run("CSRF refused", func(t *testing.T) {
			p := b.post("/dashboard/developers/keys/roll", url.Values{"csrf": {"nope"}, "idempotency_key": {formKey(t, dev)}, "overlap": {"0s"}})
			if p.status != http.StatusForbidden || keysBefore() != 1 {
				t.Errorf("got %d and %d keys, want 403 and 1", p.status, keysBefore())
			}
		})
		t.Run("bad overlap", func(t *testing.T) {
			p := b.post("/dashboard/developers/keys/roll", url.Values{"csrf": {dev.csrf()}, "idempotency_key": {formKey(t, dev)}, "overlap": {"9999h"}})
			if p.status != http.StatusBadRequest || keysBefore() != 1 {
				t.Errorf("got %d and %d keys, want 400 and 1", p.status, keysBefore())
			}
		})

		old := m.Creds.APIKey
		rolled := b.post("/dashboard/developers/keys/roll", url.Values{"csrf": {dev.csrf()}, "idempotency_key": {formKey(t, dev)}, "overlap": {"1h0m0s"}})
		newKey := regexp.MustCompile(`id="new-key" class="wide" readonly value="([^"]+)"`).FindStringSubmatch(rolled.body)
		if rolled.status != http.StatusOK || newKey == nil {
			t.Fatalf("roll: got %d without the new key, want 200 showing it", rolled.status)
		}
		if got := staffAudit(t, env, m.ID, paylink.AuditAPIKeyRotate); len(got) != 1 || got[0] != "staff:"+admin.ID {
			t.Errorf("roll audit actors: got %v, want the admin", got)
		}
		t.Run("shown once", func(t *testing.T) {
			again := b.post("/dashboard/developers/keys/roll", url.Values{"csrf": {dev.csrf()}, "idempotency_key": {formKey(t, dev)}, "overlap": {"1h0m0s"}})
			if again.status != http.StatusOK || strings.Contains(again.body, newKey[1]) || keysBefore() != 2 {
				t.Errorf("resubmitted roll: got %d, %d keys, key shown %v; want 200, 2 keys, key not shown",
					again.status, keysBefore(), strings.Contains(again.body, newKey[1]))
			}
			if p := b.get("/dashboard/developers"); strings.Contains(p.body, newKey[1]) {
				t.Errorf("the page shows the new key again")
			}
		})
		t.Run("rotate the signing secret", func(t *testing.T) {
			p := b.get("/dashboard/developers")
			r := b.post("/dashboard/developers/webhook-secret", url.Values{"csrf": {p.csrf()}, "idempotency_key": {formKey(t, p)},
				"current_secret": {formSecret(t, p)}, "overlap": {"24h0m0s"}})
			if r.status != http.StatusOK || !regexp.MustCompile(`id="new-secret" class="wide" readonly value="whsec_`).MatchString(r.body) {
				t.Errorf("got %d without the new secret, want 200 showing it", r.status)
			}
			// The page that shows the new secret shows the merchant as the
			// rotation left it (key rotation sweep: it said "one").
			if !strings.Contains(r.body, `id="signing-secrets">two: the current one, and the previous one until `) {
				t.Errorf("the page after the rotation does not say the previous secret still signs")
			}
			if got := staffAudit(t, env, m.ID, paylink.AuditWebhookSecretRotate); len(got) != 1 || got[0] != "staff:"+admin.ID {
				t.Errorf("rotate audit actors: got %v, want the admin", got)
			}
			if p := b.get("/dashboard/developers"); !strings.Contains(p.body, `id="signing-secrets">two: the current one, and the previous one until `) {
				t.Errorf("the page does not say the previous secret still signs, or until when")
			}
		})
		t.Run("old key stops after the overlap", func(t *testing.T) {
			for _, c := range []struct {
				name    string
				advance time.Duration
				key     string
				want    int
			}{
				{"old key within the overlap", 59 * time.Minute, old, http.StatusOK},
				{"new key", 0, newKey[1], http.StatusOK},
				{"old key after the overlap", time.Minute + paylink.AuthCacheTTL, old, http.StatusUnauthorized},
				{"new key after the overlap", 0, newKey[1], http.StatusOK},
			} {
				env.Clock.Advance(c.advance)
				if got := apiStatus(env, m, c.key); got != c.want {
					t.Errorf("%s: got %d, want %d", c.name, got, c.want)
				}
			}
		})
	})
}

// TestDevelopersPageOfAMerchantWithoutASigningSecret: a merchant with no
// signing secret (onboarded before secrets: docs/webhooks.md) sends its
// webhooks unsigned, and the page says so rather than "one" (dashboard
// sweep), and offers to give the first secret, with no overlap to choose
// since no old secret signs.
func TestDevelopersPageOfAMerchantWithoutASigningSecret(t *testing.T) {
	eachEngine(t, func(t *testing.T, dsn string) {
		env := apitest.Start(t, apitest.Options{DSN: dsn})
		m := env.Onboard()
		addUser(t, env, m, "admin@example.com", paylink.RoleAdmin)
		err := env.Store.Update(context.Background(), func(tx paylink.Tx) error {
			mm, err := tx.Merchant(m.ID)
			if err != nil {
				return err
			}
			mm.Settings.Webhook.Secrets, mm.Settings.Webhook.PreviousUntil = nil, 0
			return tx.UpdateMerchantSettings(m.ID, mm.Settings)
		})
		if err != nil {
			t.Fatal(err)
		}
		b := signedIn(t, env, "admin@example.com")
		p := b.get("/dashboard/developers")
		if p.status != http.StatusOK {
			t.Fatalf("page: got %d, want 200", p.status)
		}
		if !strings.Contains(p.body, `id="signing-secrets">none: webhooks are sent unsigned`) {
			t.Errorf("the page does not say webhooks are sent unsigned: %s", section(p.body, `id="signing-secrets"`))
		}
		if strings.Contains(p.body, `id="secret-overlap"`) || !strings.Contains(p.body, `id="rotate-secret">Give a signing secret<`) {
			t.Errorf("the form offers an overlap with an old secret (there is none), or does not offer to give the first secret")
		}
		overlap := regexp.MustCompile(`name="overlap" value="([^"]+)"`).FindStringSubmatch(p.body)
		if overlap == nil {
			t.Fatal("the form sends no overlap")
		}
		r := b.post("/dashboard/developers/webhook-secret", url.Values{"csrf": {p.csrf()}, "idempotency_key": {formKey(t, p)},
			"current_secret": {formSecret(t, p)}, "overlap": {overlap[1]}})
		if r.status != http.StatusOK || !strings.Contains(r.body, `id="new-secret" class="wide" readonly value="whsec_`) {
			t.Fatalf("giving the first secret: got %d without the new secret, want 200 showing it", r.status)
		}
		if !strings.Contains(r.body, `id="signing-secrets">one<`) || !strings.Contains(r.body, `id="rotate-secret">Rotate signing secret<`) {
			t.Errorf("after the first secret: got %s, want one secret and the rotation form", section(r.body, `id="signing-secrets"`))
		}
	})
}

// section is up to 300 bytes of body from marker, for a failure message.
func section(body, marker string) string {
	i := strings.Index(body, marker)
	if i < 0 {
		return "(no " + marker + ")"
	}
	return body[i:min(len(body), i+300)]
}

// onlyDeliveredPayment is the payment of m's first webhook delivery.
func onlyDeliveredPayment(t *testing.T, env *apitest.Env, m *apitest.Merchant) string {
	t.Helper()
	log, err := env.Service.WebhookLog(context.Background(), m.Merchant, paylink.WebhookLogFilter{})
	if err != nil || len(log.Entries) == 0 {
		t.Fatalf("webhook log: got %v, %v", log, err)
	}
	return log.Entries[0].Delivery.Reference
}

// hook is a webhook receiver answering status.
func hook(t *testing.T, status int) func(*paylink.NewMerchant) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(status)
		w.Write([]byte("receiver says no"))
	}))
	t.Cleanup(srv.Close)
	return func(n *paylink.NewMerchant) {
		n.Settings.Webhook.URL, n.Settings.Webhook.Domains = srv.URL+"/hook", []string{"127.0.0.1"}
	}
}

func TestWebhookResendFromDashboard(t *testing.T) {
	eachEngine(t, func(t *testing.T, dsn string) {
		env := apitest.Start(t, apitest.Options{DSN: dsn})
		m, other := env.Onboard(hook(t, http.StatusInternalServerError)), env.Onboard(hook(t, http.StatusOK))
		admin := addUser(t, env, m, "admin@example.com", paylink.RoleAdmin)
		purchase(t, env, m, "10.00", false)
		env.WaitWebhooks()
		purchase(t, env, other, "11.00", false)
		env.WaitWebhooks()
		theirs, err := env.Service.WebhookLog(context.Background(), other.Merchant, paylink.WebhookLogFilter{})
		if err != nil || len(theirs.Entries) != 1 {
			t.Fatalf("their log: got %v, %v, want one delivery", theirs, err)
		}

		b := signedIn(t, env, "admin@example.com")
		p := b.get("/dashboard/developers?failed=1")
		ids := regexp.MustCompile(`id="resend-(msg_[^"]+)"`).FindAllStringSubmatch(p.body, -1)
		if p.status != http.StatusOK || len(ids) != 1 || !strings.Contains(p.body, "HTTP 500") || !strings.Contains(p.body, "receiver says no") {
			t.Fatalf("failed-only log: got %d with %d deliveries, want 200 with one that got HTTP 500", p.status, len(ids))
		}
		id := ids[0][1]
		// Each delivery and attempt says where it went (webhooks sweep: a
		// link's webhook_url and the company URL's rows were alike).
		hookURL := m.Merchant.Settings.Webhook.URL
		if !strings.Contains(p.body, "to your webhook URL "+hookURL) {
			t.Errorf("the delivery log does not say the delivery went to %s", hookURL)
		}
		// The payment's page, which every role sees, shows the address's
		// scheme and host only: its path or query may hold the receiver's
		// secret (second verification sweep: a viewer saw ?key=...).
		ref := onlyDeliveredPayment(t, env, m)
		u, _ := url.Parse(hookURL)
		addUser(t, env, m, "viewer@example.com", paylink.RoleViewer)
		pay := signedIn(t, env, "viewer@example.com").get("/dashboard/payments/" + ref)
		if !strings.Contains(pay.body, "to "+u.Scheme+"://"+u.Host+": HTTP 500") || strings.Contains(pay.body, hookURL) {
			t.Errorf("the payment's timeline, as a viewer sees it, does not say its webhook attempt went to %s://%s alone", u.Scheme, u.Host)
		}

		t.Run("CSRF refused", func(t *testing.T) {
			if r := b.post("/dashboard/developers/webhooks/"+id+"/resend", url.Values{"csrf": {"nope"}}); r.status != http.StatusForbidden {
				t.Errorf("got %d, want 403", r.status)
			}
			if got := staffAudit(t, env, m.ID, paylink.AuditWebhookResend); len(got) != 0 {
				t.Errorf("got resends %v, want none", got)
			}
		})
		t.Run("another merchant's delivery", func(t *testing.T) {
			r := b.post("/dashboard/developers/webhooks/"+theirs.Entries[0].Delivery.ID+"/resend", url.Values{"csrf": {p.csrf()}})
			if r.status != http.StatusNotFound {
				t.Errorf("got %d, want 404", r.status)
			}
		})
		r := b.post("/dashboard/developers/webhooks/"+id+"/resend", url.Values{"csrf": {p.csrf()}})
		if r.status != http.StatusSeeOther {
			t.Fatalf("resend: got %d, want 303 (%s)", r.status, r.body)
		}
		if got := staffAudit(t, env, m.ID, paylink.AuditWebhookResend); len(got) != 1 || got[0] != "staff:"+admin.ID {
			t.Errorf("resend audit actors: got %v, want the admin", got)
		}
		env.WaitWebhooks()
		log, err := env.Service.WebhookLog(context.Background(), m.Merchant, paylink.WebhookLogFilter{})
		if err != nil || len(log.Entries) != 1 || len(log.Entries[0].Attempts) != 2 {
			t.Errorf("after the resend: got %+v, %v, want one delivery with two attempts", log, err)
		}
	})
}

// TestWebhookLogShowsTheNextTry: a delivery waiting for a later attempt
// (a retry after a failure, or a receiver that hangs) says when it is
// next tried; one delivered does not.
func TestWebhookLogShowsTheNextTry(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	failing := hook(t, http.StatusInternalServerError)
	m := env.Onboard(func(n *paylink.NewMerchant) {
		failing(n)
		n.Settings.Webhook.Retries = true
	})
	addUser(t, env, m, "admin@example.com", paylink.RoleAdmin)
	purchase(t, env, m, "10.00", false)
	env.WaitWebhooks()
	log, err := env.Service.WebhookLog(context.Background(), m.Merchant, paylink.WebhookLogFilter{})
	if err != nil || len(log.Entries) != 1 || log.Entries[0].Delivery.State != paylink.DeliveryPending {
		t.Fatalf("got %+v, %v, want one delivery pending a retry", log, err)
	}
	b := signedIn(t, env, "admin@example.com")
	want := "next try " + log.Entries[0].Delivery.NextAttemptAt.UTC().Format("2006-01-02 15:04:05 UTC")
	if p := b.get("/dashboard/developers"); p.status != http.StatusOK || !strings.Contains(p.body, want) {
		t.Errorf("delivery log: got %d without %q", p.status, want)
	}
}

// TestWebhookLogShowsAHeldDelivery: a delivery held for a receiver that
// hangs says so, and how it goes out, rather than a next try a day away.
func TestWebhookLogShowsAHeldDelivery(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard(hook(t, http.StatusOK))
	addUser(t, env, m, "admin@example.com", paylink.RoleAdmin)
	now := env.Clock.Now()
	err := env.Store.Update(context.Background(), func(tx paylink.Tx) error {
		return tx.CreateWebhookDelivery(&paylink.WebhookDelivery{ID: "msg_held", MerchantID: m.ID, Reference: "pr_held",
			EventStatus: paylink.StatusApproved, Target: paylink.TargetCompany, URL: "https://hooks.example.com/x",
			Payload: []byte(`{}`), State: paylink.DeliveryPending, NextAttemptAt: now.Add(24 * time.Hour),
			CreatedAt: now, UpdatedAt: now, HeldFor: "hooks.example.com"})
	})
	if err != nil {
		t.Fatal(err)
	}
	b := signedIn(t, env, "admin@example.com")
	p := b.get("/dashboard/developers")
	if want := "held: your endpoint is not answering; one held webhook at a time is sent to check it"; p.status != http.StatusOK || !strings.Contains(p.body, want) ||
		strings.Contains(p.body, "next try") {
		t.Errorf("delivery log: got %d without %q, or with a next try", p.status, want)
	}
}

func TestBalancesPage(t *testing.T) {
	eachEngine(t, func(t *testing.T, dsn string) {
		env := apitest.Start(t, apitest.Options{DSN: dsn})
		m, other := env.Onboard(), env.Onboard()
		addUser(t, env, m, "viewer@example.com", paylink.RoleViewer)
		mine := purchase(t, env, m, "10.00", false)
		theirs := purchase(t, env, other, "11.00", false)
		day := env.Clock.Now().UTC().Format(time.DateOnly)
		_, err := env.Service.Reconcile(context.Background(), "acquirer.csv", []paylink.AcquirerRecord{
			{Date: day, Reference: mine, Type: paylink.RecordCapture, Currency: "AUD", Amount: 999},
			{Date: day, Reference: theirs, Type: paylink.RecordCapture, Currency: "AUD", Amount: 1},
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := env.Service.Settle(context.Background(), env.Clock.Now().Add(time.Second)); err != nil {
			t.Fatal(err)
		}
		payouts, _, err := env.Service.Payouts(context.Background(), m.Merchant, "", 10)
		if err != nil || len(payouts) != 1 {
			t.Fatalf("payouts: got %v, %v, want one", payouts, err)
		}

		b := signedIn(t, env, "viewer@example.com")
		p := b.get("/dashboard/balances")
		if p.status != http.StatusOK || !strings.Contains(p.body, "AUD 10.00") || !strings.Contains(p.body, payouts[0].ID) {
			t.Fatalf("got %d, want 200 with AUD 10.00 paid out by %s", p.status, payouts[0].ID)
		}
		if !strings.Contains(p.body, mine) || strings.Contains(p.body, theirs) {
			t.Errorf("variances: want %s and not %s", mine, theirs)
		}
		t.Run("settlement CSV", func(t *testing.T) {
			link := "/dashboard/balances/settlement/" + day
			if !strings.Contains(p.body, `href="`+link+`"`) {
				t.Errorf("the payout does not link to %s", link)
			}
			r := b.get(link)
			if r.status != http.StatusOK || !strings.HasPrefix(r.header.Get("Content-Type"), "text/csv") ||
				!strings.HasPrefix(r.body, "date,batch,") || !strings.Contains(r.body, mine) || !strings.Contains(r.body, payouts[0].ID) ||
				strings.Contains(r.body, theirs) {
				t.Errorf("got %d %q %q, want 200 text/csv with %s and its payout, not %s", r.status, r.header.Get("Content-Type"), r.body, mine, theirs)
			}
			if r := b.get("/dashboard/balances/settlement/yesterday"); r.status != http.StatusBadRequest {
				t.Errorf("bad day: got %d, want 400", r.status)
			}
		})
	})
}

// TestBalancesVarianceAmountsInTheirOwnCurrencies: each side of a
// variance is shown in its own currency, and a side without the
// operation shows no amount. The ledger's amount of currency_differs was
// shown in the file's currency (KWD 1.234 for a JPY 1234 payment), and
// missing_in_file showed a file amount of 0 that no file line has.
func TestBalancesVarianceAmountsInTheirOwnCurrencies(t *testing.T) {
	eachEngine(t, func(t *testing.T, dsn string) {
		env := apitest.Start(t, apitest.Options{DSN: dsn})
		m := env.Onboard()
		addUser(t, env, m, "viewer@example.com", paylink.RoleViewer)
		inJPY := func(b map[string]any) { apitest.Set(b, "purchase.currency", "JPY") }
		yen := purchase(t, env, m, "1234", false, inJPY)
		aud := purchase(t, env, m, "10.00", false)
		unfiled := purchase(t, env, m, "12.00", false)
		day := env.Clock.Now().UTC().Format(time.DateOnly)
		_, err := env.Service.Reconcile(context.Background(), "cur.csv", []paylink.AcquirerRecord{
			{Line: 2, Date: day, Reference: yen, Type: paylink.RecordCapture, Currency: "KWD", Amount: 1234},
			{Line: 3, Date: day, Reference: aud, Type: paylink.RecordCapture, Currency: "JPY", Amount: 10},
		})
		if err != nil {
			t.Fatal(err)
		}
		p := signedIn(t, env, "viewer@example.com").get("/dashboard/balances")
		none := `<span class="sr-only">none</span>`
		for ref, want := range map[string][2]string{
			yen:     {"KWD 1.234", "JPY 1234"},
			aud:     {"JPY 10", "AUD 10.00"},
			unfiled: {none, "AUD 12.00"},
		} {
			row := `<th scope="row">` + ref + `</th>`
			i := strings.Index(p.body, row)
			if i < 0 {
				t.Errorf("no variance row of %s", ref)
				continue
			}
			rest := p.body[i:]
			cells := `<td class="num">` + want[0] + `</td>` + "\n" + `<td class="num">` + want[1] + `</td>`
			if end := strings.Index(rest, "</tr>"); !strings.Contains(rest[:end], cells) {
				t.Errorf("variance of %s: got %s, want in the file %s and in the ledger %s", ref, rest[:end], want[0], want[1])
			}
		}
	})
}

// TestBalancesVariancesBounded: the page reads the merchant's newest
// variances, a bounded number, newest run first, and says when there are
// older ones; a refund's variance is the merchant's too. It read every
// variance of the latest 20 runs (all 150 here) with a status look-up
// per reference, and showed no refund's.
func TestBalancesVariancesBounded(t *testing.T) {
	eachEngine(t, func(t *testing.T, dsn string) {
		env := apitest.Start(t, apitest.Options{DSN: dsn})
		m := env.Onboard()
		addUser(t, env, m, "viewer@example.com", paylink.RoleViewer)
		ref := purchase(t, env, m, "10.00", false)
		rf := env.Post("/v5/purchase/"+ref+"/refund", m, map[string]any{
			"token":    map[string]any{"company_token": m.Creds.CompanyToken, "transaction_token": env.TransactionToken(m)},
			"customer": map[string]any{"ip_address": "203.0.113.9", "timezone": "UTC"},
			"refund":   map[string]any{"amount": "4.00", "currency": "AUD"}})
		refund := rf.Str("refund.refund_reference")
		if refund == "" {
			t.Fatalf("refund: %d %s", rf.Status, rf.Raw)
		}
		day := env.Clock.Now().UTC().Format(time.DateOnly)
		var lines []paylink.AcquirerRecord
		for i := range 150 { // one amount_differs, then 149 duplicate_in_file
			lines = append(lines, paylink.AcquirerRecord{Line: i + 2, Date: day, Reference: ref, Currency: "AUD", Amount: 999})
		}
		ctx := context.Background()
		if _, err := env.Service.Reconcile(ctx, "big.csv", lines); err != nil {
			t.Fatal(err)
		}
		env.Clock.Advance(time.Minute)
		_, err := env.Service.Reconcile(ctx, "refund.csv", []paylink.AcquirerRecord{
			{Line: 2, Date: day, Reference: refund, Currency: "AUD", Amount: 300}})
		if err != nil {
			t.Fatal(err)
		}
		p := signedIn(t, env, "viewer@example.com").get("/dashboard/balances")
		refunds, purchases := strings.Count(p.body, `<th scope="row">`+refund+`</th>`), strings.Count(p.body, `<th scope="row">`+ref+`</th>`)
		if refunds != 1 || purchases != paylink.DefaultMerchantVariances-1 || strings.Index(p.body, refund) > strings.Index(p.body, ref+"</th>") ||
			!strings.Contains(p.body, "The newest 100 variances are shown.") {
			t.Errorf("got %d rows of the refund and %d of the purchase, want the refund's first and %d of the purchase, "+
				"with the note that older ones exist", refunds, purchases, paylink.DefaultMerchantVariances-1)
		}
		if _, err := env.Service.MerchantVariances(ctx, m.Merchant, paylink.MaxMerchantVariances+1); paylink.AsError(err).Kind != paylink.KindInvalid {
			t.Errorf("a limit above the largest: got %v, want it refused", err)
		}
	})
}

// TestTheNewestRunsVariancesComeFirst: of two runs a microsecond apart
// whose time-ordered ids differ in 'Z' and 'a', the newer one's variance
// is the newest, on both engines: on PostgreSQL with a linguistic
// collation (the tests' clusters are en-US) the older came first, until
// migration 0039 made the run ids compare byte-wise.
func TestTheNewestRunsVariancesComeFirst(t *testing.T) {
	eachEngine(t, func(t *testing.T, dsn string) {
		env := apitest.Start(t, apitest.Options{DSN: dsn})
		m := env.Onboard()
		ref := purchase(t, env, m, "10.00", false)
		day := env.Clock.Now().UTC().Format(time.DateOnly)
		us := env.Clock.Now().UnixMicro()                                     // the id's last time digit is the microsecond's base62 digit
		env.Clock.Advance(time.Duration((35-us%62+62)%62) * time.Microsecond) // 'Z', then 'a'
		ctx := context.Background()
		var newer string
		for _, amount := range []int64{111, 222} {
			r, err := env.Service.Reconcile(ctx, "acquirer.csv", []paylink.AcquirerRecord{{Line: 2, Date: day, Reference: ref, Currency: "AUD", Amount: amount}})
			if err != nil {
				t.Fatal(err)
			}
			newer = r.ID
			env.Clock.Advance(time.Microsecond)
		}
		vs, err := env.Service.MerchantVariances(ctx, m.Merchant, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(vs) != 1 || vs[0].Run != newer {
			t.Errorf("the newest variance: got %v, want the newer run %s's", vs, newer)
		}
	})
}

// TestAVarianceReportedAgainIsListedOnce: a file reconciled again and
// again reports its variance each time; the balances page lists it once,
// from the newest run, saying how many runs reported it, where it listed
// each copy, and counts the copies past its 100 rows too (it cut to 100
// before collapsing: "reported by 100 runs", and a note of older rows).
func TestAVarianceReportedAgainIsListedOnce(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	addUser(t, env, m, "viewer@example.com", paylink.RoleViewer)
	ref := purchase(t, env, m, "10.00", false)
	day := env.Clock.Now().UTC().Format(time.DateOnly)
	const runs = paylink.DefaultMerchantVariances + 20
	for range runs {
		if _, err := env.Service.Reconcile(context.Background(), "acquirer.csv",
			[]paylink.AcquirerRecord{{Line: 2, Date: day, Reference: ref, Currency: "AUD", Amount: 999}}); err != nil {
			t.Fatal(err)
		}
		env.Clock.Advance(time.Minute)
	}
	p := signedIn(t, env, "viewer@example.com").get("/dashboard/balances")
	if rows := strings.Count(p.body, `<th scope="row">`+ref+`</th>`); rows != 1 || !strings.Contains(p.body, fmt.Sprintf("reported by %d runs", runs)) ||
		strings.Contains(p.body, "variances are shown") {
		t.Errorf("a variance reported by %d runs: %d rows, want one saying so, and no note of older rows", runs, rows)
	}
}

// TestBalancesVarianceByReferenceOnly: a variance is the merchant's only
// when its reference is a purchase reference of the merchant. A merchant
// whose own payment has another merchant's reference as its invoice
// number (refused now, but stored before that rule: written by hand
// here) does not see that merchant's variance.
func TestBalancesVarianceByReferenceOnly(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m, other := env.Onboard(), env.Onboard()
	addUser(t, env, m, "viewer@example.com", paylink.RoleViewer)
	theirs := purchase(t, env, other, "11.00", false)
	mine := purchase(t, env, m, "10.00", false)
	if _, err := env.WriterDB(t).Exec(`UPDATE transactions SET invoice_number = $1 WHERE reference = $2`, theirs, mine); err != nil {
		t.Fatal(err)
	}
	day := env.Clock.Now().UTC().Format(time.DateOnly)
	_, err := env.Service.Reconcile(context.Background(), "acquirer.csv", []paylink.AcquirerRecord{
		{Date: day, Reference: theirs, Type: paylink.RecordCapture, Currency: "AUD", Amount: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	b := signedIn(t, env, "viewer@example.com")
	// The balances page shows no invoice number: theirs on it is the variance.
	p := b.get("/dashboard/balances")
	if p.status != http.StatusOK || strings.Contains(p.body, theirs) {
		t.Errorf("got %d showing %v the variance of %s, another merchant's payment; want 200 without it", p.status, strings.Contains(p.body, theirs), theirs)
	}
}

// TestLinksListShowsState: the list shows each link's state as the
// hosted page decides it (PaymentLink.State at the Service's clock): an
// unpaid link past its expiry is expired, not unpaid. Paid links are
// shown paid by TestBrowserLinksDevelopersBalances.
func TestLinksListShowsState(t *testing.T) {
	eachEngine(t, func(t *testing.T, dsn string) {
		env := apitest.Start(t, apitest.Options{DSN: dsn})
		m := env.Onboard()
		addUser(t, env, m, "viewer@example.com", paylink.RoleViewer)
		ctx := context.Background()
		create := func(ref string, expires time.Duration) *paylink.PaymentLink {
			n := paylink.NewLink{Amount: 100, Currency: "AUD", MerchantReference: ref}
			if expires > 0 {
				n.ExpiresAt = env.Clock.Now().Add(expires)
			}
			l, _, err := env.Service.CreateLink(ctx, m.Merchant, n)
			if err != nil {
				t.Fatal(err)
			}
			return l
		}
		expiring, open, later := create("EXPIRING", time.Hour), create("OPEN", 0), create("LATER", 3*time.Hour)
		cancelled := create("CANCELLED", time.Hour)
		if _, _, err := env.Service.CancelLink(ctx, m.Merchant, cancelled.ID); err != nil {
			t.Fatal(err)
		}
		env.Clock.Advance(2 * time.Hour)

		b := signedIn(t, env, "viewer@example.com")
		list := b.get("/dashboard/links")
		if list.status != http.StatusOK {
			t.Fatalf("links page: got %d, want 200", list.status)
		}
		for _, tt := range []struct {
			link *paylink.PaymentLink
			want string
		}{{expiring, "expired"}, {open, "unpaid"}, {later, "unpaid"}, {cancelled, "cancelled"}} {
			t.Run(tt.link.MerchantReference, func(t *testing.T) {
				if got := rowState(t, list.body, tt.link.ID); got != tt.want {
					t.Errorf("state: got %q, want %q", got, tt.want)
				}
				if p := b.get("/dashboard/links/" + tt.link.ID); !strings.Contains(p.body, `<dd id="link-state">`+tt.want+`</dd>`) {
					t.Errorf("link page: got %s, want state %s", p.body, tt.want)
				}
			})
		}
	})
}

// rowState is the State cell of a link's row in the links list.
func rowState(t *testing.T, body, id string) string {
	t.Helper()
	m := regexp.MustCompile(`<a href="/dashboard/links/` + regexp.QuoteMeta(id) + `">[^<]*</a></th>\s*<td>[^<]*</td>\s*<td class="num">[^<]*</td>\s*<td>([^<(]*)`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no row for %s in %s", id, body)
	}
	return strings.TrimSpace(m[1])
}

// TestARollFromAStalePageIsRefused: two admins open the developers page;
// the first rolls the API key with no overlap for the old one; the
// second's roll, from a page that showed the key since replaced, is
// refused (409, nothing changed), where it made its own key current and
// cut the first roll's new key off at once, its overlap being 0.
func TestARollFromAStalePageIsRefused(t *testing.T) {
	env, m, one, two := twoAdmins(t)
	pageOne, pageTwo := one.get("/dashboard/developers"), two.get("/dashboard/developers")
	shown := regexp.MustCompile(`name="current_key" value="([^"]+)"`)
	roll := func(b *browser, p page) page {
		cur := shown.FindStringSubmatch(p.body)
		if cur == nil || cur[1] != m.APIKeyID() {
			t.Fatalf("the roll form names %v as the current key, want %s", cur, m.APIKeyID())
		}
		return b.post("/dashboard/developers/keys/roll", url.Values{"csrf": {p.csrf()}, "idempotency_key": {formKey(t, p)},
			"current_key": {cur[1]}, "overlap": {"0s"}})
	}
	first := roll(one, pageOne)
	newKey := regexp.MustCompile(`id="new-key" class="wide" readonly value="([^"]+)"`).FindStringSubmatch(first.body)
	if first.status != http.StatusOK || newKey == nil {
		t.Fatalf("the first roll: got %d without a new key", first.status)
	}
	second := roll(two, pageTwo)
	if second.status != http.StatusConflict || !strings.Contains(second.body, "was rolled meanwhile") || strings.Contains(second.body, `id="new-key"`) {
		t.Errorf("the roll from the stale page: got %d, want 409 saying the key was rolled meanwhile, and no new key", second.status)
	}
	if ks, err := env.Service.APIKeys(context.Background(), m.Merchant); err != nil || len(ks) != 2 {
		t.Errorf("keys after the refused roll: got %d, %v; want 2", len(ks), err)
	}
	m.Creds.APIKey = newKey[1]
	if r := env.Post("/v5/transaction_token", m, map[string]any{"company_token": m.Creds.CompanyToken}); r.Status != http.StatusOK {
		t.Errorf("the first roll's key after the refused roll: got %d %s, want it working", r.Status, r.Raw)
	}
}

// TestARotationFromAStalePageIsRefused: as TestARollFromAStalePageIsRefused
// for the webhook signing secret: the second admin's rotation, from a
// page that showed the secret since replaced, is refused, where it made
// its own secret current and dropped the one receivers verify with (only
// two secrets sign), whatever the overlaps.
func TestARotationFromAStalePageIsRefused(t *testing.T) {
	env, m, one, two := twoAdmins(t)
	pageOne, pageTwo := one.get("/dashboard/developers"), two.get("/dashboard/developers")
	shown := regexp.MustCompile(`name="current_secret" value="([0-9a-f]{16})"`)
	rotate := func(b *browser, p page) page {
		cur := shown.FindStringSubmatch(p.body)
		if cur == nil {
			t.Fatal("the rotation form names no current secret")
		}
		return b.post("/dashboard/developers/webhook-secret", url.Values{"csrf": {p.csrf()}, "idempotency_key": {formKey(t, p)},
			"current_secret": {cur[1]}, "overlap": {"24h0m0s"}})
	}
	if first := rotate(one, pageOne); first.status != http.StatusOK || !strings.Contains(first.body, `id="new-secret"`) {
		t.Fatalf("the first rotation: got %d without a new secret", first.status)
	}
	second := rotate(two, pageTwo)
	if second.status != http.StatusConflict || !strings.Contains(second.body, "was rotated meanwhile") || strings.Contains(second.body, `id="new-secret"`) {
		t.Errorf("the rotation from the stale page: got %d, want 409 saying the secret was rotated meanwhile, and no new secret", second.status)
	}
	if rows := staffAudit(t, env, m.ID, paylink.AuditWebhookSecretRotate); len(rows) != 1 {
		t.Errorf("rotations audited: got %d, want the first alone", len(rows))
	}
}

// twoAdmins is a merchant with two admins, each signed in in a browser of
// their own.
func twoAdmins(t *testing.T) (*apitest.Env, *apitest.Merchant, *browser, *browser) {
	t.Helper()
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	addUser(t, env, m, "one@example.com", paylink.RoleAdmin)
	addUser(t, env, m, "two@example.com", paylink.RoleAdmin)
	return env, m, signedIn(t, env, "one@example.com"), signedIn(t, env, "two@example.com")
}
