package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/pgtest"
)

// binary is the paylink binary built once for the package's tests.
var binary string

// pg is the package's throwaway PostgreSQL.
var pg pgtest.Shared

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "paylink-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "paylink")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build paylink: %v\n%s", err, out)
		os.Exit(1)
	}
	pg.Start()
	code := m.Run()
	pg.Stop()
	os.RemoveAll(dir)
	os.Exit(code)
}

// creds is the JSON printed by merchant create --json.
type creds struct {
	MID          string `json:"mid"`
	APIKey       string `json:"api_key"`
	CompanyToken string `json:"company_token"`
}

func createMerchant(t *testing.T, db string, extra ...string) creds {
	t.Helper()
	args := append([]string{"merchant", "create", "--db", db, "--name", "E2E Pty Ltd", "--trading-name", "E2E Shop", "--json"}, extra...)
	out, err := exec.Command(binary, args...).Output()
	if err != nil {
		t.Fatalf("merchant create: %v", err)
	}
	var c creds
	if err := json.Unmarshal(out, &c); err != nil || c.MID == "" || c.APIKey == "" || len(c.CompanyToken) != 128 {
		t.Fatalf("merchant create printed %q (%v), want mid, api_key and a 128-character company_token", out, err)
	}
	return c
}

// server is a running `paylink serve` process.
type server struct {
	t    *testing.T
	cmd  *exec.Cmd
	url  string
	logs *bytes.Buffer
	mu   *sync.Mutex
}

// startServe runs serve on db with a free port and waits until it listens.
func startServe(t *testing.T, db string, extra ...string) *server {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"serve", "--db", db, "--addr", "127.0.0.1:0"}, extra...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &server{t: t, cmd: cmd, logs: &bytes.Buffer{}, mu: &sync.Mutex{}}
	addr := make(chan string, 1)
	go s.readLogs(stderr, addr)
	select {
	case a := <-addr:
		s.url = "http://" + a
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("serve did not start; log:\n%s", s.logText())
	}
	t.Cleanup(func() { s.kill() })
	return s
}

func (s *server) readLogs(r io.Reader, addr chan<- string) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		s.mu.Lock()
		s.logs.WriteString(line + "\n")
		s.mu.Unlock()
		var entry struct{ Msg, Addr string }
		if json.Unmarshal([]byte(line), &entry) == nil && entry.Msg == "paylink listening" {
			addr <- entry.Addr
		}
	}
}

func (s *server) logText() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logs.String()
}

// waitLog waits until the server has logged a line containing msg,
// failing after a minute.
func (s *server) waitLog(t *testing.T, msg string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(s.logText(), msg) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in the log after a minute:\n%s", msg, s.logText())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (s *server) kill() {
	if s.cmd.ProcessState == nil {
		s.cmd.Process.Signal(syscall.SIGKILL)
		s.cmd.Wait()
	}
}

// post sends a JSON request with the API key and decodes the answer.
func (s *server) post(key, path string, body any) (int, map[string]any) {
	s.t.Helper()
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, s.url+path, bytes.NewReader(raw))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatalf("POST %s: %v", path, err)
	}
	defer res.Body.Close()
	var out map[string]any
	json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out
}

func get(m map[string]any, path string) any {
	var cur any = m
	for _, p := range strings.Split(path, ".") {
		obj, _ := cur.(map[string]any)
		cur = obj[p]
	}
	return cur
}

func (s *server) token(c creds) string {
	s.t.Helper()
	code, out := s.post(c.APIKey, "/v5/transaction_token", map[string]any{"company_token": c.CompanyToken})
	if code != 200 {
		s.t.Fatalf("transaction token: %d %v", code, out)
	}
	return out["transaction_token"].(string)
}

func (s *server) purchase(c creds, card map[string]any, amount string, flags map[string]any) map[string]any {
	s.t.Helper()
	p := map[string]any{"amount": amount, "currency": "AUD"}
	for k, v := range flags {
		p[k] = v
	}
	code, out := s.post(c.APIKey, "/v5/purchase", map[string]any{
		"token":    map[string]any{"company_token": c.CompanyToken, "transaction_token": s.token(c)},
		"customer": map[string]any{"ip_address": "198.51.100.4", "timezone": "Australia/Perth", "store_card_permission": flags["store"]},
		"card":     card, "purchase": p,
	})
	if code != 200 {
		s.t.Fatalf("purchase: %d %v", code, out)
	}
	return out
}

