package webhook_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"go/parser"
	"go/token"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paylink/paylink/internal/apitest"
)

// The function between the snippet markers is printed verbatim in
// docs/webhooks.md; TestDocumentedSnippetIsTested keeps them identical.

// snippet-start
// verifyWebhook checks the Standard Webhooks signature of a paylink
// webhook. secret is the merchant's "whsec_..." signing secret.
func verifyWebhook(secret string, h http.Header, body []byte, now time.Time) error {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return err
	}
	id, ts := h.Get("webhook-id"), h.Get("webhook-timestamp")
	sent, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return errors.New("missing or bad webhook-timestamp")
	}
	if age := now.Sub(time.Unix(sent, 0)); age > 5*time.Minute || age < -5*time.Minute {
		return errors.New("webhook-timestamp is too far from now (replay?)")
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	want := base64.StdEncoding.EncodeToString(mac.Sum(nil))
	for _, sig := range strings.Fields(h.Get("webhook-signature")) {
		version, value, _ := strings.Cut(sig, ",")
		if version == "v1" && hmac.Equal([]byte(value), []byte(want)) {
			return nil
		}
	}
	return errors.New("no valid webhook signature")
}

// snippet-end

func TestDocumentedSnippetIsTested(t *testing.T) {
	src, err := os.ReadFile("sign_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(src), "// snippet-start\n")
	snippet, _, _ := strings.Cut(rest, "\n// snippet-end")
	docs, err := os.ReadFile("../../docs/webhooks.md")
	if err != nil {
		t.Fatal(err)
	}
	at := strings.Index(string(docs), snippet)
	if snippet == "" || at < 0 {
		t.Fatalf("got docs/webhooks.md without the verification snippet, want it verbatim:\n%s", snippet)
	}
	// The docs' code block holding it is the imports and the function,
	// nothing after it, and parses as Go: a merchant copies it whole.
	start := strings.LastIndex(string(docs[:at]), "```go\n") + len("```go\n")
	end := at + len(snippet) + strings.Index(string(docs[at+len(snippet):]), "```")
	block := string(docs[start:end])
	if tail := strings.TrimSpace(string(docs[at+len(snippet) : end])); tail != "" {
		t.Errorf("the docs' code block goes on after the function: %q", tail)
	}
	if _, err := parser.ParseFile(token.NewFileSet(), "webhooks.md", "package main\n\n"+block, 0); err != nil {
		t.Errorf("the docs' code block does not parse as Go: %v", err)
	}
}

func TestSignatureVerifiesAndRotates(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	rc := newReceiver(t, 200)
	m := onboard(env, rc.URL+"/hook", nil)
	oldSecret := m.Creds.WebhookSecret
	if !strings.HasPrefix(oldSecret, "whsec_") {
		t.Fatalf("got webhook secret %q, want whsec_...", oldSecret)
	}
	next := func() received {
		t.Helper()
		n := len(rc.requests())
		purchase(t, env, m, "4111111111111111", "10.00")
		env.WaitWebhooks()
		return rc.requests()[n]
	}
	check := func(name, secret string, r received, wantOK bool) {
		t.Helper()
		err := verifyWebhook(secret, r.Header, r.Body, env.Clock.Now())
		if (err == nil) != wantOK {
			t.Errorf("%s: got verify error %v, want ok=%v", name, err, wantOK)
		}
	}
	r := next()
	check("signed with the secret", oldSecret, r, true)
	check("tampered body", oldSecret, received{Header: r.Header, Body: append([]byte(" "), r.Body...)}, false)
	check("another merchant's secret", onboard(env, rc.URL, nil).Creds.WebhookSecret, r, false)
	if err := verifyWebhook(oldSecret, r.Header, r.Body, env.Clock.Now().Add(time.Hour)); err == nil {
		t.Error("replayed an hour later: got nil, want a timestamp error")
	}

	newSecret, err := env.Service.RotateWebhookSecret(context.Background(), m.ID, env.WebhookSecretVersion(m.ID), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	r = next()
	if got := len(strings.Fields(r.Header.Get("webhook-signature"))); got != 2 {
		t.Errorf("during overlap: got %d signatures, want 2", got)
	}
	check("overlap, old secret", oldSecret, r, true)
	check("overlap, new secret", newSecret, r, true)

	env.Clock.Advance(61 * time.Minute)
	r = next()
	check("after overlap, old secret", oldSecret, r, false)
	check("after overlap, new secret", newSecret, r, true)
}
