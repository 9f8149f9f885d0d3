package httpx_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/httpx"
)

// serve runs one request through the middleware around h and returns the
// response and the log lines.
func serve(t *testing.T, h http.HandlerFunc, req *http.Request) (*httptest.ResponseRecorder, []map[string]any) {
	t.Helper()
	var logs bytes.Buffer
	log := slog.New(httpx.LogHandler{Handler: slog.NewJSONHandler(&logs, nil)})
	mux := http.NewServeMux()
	mux.Handle("POST /things/{id}", h)
	rec := httptest.NewRecorder()
	httpx.Wrap(mux, httpx.Options{Logger: log}).ServeHTTP(rec, req)
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		lines = append(lines, m)
	}
	return rec, lines
}

var generated = regexp.MustCompile(`^[0-9a-f]{32}$`)

func TestRequestIDIsKeptOrMade(t *testing.T) {
	tests := []struct {
		name, inbound string
		kept          bool
	}{
		{"sane id kept", "req-42_a.B", true},
		{"64 characters kept", strings.Repeat("a", 64), true},
		{"65 characters", strings.Repeat("a", 65), false},
		{"a company, transaction or card token", strings.Repeat("Ab3", paylink.TokenLength/3+1)[:paylink.TokenLength], false},
		{"none", "", false},
		{"129 characters", strings.Repeat("a", 129), false},
		{"space", "req 42", false},
		{"log injection", "x\",\"admin\":\"yes", false},
		{"non-ASCII", "réq", false},
		{"a card number", "4000000000000119", false},
		{"a card number with dashes", "req-4111-1111-1111-1111", false},
		{"a card number with dots", "4111.1111.1111.1111", false},
		{"a card number with underscores", "5555_5555_5555_4444", false},
		{"a card number in two dotted halves", "41111111.11111111", false},
		{"an API key", "pl_sk_0000000000000000000000000000000000000000", false},
		{"a webhook secret", "whsec_abc", false},
		{"dotted digits that are no card number", "2026.11.27.1234", true},
		{"a long number that is not a card's", "1234567890123456", true},
		{"a card number after letters", "order4111111111111111", false},
		{"a card number before letters", "4111111111111111x", false},
		{"a grouped card number after letters", "order4111-1111-1111-1111", false},
		{"letters around a long number that is not a card's", "order1234567890123456x", true},
		{"a card number with a digit after it", "41111111111111110", false},
		{"a card number with a digit before it", "04111111111111111", false},
		{"a card number inside letters and digits", "ref41111111111111110", false},
		{"a Mastercard number with a digit after it", "55555555555544447", false},
		{"a grouped card number with a digit after it", "4111-1111-1111-11110", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var inHandler string
			h := func(w http.ResponseWriter, r *http.Request) {
				inHandler = paylink.RequestIDFrom(r.Context())
				slog.New(httpx.LogHandler{Handler: slog.DiscardHandler}).InfoContext(r.Context(), "x")
			}
			req := httptest.NewRequest(http.MethodPost, "/things/secret-ref", nil)
			if tt.inbound != "" {
				req.Header.Set(httpx.RequestIDHeader, tt.inbound)
			}
			rec, lines := serve(t, h, req)
			got := rec.Header().Get(httpx.RequestIDHeader)
			if tt.kept && got != tt.inbound {
				t.Errorf("got id %q, want the inbound %q kept", got, tt.inbound)
			}
			if !tt.kept && !generated.MatchString(got) {
				t.Errorf("got id %q, want a new random one (32 hex digits)", got)
			}
			if inHandler != got {
				t.Errorf("context id: got %q, want %q (the response's)", inHandler, got)
			}
			if len(lines) != 1 || lines[0]["request_id"] != got || lines[0]["route"] != "POST /things/{id}" {
				t.Errorf("access log: got %v, want one line with request_id %q and the route pattern, not the path", lines, got)
			}
		})
	}
}

