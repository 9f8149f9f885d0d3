package api_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
	"github.com/paylink/paylink/internal/pgtest"
)

// The audit log through HTTP: the API's authentication wrapper sets the
// actor (API key id, source IP, request id) that the Service records.

// withRequestID sends "req-flow" as the X-Request-Id of every request
// that has none, as a client or proxy would; the site's request-id
// middleware keeps an inbound id of sane form and puts it in the context.
func withRequestID(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Request-Id") == "" {
			r.Header.Set("X-Request-Id", "req-flow")
		}
		h.ServeHTTP(w, r)
	})
}

// auditedEnv is env's whole site served again behind withRequestID.
func auditedEnv(t *testing.T, dsn string) *apitest.Env {
	env := apitest.Start(t, apitest.Options{DSN: dsn})
	srv := httptest.NewServer(withRequestID(env.Server.Config.Handler))
	t.Cleanup(srv.Close)
	wrapped := *env
	wrapped.Server = srv
	return &wrapped
}

func auditRows(t *testing.T, env *apitest.Env) []*paylink.AuditEvent {
	t.Helper()
	rows, err := env.Service.AuditLog(context.Background(), paylink.AuditFilter{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func TestAuditOverHTTP(t *testing.T) {
	eachEngine(t, func(t *testing.T, dsn string) { testAuditOverHTTP(t, auditedEnv(t, dsn)) })
}

// eachEngine runs fn on SQLite ("") and on a throwaway PostgreSQL
// database, started for this test.
func eachEngine(t *testing.T, fn func(t *testing.T, dsn string)) {
	var pg pgtest.Shared
	pg.Start()
	defer pg.Stop()
	t.Run("sqlite", func(t *testing.T) { fn(t, "") })
	t.Run("postgres", func(t *testing.T) { fn(t, pg.Database(t)) })
}

func testAuditOverHTTP(t *testing.T, env *apitest.Env) {
	m := env.Onboard(whitelisted)
	presented := "pl_sk_PresentedButWrong" + strings.Repeat("Z", 17)
	failures := []struct {
		name, auth, requestID string
		status                int
		second                string // a second Authorization header, when set
	}{
		{"missing key", "", "req-missing", http.StatusUnauthorized, ""},
		{"unknown key", "Bearer " + presented, "req-unknown", http.StatusUnauthorized, ""},
		{"malformed key", "Bearer " + strings.TrimPrefix(presented, "pl_sk_"), "req-malformed", http.StatusUnauthorized, ""},
		{"two keys", "Bearer " + presented, "req-twice", http.StatusUnauthorized, "Bearer " + m.Creds.APIKey},
	}
	for _, f := range failures {
		req, _ := http.NewRequest(http.MethodPost, env.Server.URL+"/v5/transaction_token", strings.NewReader(`{}`))
		req.Header.Set("Authorization", f.auth)
		if f.second != "" {
			req.Header.Add("Authorization", f.second)
		}
		req.Header.Set("X-Request-Id", f.requestID)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != f.status {
			t.Fatalf("%s: got %d, want %d", f.name, res.StatusCode, f.status)
		}
	}
	if r := env.Post("/v5/transaction_token", m, map[string]any{"company_token": "not" + m.Creds.CompanyToken[3:]}); r.Status != http.StatusForbidden {
		t.Fatalf("wrong company token: got %d %s, want 403", r.Status, r.Raw)
	}
	ref := hold(t, env, m, "20.00")
	if r := capture(env, m, ref, "20.00"); r.Status != http.StatusOK {
		t.Fatalf("capture: got %d %s", r.Status, r.Raw)
	}
	if r := refund(env, m, ref, "5.00"); r.Status != http.StatusOK {
		t.Fatalf("refund: got %d %s", r.Status, r.Raw)
	}

	rows := auditRows(t, env)
	t.Run("authentication failures carry address and request id", func(t *testing.T) {
		denied := map[string]*paylink.AuditEvent{}
		for _, e := range rows {
			if e.Outcome == paylink.OutcomeDenied {
				denied[e.RequestID] = e
			}
		}
		for _, f := range failures {
			e := denied[f.requestID]
			if e == nil {
				t.Errorf("%s: no denied row with request id %s", f.name, f.requestID)
				continue
			}
			got := paylink.Actor{Kind: e.ActorKind, ID: e.ActorID, IP: e.SourceIP, RequestID: e.RequestID}
			want := paylink.Actor{Kind: paylink.ActorAPIKey, IP: "127.0.0.1", RequestID: f.requestID}
			if got != want || e.Action != paylink.AuditAuthenticate || e.MerchantID != "" {
				t.Errorf("%s: got %+v by %+v, want %s by %+v for no merchant", f.name, *e, got, paylink.AuditAuthenticate, want)
			}
		}
		e := denied["req-flow"]
		if e == nil || e.Action != paylink.AuditCompanyToken || e.ActorID != m.APIKeyID() || e.MerchantID != m.ID {
			t.Errorf("company token mismatch: got %+v, want %s by %s", e, paylink.AuditCompanyToken, m.APIKeyID())
		}
	})
	t.Run("changes name the API key, address and request id", func(t *testing.T) {
		var actions []string
		for _, e := range rows {
			if e.Outcome != paylink.OutcomeSuccess || e.ActorKind != paylink.ActorAPIKey {
				continue
			}
			actions = append(actions, e.Action)
			if e.ActorID != m.APIKeyID() || e.SourceIP != "127.0.0.1" || e.RequestID != "req-flow" {
				t.Errorf("%s: got actor %s %s %s, want %s 127.0.0.1 req-flow", e.Action, e.ActorID, e.SourceIP, e.RequestID, m.APIKeyID())
			}
		}
		if got, want := strings.Join(actions, " "), paylink.AuditCapture+" "+paylink.AuditRefund; got != want {
			t.Errorf("got actions %q, want %q", got, want)
		}
	})
	t.Run("no key, token, card number or CVC is stored", func(t *testing.T) {
		secrets := []string{presented, strings.TrimPrefix(presented, "pl_sk_"), m.Creds.APIKey, m.Creds.CompanyToken,
			m.Creds.CompanyToken[3:], m.Creds.WebhookSecret, visa, visa[6:]}
		for _, e := range rows {
			for _, v := range []string{e.MerchantID, e.ActorID, e.SourceIP, e.RequestID, e.Action, e.ObjectType, e.ObjectID, e.Detail} {
				for _, s := range secrets {
					if strings.Contains(v, s) {
						t.Errorf("row %d (%s) holds a secret in %q", e.ID, e.Action, v)
					}
				}
				if v == "123" { // apitest's CVC
					t.Errorf("row %d (%s) holds the CVC", e.ID, e.Action)
				}
			}
		}
	})
}