// testCard is a card's details with a security code of its brand's
// length: 4242 on American Express, 424 on the others.
func testCard(number string) map[string]any {
	cvc := "424"
	if paylink.BrandOf(number) == paylink.BrandAmex {
		cvc = "4242"
	}
	return map[string]any{"number": number, "expiry_month": "09", "expiry_year": fmt.Sprint(time.Now().Year()%100 + 2), "cvc": cvc, "holder_name": "E2E Tester"}
}

func TestEndToEnd(t *testing.T) {
	db := filepath.Join(t.TempDir(), "e2e.db")
	c := createMerchant(t, db, "--surcharge-credit", "1.5")
	s := startServe(t, db)
	for path, want := range map[string]int{"/healthz": 200, "/readyz": 200} {
		res, err := http.Get(s.url + path)
		if err != nil || res.StatusCode != want {
			t.Fatalf("GET %s: %v %v", path, res, err)
		}
		res.Body.Close()
	}
	outcomes := map[string]string{"4111111111111111": "APPROVED", "4000000000000002": "DECLINED", "4000000000000119": "FAILED"}
	for card, want := range outcomes {
		out := s.purchase(c, testCard(card), "20.00", map[string]any{"invoice_number": "E2E-" + card[len(card)-4:]})
		if got := get(out, "purchase.status"); got != want {
			t.Errorf("card %s: got %v, want %s", card, got, want)
		}
	}
	stored := s.purchase(c, testCard("5555555555554444"), "10.00", map[string]any{"store": true, "should_service_apply_surcharge": true})
	if get(stored, "purchase.surcharge_amount") != 0.15 || get(stored, "card.multi_use") != true {
		t.Errorf("stored card purchase: got %v, want a 0.15 surcharge (1.5%%) and a multi-use token", stored)
	}
	again := s.purchase(c, map[string]any{"token": get(stored, "card.token")}, "3.00", nil)
	if get(again, "purchase.status") != "APPROVED" {
		t.Errorf("card token purchase: got %v", again)
	}
	code, preview := s.post(c.APIKey, "/v5/surcharge", map[string]any{"token": map[string]any{"company": c.CompanyToken},
		"card": testCard("378282246310005"), "amount": "100", "currency": "AUD"})
	if code != 200 || get(preview, "surcharge.amount") != 2.5 {
		t.Errorf("surcharge preview: got %d %v", code, preview)
	}
	for card, want := range outcomes {
		code, st := s.post(c.APIKey, "/v5/purchase/E2E-"+card[len(card)-4:], map[string]any{"company_token": c.CompanyToken})
		if code != 200 || st["status"] != want {
			t.Errorf("status of E2E-%s: got %d %v, want %s", card, code, st, want)
		}
	}
	log := s.logText()
	// The CVC is looked for quoted, as a logged body or field would carry
	// it: four bare digits also turn up by chance in ids and durations.
	for _, secret := range []string{"4111111111111111", `"4242"`, `"424"`, "cvc", c.APIKey, c.CompanyToken} {
		if strings.Contains(log, secret) {
			t.Errorf("the server log contains a secret (%.6s...)", secret)
		}
	}
	list, err := exec.Command(binary, "merchant", "list", "--db", db).Output()
	if err != nil || !strings.Contains(string(list), c.MID) {
		t.Errorf("merchant list: %v %s", err, list)
	}
}

func TestKillNineLosesNoApprovals(t *testing.T) {
	db := filepath.Join(t.TempDir(), "crash.db")
	c := createMerchant(t, db)
	s := startServe(t, db)
	const n = 40
	refs := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out := s.purchase(c, testCard("4111111111111111"), "1.00", nil)
			if get(out, "purchase.status") != "APPROVED" {
				t.Errorf("purchase %d: %v", i, out)
			}
			refs[i], _ = get(out, "purchase.purchase_reference").(string)
		}()
	}
	wg.Wait()
	s.kill() // SIGKILL right after the last approval was answered

	s2 := startServe(t, db)
	for i, ref := range refs {
		code, st := s2.post(c.APIKey, "/v5/purchase/"+ref, map[string]any{"company_token": c.CompanyToken})
		if code != 200 || st["status"] != "APPROVED" {
			t.Errorf("approval %d (%s) after kill -9: got %d %v, want APPROVED", i, ref, code, st)
		}
	}
}

func TestGracefulShutdownOnSIGTERM(t *testing.T) {
	db := filepath.Join(t.TempDir(), "term.db")
	s := startServe(t, db)
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("got exit %v after SIGTERM, want a clean exit; log:\n%s", err, s.logText())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("serve did not stop within 20s of SIGTERM")
	}
	if !strings.Contains(s.logText(), "shutting down") {
		t.Errorf("no shutdown in the log:\n%s", s.logText())
	}
}
