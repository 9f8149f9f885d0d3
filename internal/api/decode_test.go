package api

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestBodyCoercions(t *testing.T) {
	b, err := parseBody([]byte(`{"a":{"s":" x ","n":7,"f":1.5,"t":"true","e":"","z":null,"i":"07","o":{"k":1}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := b.str(10, "a.s"); got != "x" {
		t.Errorf("trimmed string: got %q", got)
	}
	if got := b.str(10, "a.n"); got != "7" {
		t.Errorf("number as string: got %q", got)
	}
	if got := b.boolean("a.t"); !got {
		t.Errorf(`"true": got false`)
	}
	if got := b.boolean("a.e"); got {
		t.Errorf(`"" as boolean: got true`)
	}
	if got := b.str(10, "a.z"); got != "" {
		t.Errorf("null: got %q", got)
	}
	if n, ok := b.integer("a.i"); !ok || n != 7 {
		t.Errorf(`"07": got %d, %v`, n, ok)
	}
	if got := b.str(10, "a.e", "a.s"); got != "x" {
		t.Errorf("alias after empty value: got %q", got)
	}
	if len(b.f) != 0 {
		t.Fatalf("unexpected field errors %v", b.f)
	}
	b.str(10, "a.o")
	b.integer("a.f")
	if len(b.f) != 2 {
		t.Errorf("got field errors %v, want two (object as string, fraction as integer)", b.f)
	}
}

// TestEmptyValuesAreAbsent checks the one decoding rule: a key whose
// value is "", white space, null or an object of such keys is absent, at
// every depth; other values stay.
func TestEmptyValuesAreAbsent(t *testing.T) {
	tests := []struct{ raw, want string }{
		{`{"a":"","b":null,"c":"  ","d":"x"}`, `{"d":"x"}`},
		{`{"card":{"token":"tok","number":"","expiry_month":null,"cvc":" "}}`, `{"card":{"token":"tok"}}`},
		{`{"metadata":{"channel":"","merchant_hash":null},"customer":{}}`, `{}`},
		{`{"a":{"b":{"c":""}},"e":{"f":{"g":0}}}`, `{"e":{"f":{"g":0}}}`},
		{`{"f":false,"n":0,"l":[""]}`, `{"f":false,"l":[""],"n":0}`},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			b, err := parseBody([]byte(tt.raw))
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(b.m)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func FuzzParseBody(f *testing.F) {
	for _, s := range []string{`{}`, `{"purchase":{"amount":"10.5","currency":"AUD"}}`, `[]`, `{"a":`, `{"a":1e309}`, "\xff"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		b, err := parseBody(raw)
		if err != nil {
			return
		}
		// Every accessor must cope with any shape without panicking.
		b.str(128, "purchase.invoice_number", "a")
		b.need(128, "token.company_token")
		b.boolean("purchase.should_service_apply_surcharge")
		b.integer("card.expiry_month")
		amount, _ := b.money("purchase.amount", "purchase.currency")
		if amount < 0 && len(b.f) == 0 {
			t.Fatalf("negative amount %d accepted", amount)
		}
		b.customer()
		b.card()
		if err := b.err(); err != nil && strings.TrimSpace(err.Error()) == "" {
			t.Fatalf("field errors without a message: %v", b.f)
		}
	})
}