// TestARedirectedPathIsNotLoggedAsARoute: a request the mux answers with
// a redirect (a path with "//" or ".." to its clean form, a subtree's
// path without its slash) is logged as route "redirect", not as the route
// it was sent on to, which did not run; a request whose handler ran, an
// escaped "%2F%2F" or "%2E%2E" in its path included, is logged under its
// route.
func TestARedirectedPathIsNotLoggedAsARoute(t *testing.T) {
	ran := ""
	mux := http.NewServeMux()
	mux.HandleFunc("POST /things/{id}", func(http.ResponseWriter, *http.Request) { ran = "thing" })
	mux.HandleFunc("/sub/", func(http.ResponseWriter, *http.Request) { ran = "sub" })
	for _, tc := range []struct{ method, path, route, ran string }{
		{http.MethodPost, "/things//x", "redirect", ""},
		{http.MethodPost, "/other/../things/x", "redirect", ""},
		{http.MethodGet, "/sub", "redirect", ""},
		{http.MethodPost, "/things/a%2F%2Fb", "POST /things/{id}", "thing"},
		{http.MethodGet, "/sub/%2E%2E/x", "/sub/", "sub"},
		{http.MethodPost, "/things/x", "POST /things/{id}", "thing"},
	} {
		ran = ""
		var logs bytes.Buffer
		log := slog.New(httpx.LogHandler{Handler: slog.NewJSONHandler(&logs, nil)})
		httpx.Wrap(mux, httpx.Options{Logger: log}).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(tc.method, tc.path, nil))
		if want := `"route":"` + tc.route + `"`; !strings.Contains(logs.String(), want) || ran != tc.ran {
			t.Errorf("%s %s: handler %q ran, log %s; want handler %q and %s", tc.method, tc.path, ran, logs.String(), tc.ran, want)
		}
	}
}

