package paylink_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/paylink/paylink/internal/apitest"
)

// TestJobs: every maintenance job of the Service has a name of its own
// and a period, runs without error on a database with a payment, on
// both engines, and is documented in design.md's table of
// background work, where its name is what the logs and the job metrics
// say.
func TestJobs(t *testing.T) {
	design, err := os.ReadFile("docs/design.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, _ := strings.Cut(string(design), "## Background work")
	for _, dsn := range []string{"", pg.Database(t)} {
		env := apitest.Start(t, apitest.Options{DSN: dsn})
		m := env.Onboard()
		env.Post("/v5/purchase", m, env.CardPurchase(m, "4111111111111111", "10.00"))
		seen := map[string]bool{}
		for _, j := range env.Service.Jobs() {
			if seen[j.Name] || j.Every <= 0 || j.Run == nil {
				t.Errorf("job %q: a second of that name, or no period (%s) or no body", j.Name, j.Every)
			}
			seen[j.Name] = true
			if !strings.Contains(table, "`"+j.Name+"`") {
				t.Errorf("job %q is not in docs/design.md's Background work table", j.Name)
			}
			if err := j.Run(context.Background()); err != nil {
				t.Errorf("job %q on %q: %v", j.Name, dsn, err)
			}
		}
	}
}
