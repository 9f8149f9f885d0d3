package dashboard

import (
	"fmt"
	"testing"

	"github.com/paylink/paylink"
)

// TestErrorText: field problems are named by the form's labels; a
// message written for people is kept.
func TestErrorText(t *testing.T) {
	f := paylink.FieldErrors{}
	f.Add("min_amount", "must be a non-negative amount of AUD")
	f.Add("customer.email", "must be an email address")
	e := paylink.AsError(f.Err())
	want := "Please check the form. Customer email: must be an email address; Total from: must be a non-negative amount of AUD."
	if got := errorText(e); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	custom := &paylink.Error{Kind: paylink.KindInvalid, Message: "the amount \"ten\" is not a positive amount of AUD",
		Fields: map[string]string{"amount": "must be a positive amount of AUD"}}
	if got := errorText(custom); got != custom.Message {
		t.Errorf("a sentence for people: got %q, want it kept", got)
	}
	for name, want := range map[string]string{"merchantReference": "Your reference", "current_password": "Current password",
		"expires_at": "Expires at", "customer.first_name": "Customer first name", "code": "Code"} {
		if got := fieldLabel(name); got != want {
			t.Errorf("fieldLabel(%q) = %q, want %q", name, got, want)
		}
	}
}

// TestFailMessage: an unreachable database is told in the dashboard's
// words; a busy password check (a 503 too) as the Service says it, not
// as a database outage that may have done what was asked (a
// verification sweep found staff told the database was down).
func TestFailMessage(t *testing.T) {
	outage := fmt.Errorf("sign in: %w", paylink.ErrUnavailable)
	if got := failMessage(outage, paylink.AsError(outage)); got != msgUnavailable {
		t.Errorf("an outage: got %q, want msgUnavailable", got)
	}
	busy := paylink.Errorf(paylink.KindUnavailable, paylink.CodeServiceUnavailable, "too many passwords are being checked at once; try again in a moment")
	if got := failMessage(busy, paylink.AsError(busy)); got != busy.Message {
		t.Errorf("a busy password check: got %q, want %q", got, busy.Message)
	}
}
