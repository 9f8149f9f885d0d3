package dashboard

import (
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
