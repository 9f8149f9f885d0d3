package paylink

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestAsErrorMapsAnUnreachableDatabaseTo503(t *testing.T) {
	down := fmt.Errorf("%w: dial tcp: connection refused", ErrUnavailable)
	tests := []struct {
		name     string
		err      error
		wantKind Kind
		wantCode string
	}{
		{"wrapped as internal by the Service", Internal("record authorisation", down), KindUnavailable, CodeServiceUnavailable},
		{"returned as is", fmt.Errorf("count due webhooks: %w", down), KindUnavailable, CodeServiceUnavailable},
		{"a real bug", Internal("save", errors.New("not a transition")), KindInternal, CodeInternal},
		{"a client error keeps its kind", &Error{Kind: KindConflict, Code: CodeInvalidState, Err: down}, KindConflict, CodeInvalidState},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := AsError(tt.err)
			if e.Kind != tt.wantKind || e.Code != tt.wantCode {
				t.Errorf("got %v %q, want %v %q", e.Kind, e.Code, tt.wantKind, tt.wantCode)
			}
		})
	}
}

// TestServiceErrorsKeepUnavailability: a store error inside one of our
// own errors (fn returned Internal, the store marked it unavailable) is
// still a 503 after asServiceError unwraps it.
func TestServiceErrorsKeepUnavailability(t *testing.T) {
	inner := Internal("consume transaction token", errors.New("read tcp: connection reset by peer"))
	tests := []struct {
		name string
		err  error
		want Kind
	}{
		{"marked unavailable by the store", fmt.Errorf("%w: %w", ErrUnavailable, inner), KindUnavailable},
		{"not marked", inner, KindInternal},
		{"a client error", Errorf(KindConflict, CodeTransactionTokenUsed, "used"), KindConflict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := AsError(asServiceError("purchase", tt.err)).Kind; got != tt.want {
				t.Errorf("got kind %v, want %v", got, tt.want)
			}
		})
	}
}

// TestEveryCodeIsDocumented: every response code the package declares
// (a Code... constant) is in docs/errors.md, which the README names as
// the list of them.
func TestEveryCodeIsDocumented(t *testing.T) {
	doc, err := os.ReadFile("docs/errors.md")
	if err != nil {
		t.Fatal(err)
	}
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					lit, ok := valueAt(vs, i).(*ast.BasicLit)
					if !strings.HasPrefix(name.Name, "Code") || !ok || lit.Kind != token.STRING {
						continue
					}
					seen++
					if code, _ := strconv.Unquote(lit.Value); !strings.Contains(string(doc), "`"+code+"`") {
						t.Errorf("%s (%q) is not in docs/errors.md", name.Name, code)
					}
				}
			}
		}
	}
	if seen < 30 {
		t.Errorf("found %d codes, want the package's (more than 30): the test reads the wrong files", seen)
	}
}

// valueAt is the i-th value of a constant spec, nil when it has none.
func valueAt(vs *ast.ValueSpec, i int) ast.Expr {
	if i < len(vs.Values) {
		return vs.Values[i]
	}
	return nil
}

// TestFieldErrorsMessageNamesEveryField: the message alone (what the
// command line prints) names every field with its problem, in order.
func TestFieldErrorsMessageNamesEveryField(t *testing.T) {
	tests := []struct {
		name   string
		fields FieldErrors
		want   string
	}{
		{"one", FieldErrors{"name": "is required"}, "name: is required"},
		{"two", FieldErrors{"trading_name": "is required", "name": "is required"}, "name: is required; trading_name: is required"},
		{"three", FieldErrors{"c": "z", "a": "x", "b": "y"}, "a: x; b: y; c: z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var e *Error
			if !errors.As(tt.fields.Err(), &e) {
				t.Fatalf("got %v, want an *Error", tt.fields.Err())
			}
			if e.Message != tt.want {
				t.Errorf("got message %q, want %q", e.Message, tt.want)
			}
		})
	}
}
