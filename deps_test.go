package paylink_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependenciesPointInward enforces the layout: the domain imports only
// the standard library; stores never import the API or the pages; the
// API and the pages never import a store.
func TestDependenciesPointInward(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}:{{join .Imports " "}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const mod = "github.com/paylink/paylink"
	forbidden := map[string][]string{
		mod + "/internal/sqlstore":  {"/internal/api", "/internal/checkout", "/internal/acs", "/internal/webhook", "/internal/dashboard"},
		mod + "/internal/dashboard": {"/internal/sqlstore", "/internal/api", "/internal/checkout"},
		mod + "/internal/api":       {"/internal/sqlstore", "/internal/checkout", "/internal/webhook"},
		mod + "/internal/checkout":  {"/internal/sqlstore"},
		mod + "/internal/acs":       {"/internal/sqlstore"},
		mod + "/internal/webhook":   {"/internal/sqlstore", "/internal/api"},
		mod + "/client":             {"/internal/"},
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, ":")
		for _, imp := range strings.Fields(imports) {
			if pkg == mod && strings.Contains(strings.SplitN(imp, "/", 2)[0], ".") {
				t.Errorf("the domain package imports %s; it must use only the standard library", imp)
			}
			for _, bad := range forbidden[pkg] {
				if strings.HasPrefix(imp, mod+bad) {
					t.Errorf("%s imports %s; dependencies must point inward", pkg, imp)
				}
			}
		}
	}
}
