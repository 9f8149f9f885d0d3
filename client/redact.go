package client

import (
	"fmt"
	"log/slog"
)

// A request, a Card, Tokens, a BankAccount, the Client or a
// WebhookVerifier, which hold card numbers, security codes, bank account
// numbers, the API key, company and transaction tokens, a card token sent
// to pay, and webhook signing secrets, shows none of them when formatted
// (fmt's verbs, and so log.Printf or an error wrapping it) or logged with
// log/slog, whose JSON handler would otherwise encode a request as it is
// sent: a number shows its last four digits, the rest "[redacted]".
// Encoding a request to JSON (what the client sends) is unchanged, and so
// slog's JSON handler encodes as sent a value nested in a slice, map or
// struct it was given, whose LogValue it does not ask for (the package
// doc says so).

// hidden stands in for a secret in formatted output.
const hidden = "[redacted]"

// conceal is s hidden, or "" when there is nothing to hide.
func conceal(s string) string {
	if s == "" {
		return ""
	}
	return hidden
}

// lastFour is a card or account number shown by its last four digits, or
// hidden whole when that would show all of it or most of it.
func lastFour(s string) string {
	if len(s) < 8 {
		return conceal(s)
	}
	return "..." + s[len(s)-4:]
}

// formatAs prints v, a copy of a value with its secrets hidden, with the
// verb and flags the caller asked for.
func formatAs(f fmt.State, verb rune, v any) {
	fmt.Fprintf(f, fmt.FormatString(f, verb), v)
}

// loggable is what log/slog shows of v: its %+v, in which every secret
// is hidden by the Format methods below.
func loggable(v any) slog.Value { return slog.StringValue(fmt.Sprintf("%+v", v)) }

// shownCard is a Card as formatted: no Format method, so printing it
// does not recurse.
type shownCard Card

// Format prints c with its number cut to the last four digits and its
// security code and card token hidden.
func (c Card) Format(f fmt.State, verb rune) {
	s := shownCard(c)
	s.Token, s.Number, s.CVC = conceal(c.Token), lastFour(c.Number), conceal(c.CVC)
	formatAs(f, verb, s)
}

// LogValue hides c's secrets from log/slog.
func (c Card) LogValue() slog.Value { return loggable(c) }

// shownTokens is Tokens as formatted.
type shownTokens Tokens

// Format prints t with both tokens hidden.
func (t Tokens) Format(f fmt.State, verb rune) {
	formatAs(f, verb, shownTokens{CompanyToken: conceal(t.CompanyToken), TransactionToken: conceal(t.TransactionToken)})
}

// LogValue hides t's tokens from log/slog.
func (t Tokens) LogValue() slog.Value { return loggable(t) }

// shownAccount is a BankAccount as formatted.
type shownAccount BankAccount

// Format prints a with its account number cut to the last four digits.
func (a BankAccount) Format(f fmt.State, verb rune) {
	s := shownAccount(a)
	s.Number = lastFour(a.Number)
	formatAs(f, verb, s)
}

// LogValue hides a's account number from log/slog.
func (a BankAccount) LogValue() slog.Value { return loggable(a) }

// Format prints the client's base URL only: never its API key or
// company token.
func (c *Client) Format(f fmt.State, _ rune) {
	fmt.Fprintf(f, "paylink client for %s", c.baseURL)
}

// LogValue hides the client's API key and company token from log/slog.
func (c *Client) LogValue() slog.Value { return loggable(c) }

// Format prints how many signing secrets v holds, never the secrets.
func (v *WebhookVerifier) Format(f fmt.State, _ rune) {
	fmt.Fprintf(f, "paylink webhook verifier with %d secret(s), tolerance %s", len(v.keys), v.tolerance)
}

// LogValue hides the verifier's secrets from log/slog.
func (v *WebhookVerifier) LogValue() slog.Value { return loggable(v) }

// The requests below hold a Card, Tokens or a BankAccount: log/slog's
// JSON handler would encode them as sent, so each logs as its %+v.

// LogValue hides the request's secrets from log/slog.
func (r PurchaseRequest) LogValue() slog.Value { return loggable(r) }

// LogValue hides the request's secrets from log/slog.
func (r SurchargeRequest) LogValue() slog.Value { return loggable(r) }

// LogValue hides the request's secrets from log/slog.
func (r TokenizeRequest) LogValue() slog.Value { return loggable(r) }

// LogValue hides the request's secrets from log/slog.
func (r DirectDebitRequest) LogValue() slog.Value { return loggable(r) }

// LogValue hides the request's secrets from log/slog.
func (r CaptureRequest) LogValue() slog.Value { return loggable(r) }

// LogValue hides the request's secrets from log/slog.
func (r CancelRequest) LogValue() slog.Value { return loggable(r) }

// LogValue hides the request's secrets from log/slog.
func (r RefundRequest) LogValue() slog.Value { return loggable(r) }
