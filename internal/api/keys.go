package api

import (
	"errors"
	"strings"

	"github.com/paylink/paylink"
)

// casedMember finds the last member among lo to hi, not empty, whose
// key, spelled in snake_case, is key's: a client's
// "shouldServiceApplyPreAuthorisation" is read as the spec's
// "should_service_apply_pre_authorisation" instead of being ignored as an
// unknown key. It is the fallback of a look-up that found no member
// spelled as asked with a value, so a key sent as the spec spells it
// always wins, and an empty one beside an alias
// ("merchantReference": "L-1", "merchant_reference": "") does not hide
// the alias; -1 when there is none.
func (b *body) casedMember(lo, hi int, key string) int {
	want, found := snakeKey(key), -1
	for j := lo; j < hi; j = int(b.v[j].end) {
		if b.v[j].kind != kindAbsent && snakeKey(b.v[j].key) == want {
			found = j
		}
	}
	return found
}

// checkSpellings records a field error when another member among lo to
// hi than the one found (at found) names the same key in snake_case, under
// another spelling or the same one again, and holds another value:
// {"amount": "10.00", "Amount": "1000.00"} and {"Amount": "12.00",
// "Amount": "1200.00"} are refused rather than read as either. Values compare as
// sent, trimmed (12.00 and "12.00" agree; 12 and 12.00 do not), as
// lookup compares duplicates spelled alike; an empty alias is absent, and
// two objects under two spellings are refused, whatever they hold.
// prefix is the path up to the key ("purchase.").
func (b *body) checkSpellings(lo, hi, found int, prefix string) {
	got := &b.v[found]
	want := snakeKey(got.key)
	for j := lo; j < hi; j = int(b.v[j].end) {
		v := &b.v[j]
		if j == found || snakeKey(v.key) != want || !conflicting(v, got) {
			continue
		}
		if v.key == got.key { // the same spelling twice ({"Amount": "12.00", "Amount": "1200.00"})
			b.fail(prefix+v.key, twice(v, problemSentTwice))
		} else {
			b.fail(prefix+v.key, twice(v, "differs from the value sent as "+prefix+got.key))
		}
	}
}

// twice is the problem of a key sent twice: problem, or for an object,
// which is not compared member by member, that it must be sent once.
func twice(v *value, problem string) string {
	if v.kind == kindObject {
		return "is an object sent twice (or under two spellings): send it once"
	}
	return problem
}

// conflicting reports whether two members sent for one key disagree:
// both present, and objects, or values that differ once trimmed.
func conflicting(a, b *value) bool {
	if a.kind == kindAbsent || b.kind == kindAbsent {
		return false
	}
	return a.kind == kindObject || b.kind == kindObject || strings.TrimSpace(a.text) != strings.TrimSpace(b.text)
}

// hasUpper reports whether k holds an upper-case ASCII letter.
func hasUpper(k string) bool { return firstUpper(k) >= 0 }

// firstUpper is the index of k's first upper-case ASCII letter, -1 for
// none.
func firstUpper(k string) int {
	for i := 0; i < len(k); i++ {
		if isUpper(k[i]) {
			return i
		}
	}
	return -1
}

// snakeKey spells a key in snake_case: "IPAddress" is "ip_address",
// "AMOUNT" "amount", "merchantReference" "merchant_reference". A key
// without an upper-case ASCII letter is returned as it is, without a
// copy.
func snakeKey(k string) string {
	i := firstUpper(k)
	if i < 0 {
		return k
	}
	return snakeFrom(k, i)
}

// snakeFrom is snakeKey of k whose first upper-case letter is at i.
func snakeFrom(k string, i int) string {
	var b strings.Builder
	b.Grow(len(k) + 4)
	b.WriteString(k[:i])
	for ; i < len(k); i++ {
		c := k[i]
		if !isUpper(c) {
			b.WriteByte(c)
			continue
		}
		if i > 0 && startsWord(k, i) {
			b.WriteByte('_')
		}
		b.WriteByte(c + 'a' - 'A')
	}
	return b.String()
}

// startsWord reports whether the upper-case letter at i > 0 begins a new
// word: after a lower-case letter or digit ("ipAddress"), or as the last
// capital of an acronym followed by a lower-case letter ("IPAddress").
func startsWord(k string, i int) bool {
	prev := k[i-1]
	switch {
	case prev == '_' || prev == '-' || prev == '.':
		return false
	case !isUpper(prev):
		return true
	}
	return i+1 < len(k) && k[i+1] >= 'a' && k[i+1] <= 'z'
}

func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }

// readAs records that the field first named name was read under alias.
func (b *body) readAs(name, alias string) {
	if b.sent == nil {
		b.sent = map[string]string{}
	}
	b.sent[name] = alias
}

// asSent renames, in a validation error, the fields read under an alias
// to the alias: a bad customer.customer_email is reported as
// customer.customer_email, the key the client sent, not as
// customer.email, which the Service's rule names and the client never
// sent. Any other error is returned as it is.
func (b *body) asSent(err error) error {
	var e *paylink.Error
	if len(b.sent) == 0 || !errors.As(err, &e) || len(e.Fields) == 0 {
		return err
	}
	renamed := *e
	renamed.Fields = make(map[string]string, len(e.Fields))
	for field, problem := range e.Fields {
		if alias, ok := b.sent[field]; ok {
			renamed.Message = renameInMessage(renamed.Message, field, alias)
			field = alias
		}
		renamed.Fields[field] = problem
	}
	return &renamed
}

// renameInMessage renames a field in an error message that lists "field:
// problem" pairs separated by "; " (paylink.FieldErrors.Err).
func renameInMessage(msg, field, alias string) string {
	if strings.HasPrefix(msg, field+": ") {
		msg = alias + msg[len(field):]
	}
	return strings.ReplaceAll(msg, "; "+field+": ", "; "+alias+": ")
}
