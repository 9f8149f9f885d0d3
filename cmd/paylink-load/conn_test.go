package main

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/paylink/paylink/internal/apitest"
)

// capture sends req (without its final blank line) with Connection:
// close and returns the server's raw answer.
func capture(t *testing.T, addr, req string) []byte {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestReadResponseOnPaylinksAnswers parses what paylink really sends
// (Content-Length JSON and hosted page, the OpenAPI description sent
// chunked, errors) and wants what
// net/http's own parser reads from the same bytes, one answer after
// another on one stream, as on a keep-alive connection.
func TestReadResponseOnPaylinksAnswers(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	addr := strings.TrimPrefix(env.Server.URL, "http://")
	q := newRequests(addr, m.Creds.APIKey, m.Creds.CompanyToken)
	page, err := (&session{paylink: []target{{addr: addr, q: q}}}).createLink()
	if err != nil {
		t.Fatal(err)
	}
	closing := func(req []byte) string {
		head, body, _ := strings.Cut(string(req), "\r\n\r\n")
		return head + "\r\nConnection: close\r\n\r\n" + body
	}
	requests := map[string]string{
		"token":     closing(q.token()),
		"page":      closing(q.get(nil, page, nil)),
		"not found": closing(q.status(nil, []byte("pr_nope"))),
		"readyz":    "GET /readyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
		"openapi":   "GET /v5/openapi.json HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
		"no key":    "GET /v5/purchase/x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
	}
	var stream []byte
	var want []*http.Response
	var wantBodies [][]byte
	chunked := false
	for _, name := range slices.Sorted(maps.Keys(requests)) {
		raw := capture(t, addr, requests[name])
		stream = append(stream, raw...)
		r, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), nil)
		if err != nil {
			t.Fatalf("%s: net/http cannot read %q: %v", name, raw, err)
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			t.Fatal(err)
		}
		chunked = chunked || slices.Contains(r.TransferEncoding, "chunked")
		want, wantBodies = append(want, r), append(wantBodies, body)
	}
	if !chunked {
		t.Fatal("no answer was chunked: the chunked path is not exercised")
	}
	br := bufio.NewReader(bytes.NewReader(stream))
	for i, w := range want {
		got, err := readResponse(br, nil)
		if err != nil {
			t.Fatalf("answer %d: %v", i, err)
		}
		if got.status != w.StatusCode || !bytes.Equal(got.body, wantBodies[i]) || !got.close {
			t.Errorf("answer %d: got %d, close %v, body %q; want %d, close, body %q", i, got.status, got.close, got.body, w.StatusCode, wantBodies[i])
		}
	}
	if _, err := readResponse(br, nil); !errors.Is(err, io.EOF) {
		t.Errorf("after the last answer: got %v, want EOF (every byte read exactly once)", err)
	}
}

func TestReadResponseEdgeCases(t *testing.T) {
	for _, tc := range []struct {
		name, raw string
		status    int
		body      string
		close     bool
		wantErr   bool
	}{
		{name: "content length", raw: "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}", status: 200, body: "{}"},
		{name: "chunk extension and trailer", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n2\r\nde\r\n0\r\nX-T: 1\r\n\r\n",
			status: 200, body: "abcde"},
		{name: "HTTP/1.0 closes", raw: "HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx", status: 200, body: "x", close: true},
		{name: "connection close", raw: "HTTP/1.1 503 Busy\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", status: 503, close: true},
		{name: "204 has no body", raw: "HTTP/1.1 204 No Content\r\n\r\n", status: 204},
		{name: "no length", raw: "HTTP/1.1 200 OK\r\n\r\nbody until close", wantErr: true},
		{name: "bad status line", raw: "HTTP/2 200\r\n\r\n", wantErr: true},
		{name: "bad length", raw: "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", wantErr: true},
		{name: "short body", raw: "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", wantErr: true},
		{name: "bad chunk", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", wantErr: true},
		{name: "header without colon", raw: "HTTP/1.1 200 OK\r\nnonsense\r\n\r\n", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readResponse(bufio.NewReader(strings.NewReader(tc.raw)), nil)
			if tc.wantErr {
				if err == nil {
					t.Errorf("got %+v, want an error", got)
				}
				return
			}
			if err != nil || got.status != tc.status || string(got.body) != tc.body || got.close != tc.close {
				t.Errorf("got %d %q close %v (%v), want %d %q close %v", got.status, got.body, got.close, err, tc.status, tc.body, tc.close)
			}
		})
	}
}

func TestField(t *testing.T) {
	body := []byte(`{"purchase":{"purchase_reference":"pr_1","status":"APPROVED"},"transaction_token":"abc"}`)
	for name, want := range map[string]string{"purchase_reference": "pr_1", "transaction_token": "abc", "status": "APPROVED", "missing": ""} {
		if got := field(body, name); string(got) != want {
			t.Errorf("field %s: got %q, want %q", name, got, want)
		}
	}
}