// TestHandlersRedirectWithSeeOther guards answeredRoute's rule: no
// paylink handler answers 301, 302, 307 or 308, so those are the mux's.
func TestHandlersRedirectWithSeeOther(t *testing.T) {
	other := regexp.MustCompile(`Status(MovedPermanently|Found|TemporaryRedirect|PermanentRedirect)\b`)
	err := filepath.WalkDir("../..", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") ||
			filepath.ToSlash(path) == "../../internal/httpx/httpx.go" { // the rule itself
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if m := other.Find(src); m != nil {
			t.Errorf("%s answers %s: answeredRoute would log it as the mux's redirect", path, m)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestEveryLineOfARequestNamesIt(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(httpx.LogHandler{Handler: slog.NewJSONHandler(&logs, nil)}).With("component", "test")
	mux := http.NewServeMux()
	mux.HandleFunc("GET /x", func(w http.ResponseWriter, r *http.Request) {
		log.WarnContext(r.Context(), "inside the handler")
	})
	req := httptest.NewRequest(http.MethodGet, "/x", nil)
	req.Header.Set(httpx.RequestIDHeader, "trace-7")
	httpx.Wrap(mux, httpx.Options{Logger: log}).ServeHTTP(httptest.NewRecorder(), req)
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("got %d log lines, want 2: %s", len(lines), logs.String())
	}
	for _, l := range lines {
		if !strings.Contains(l, `"request_id":"trace-7"`) || !strings.Contains(l, `"component":"test"`) {
			t.Errorf("got line %s, want request_id trace-7 and the logger's own attributes", l)
		}
	}
}

// TestPanicIsA500WithTheErrorBody: a panic is a 500 with the API's error
// body and the shared headers only: what the handler had set before it
// (a cookie, a cache lifetime) is dropped.
func TestPanicIsA500WithTheErrorBody(t *testing.T) {
	rec, lines := serve(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		w.Header().Set("Set-Cookie", "session=1")
		panic("boom")
	}, httptest.NewRequest(http.MethodPost, "/things/1", nil))
	if rec.Code != http.StatusInternalServerError || !strings.Contains(rec.Body.String(), `"response_code":"internal_error"`) {
		t.Errorf("got %d %s, want 500 internal_error", rec.Code, rec.Body)
	}
	if h := rec.Header(); h.Get("Cache-Control") != "no-store" || h.Get("Set-Cookie") != "" || h.Get(httpx.RequestIDHeader) == "" {
		t.Errorf("headers of the 500: got %v, want no-store, no cookie, a request id", h)
	}
	if len(lines) != 2 || lines[0]["msg"] != "panic" || lines[1]["status"] != float64(500) {
		t.Errorf("got log %v, want the panic and then the access line with status 500", lines)
	}
}

// TestAbortHandlerPanicIsNotAnswered: a handler's panic with
// http.ErrAbortHandler reaches net/http, which drops the connection
// without an answer, instead of becoming a logged 500.
func TestAbortHandlerPanicIsNotAnswered(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /things/{id}", func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) })
	rec := httptest.NewRecorder()
	defer func() {
		if v := recover(); v != http.ErrAbortHandler || rec.Code != http.StatusOK || rec.Body.Len() != 0 {
			t.Errorf("got panic %v and %d %q, want ErrAbortHandler passed on and nothing written", v, rec.Code, rec.Body)
		}
	}()
	httpx.Wrap(mux, httpx.Options{Logger: slog.New(slog.DiscardHandler)}).ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/things/1", nil))
}

func TestSharedHeadersAndBodyCap(t *testing.T) {
	var readErr error
	h := func(w http.ResponseWriter, r *http.Request) {
		_, readErr = new(bytes.Buffer).ReadFrom(r.Body)
		w.Header().Set("Cache-Control", "public, max-age=60") // a handler may override a default
	}
	rec, _ := serve(t, h, httptest.NewRequest(http.MethodPost, "/things/1", bytes.NewReader(make([]byte, httpx.MaxBodyBytes+1))))
	var tooBig *http.MaxBytesError
	if !errors.As(readErr, &tooBig) {
		t.Errorf("reading a body over the cap: got %v, want *http.MaxBytesError", readErr)
	}
	for name, want := range map[string]string{"X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer", "Cache-Control": "public, max-age=60"} {
		if got := rec.Header().Get(name); got != want {
			t.Errorf("%s: got %q, want %q", name, got, want)
		}
	}
}

// Every surface answers a Service error with one status per kind; an
// outage is 503 everywhere (the dashboard once answered it 500).
func TestStatus(t *testing.T) {
	tests := map[paylink.Kind]int{
		paylink.KindInvalid: 400, paylink.KindUnauthorized: 401, paylink.KindForbidden: 403, paylink.KindNotFound: 404,
		paylink.KindConflict: 409, paylink.KindTooLarge: 413, paylink.KindRateLimited: 429,
		paylink.KindUnavailable: 503, paylink.KindInternal: 500,
	}
	for kind, want := range tests {
		if got := httpx.Status(kind); got != want {
			t.Errorf("Status(%v): got %d, want %d", kind, got, want)
		}
	}
}

// TestAddressThatIsNotTextIsRefused: a path or query that does not decode
// to UTF-8 is a 400 before any route runs (PostgreSQL answered such a
// reference with an error, a 500), with the API's error body under /v5/
// and a page that says what to do elsewhere; text in any script passes.
func TestAddressThatIsNotTextIsRefused(t *testing.T) {
	ran := false
	h := func(http.ResponseWriter, *http.Request) { ran = true }
	for _, target := range []string{"/things/%ff", "/things/1?q=%ff", "/things/1?%c3=x", "/v5/purchase/%ed%a0%80", "/things/a%00b", "/things/1?q=%00"} {
		ran = false
		rec, lines := serve(t, h, httptest.NewRequest(http.MethodPost, target, nil))
		if rec.Code != http.StatusBadRequest || ran {
			t.Errorf("%s: got %d (handler ran: %v), want 400 before the handler", target, rec.Code, ran)
		}
		api := strings.HasPrefix(target, "/v5/")
		if got := strings.Contains(rec.Body.String(), `"error_code":"invalid_request"`); got != api {
			t.Errorf("%s: got body %q, want the API's error body only under /v5/", target, rec.Body)
		}
		page := strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") &&
			strings.Contains(rec.Body.String(), "<h1>This address cannot be opened</h1>")
		if page == api {
			t.Errorf("%s: got %s %q, want a page outside /v5/ only", target, rec.Header().Get("Content-Type"), rec.Body)
		}
		if len(lines) != 1 || lines[0]["status"] != float64(400) {
			t.Errorf("%s: got log %v, want the access line with status 400", target, lines)
		}
	}
	rec, _ := serve(t, h, httptest.NewRequest(http.MethodPost, "/things/%C3%A9t%C3%A9?q=%E5%8C%97%F0%9F%98%80", nil))
	if rec.Code != http.StatusOK || !ran {
		t.Errorf("UTF-8 path and query: got %d (handler ran: %v), want 200", rec.Code, ran)
	}
}

// TestReadForm: a posted form is read whole, URL-encoded or multipart,
// and refused when it is too large, cannot be parsed or is not UTF-8.
func TestReadForm(t *testing.T) {
	multipart := func(value string) *http.Request {
		body := "--b\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\n" + value + "\r\n--b--\r\n"
		r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
		r.Header.Set("Content-Type", "multipart/form-data; boundary=b")
		return r
	}
	encoded := func(body string) *http.Request {
		r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		return r
	}
	limited := encoded("name=" + strings.Repeat("a", 100))
	limited.Body = http.MaxBytesReader(httptest.NewRecorder(), limited.Body, 50)
	read := func(name string, r *http.Request) {
		if err := httpx.ReadForm(r); err != nil || r.PostFormValue("name") != "Zoë" {
			t.Errorf("%s: got %v and name %q, want the form read", name, err, r.PostFormValue("name"))
		}
	}
	read("encoded", encoded("name=Zo%C3%AB"))
	read("multipart", multipart("Zoë"))
	for _, tt := range []struct {
		name string
		r    *http.Request
		want paylink.Kind
	}{
		{"encoded, not UTF-8", encoded("name=Zo%FF"), paylink.KindInvalid},
		{"encoded, a NUL", encoded("name=Zo%00"), paylink.KindInvalid},
		{"multipart, not UTF-8", multipart("Zo\xff"), paylink.KindInvalid},
		{"not UTF-8 in the query", httptest.NewRequest(http.MethodPost, "/?name=%FF", nil), paylink.KindInvalid},
		{"malformed", encoded("name=%zz"), paylink.KindInvalid},
		{"over the caller's bound", limited, paylink.KindTooLarge},
	} {
		err := httpx.ReadForm(tt.r)
		if got := paylink.AsError(err).Kind; err == nil || got != tt.want {
			t.Errorf("%s: got %v (kind %v), want kind %v", tt.name, err, got, tt.want)
		}
	}
}

// TestClientGone: only a cancellation of a request whose client went
// away is the client's doing.
func TestClientGone(t *testing.T) {
	gone, hangUp := context.WithCancel(context.Background())
	hangUp()
	canceled := fmt.Errorf("commit: %w", context.Canceled)
	live := httptest.NewRequest("POST", "/v5/purchase", nil)
	left := live.WithContext(gone)
	for _, c := range []struct {
		name string
		r    *http.Request
		err  error
		want bool
	}{
		{"client gone, its request cancelled", left, canceled, true},
		{"client gone, another error", left, errors.New("disk full"), false},
		{"client gone, an outage met while it waited", left, fmt.Errorf("commit: %w", paylink.ErrUnavailable), true},
		{"client there, an outage", live, fmt.Errorf("commit: %w", paylink.ErrUnavailable), false},
		{"client there, a cancellation of our own", live, canceled, false},
	} {
		if got := httpx.ClientGone(c.r, c.err); got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

// TestSetRetryAfter: every 503, whatever its code, and the 409 of a key
// still in progress carry Retry-After; no other answer does.
func TestSetRetryAfter(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  error
		want bool
	}{
		{"database", fmt.Errorf("commit: %w", paylink.ErrUnavailable), true},
		{"acquirer", &paylink.Error{Kind: paylink.KindUnavailable, Code: paylink.CodeProcessorUnavailable}, true},
		{"key in progress", fmt.Errorf("%w", paylink.ErrKeyInProgress), true},
		{"conflict", &paylink.Error{Kind: paylink.KindConflict, Code: paylink.CodeHoldReleased}, false},
		{"internal", errors.New("bug"), false},
	} {
		w := httptest.NewRecorder()
		httpx.SetRetryAfter(w, tt.err)
		if got := w.Header().Get("Retry-After"); (got != "") != tt.want {
			t.Errorf("%s: Retry-After %q, want set %v", tt.name, got, tt.want)
		}
	}
}
