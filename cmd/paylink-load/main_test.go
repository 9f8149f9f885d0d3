package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/paylink/paylink/internal/apitest"
)

func TestLoadRunAgainstARealServer(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	var out bytes.Buffer
	err := run(context.Background(), []string{"--url", env.Server.URL, "--api-key", m.Creds.APIKey,
		"--company-token", m.Creds.CompanyToken, "--concurrency", "4", "--duration", "300ms"}, &out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "(0 errors)") || strings.Contains(out.String(), ": 0 approved") {
		t.Errorf("got report %q, want approved purchases and no errors", out.String())
	}
}

func TestFlagsAreChecked(t *testing.T) {
	for _, args := range [][]string{{}, {"--api-key", "k", "--company-token", "c", "--concurrency", "0"},
		{"--api-key", "k", "--company-token", "c", "--duration", "11m"}} {
		if err := run(context.Background(), args, &bytes.Buffer{}); err == nil {
			t.Errorf("args %v: got no error", args)
		}
	}
}
