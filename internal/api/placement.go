package api

import "strings"

// A money or behaviour flag sent anywhere but where the handler reads it
// would be an unknown key, ignored: a hold charged in full, a surcharge
// or a fee left off, 3-D Secure skipped, a stored card kept single-use.
// Each flag is declared once, below, with the paths it is read at; the
// handler reads it through them, and checkPlacement walks the decoded
// body and refuses it found anywhere else, under any spelling a client
// might use, before a field is read.

// keyRule is one flag of an endpoint (or another key clients misspell
// and that a handler must not miss, such as a link's merchantReference).
// paths are every path the handler reads it at, in the order it reads
// them: its home (the first) and the other spellings of its leaf in the
// same object; the handler reads the flag through them (b.boolean(
// rule.paths...)), so that what is read and what is refused are one
// list. others are names that mean the flag but are read nowhere
// (card.multi_use, a response field, sent for
// customer.store_card_permission). absent is the flag's value when it
// is not sent; text marks a rule that is no flag (a string such as the
// merchantReference), refused out of place whatever it holds. A rule
// without paths is a flag of other calls that this one does not have
// (a payment link's hold, a card purchase's direct debit fee): lacks
// says what the call does instead, and the flag is refused wherever it is
// sent with a value that would ask for it.
type keyRule struct {
	paths  []string
	others []string
	absent bool
	text   bool
	lacks  string
}

// home is the path a problem points the client to.
func (r *keyRule) home() string { return r.paths[0] }

// placement is what one endpoint's body must hold where clients go
// wrong: its flags and the objects it reads (a dotted key such as
// "purchase.amount" that starts with one of them is refused). Built by
// newPlacement.
type placement struct {
	objects []string
	// names are the names of the flags squashed (squash), each with its
	// rule, so that a key is squashed once and compared whole.
	names []squashedName
	// initials has bit c-'a' set for each letter c that begins a name:
	// a key that begins with another, most keys, is no flag, and is
	// passed over without squashing (the walk runs on the purchase hot
	// path).
	initials uint32
}

// squashedName is a flag's name squashed, and the flag.
type squashedName struct {
	name string
	rule *keyRule
}

// newPlacement is the placement of a call that reads objects and the
// flags keys.
func newPlacement(objects []string, keys ...*keyRule) placement {
	p := placement{objects: objects}
	add := func(name string, r *keyRule) {
		var buf [maxSquashed]byte
		sq, _ := squash(buf[:0], name)
		p.names = append(p.names, squashedName{string(sq), r})
		p.initials |= initialBit(name)
	}
	for _, r := range keys {
		for _, path := range r.paths {
			add(leaf(path), r)
		}
		for _, n := range r.others {
			add(n, r)
		}
	}
	return p
}

// maxSquashed bounds a squashed name: longer than every flag's name, so
// that a key squashed past it is no flag.
const maxSquashed = 64

// squash appends name to dst in lower case without '_' and '-', the form
// in which looseEqual compares names, and without blanks, control bytes
// and non-ASCII bytes (a stray space, tab or zero-width space a copy
// brings), so that a flag's key carrying one is refused rather than
// passed over as no flag; ok is false when that is longer than
// maxSquashed.
func squash(dst []byte, name string) (sq []byte, ok bool) {
	for i := 0; i < len(name); i++ {
		c := lower(name[i])
		if squashedOut(c) {
			continue
		}
		if len(dst) == maxSquashed {
			return dst, false
		}
		dst = append(dst, c)
	}
	return dst, true
}

// squashedOut reports whether squash leaves byte c out of a name.
func squashedOut(c byte) bool {
	return c == '_' || c == '-' || c <= ' ' || c >= 0x7f
}

// initialBit is the bit of a name's first letter (ignoring case and what
// squash leaves out); 0 when it begins with no ASCII letter.
func initialBit(name string) uint32 {
	for i := 0; i < len(name); i++ {
		switch c := lower(name[i]); {
		case squashedOut(c):
			continue
		case 'a' <= c && c <= 'z':
			return 1 << (c - 'a')
		default:
			return 0
		}
	}
	return 0
}

// The flags, each with its paths. Tables rather than code, read only.
var (
	purchasePreAuth = keyRule{paths: []string{
		"purchase.should_service_apply_pre_authorisation", "purchase.should_service_apply_pre_authorization"}}
	purchaseSurcharge = keyRule{paths: []string{"purchase.should_service_apply_surcharge"}}
	purchaseThreeDS   = keyRule{paths: []string{"customer.should_service_apply_authentication"}}
	// A purchase takes no multi_use: a payment by a stored card may carry
	// the token's multi_use from an earlier answer, which says nothing
	// about storing this card.
	purchaseStoreCard = keyRule{paths: []string{"customer.store_card_permission", "customer.store_card_permisison"}}
	debitFee          = keyRule{paths: []string{"purchase.should_service_apply_fee"}}
	captureSurcharge  = keyRule{paths: []string{"capture.should_service_apply_surcharge"}}
	linkSurcharge     = keyRule{paths: []string{"should_service_apply_surcharge"}, absent: true}
	linkReference     = keyRule{paths: []string{"merchantReference", "merchant_reference"}, text: true}
	tokenizeStoreCard = keyRule{paths: []string{"customer.store_card_permisison", "customer.store_card_permission"},
		others: []string{"multi_use"}}

	// Flags of other calls, refused where they would ask for something
	// the call cannot do.
	linkNoHold = keyRule{others: []string{"should_service_apply_pre_authorisation", "should_service_apply_pre_authorization"},
		lacks: "a payment link takes the payment in full, never a hold (make a pre-authorisation with POST /v5/purchase)"}
	linkNoFee = keyRule{others: []string{"should_service_apply_fee"},
		lacks: "a payment link adds no direct debit fee; its card surcharge is should_service_apply_surcharge"}
	purchaseNoFee = keyRule{others: []string{"should_service_apply_fee"},
		lacks: "a card purchase adds no direct debit fee; its card surcharge is purchase.should_service_apply_surcharge"}
	debitNoSurcharge = keyRule{others: []string{"should_service_apply_surcharge"},
		lacks: "a direct debit has no card surcharge; its fee is purchase.should_service_apply_fee"}
	debitNoThreeDS = keyRule{others: []string{"should_service_apply_authentication"},
		lacks: "a direct debit has no 3-D Secure"}
	captureNoFee = keyRule{others: []string{"should_service_apply_fee"},
		lacks: "a capture adds no direct debit fee; its card surcharge is capture.should_service_apply_surcharge"}
	captureNoThreeDS = keyRule{others: []string{"should_service_apply_authentication"},
		lacks: "a capture takes a hold already authorised, without 3-D Secure"}
	refundNoSurcharge = keyRule{others: []string{"should_service_apply_surcharge"},
		lacks: "a refund returns refund.amount, which may include the surcharge taken (up to the captured total)"}
	refundNoFee = keyRule{others: []string{"should_service_apply_fee"},
		lacks: "a refund returns refund.amount, which may include the fee taken (up to the total)"}
)

// The endpoints' placements.
var (
	purchasePlacement = newPlacement([]string{"token", "customer", "card", "purchase"},
		&purchasePreAuth, &purchaseSurcharge, &purchaseThreeDS, &purchaseStoreCard, &purchaseNoFee)
	directDebitPlacement = newPlacement([]string{"token", "customer", "bank_account", "card", "purchase", "metadata"},
		&debitFee, &purchasePreAuth, &debitNoSurcharge, &debitNoThreeDS)
	capturePlacement  = newPlacement([]string{"token", "capture", "metadata"}, &captureSurcharge, &captureNoFee, &captureNoThreeDS)
	linkPlacement     = newPlacement([]string{"token", "customer"}, &linkSurcharge, &linkReference, &linkNoHold, &linkNoFee)
	tokenizePlacement = newPlacement([]string{"token", "card", "customer"}, &tokenizeStoreCard)
	refundPlacement   = newPlacement([]string{"token", "customer", "refund", "metadata"}, &refundNoSurcharge, &refundNoFee)
	// The calls without flags refuse only dotted keys.
	cancelPlacement    = newPlacement([]string{"token", "metadata"})
	surchargePlacement = newPlacement([]string{"token", "card"})
	debitFeePlacement  = newPlacement([]string{"token", "purchase"})
	cardPlacement      = newPlacement([]string{"token", "card"}) // a card's look-up and invalidation
	// tokenPlacement is the calls that read a company token alone (a
	// transaction token, a status look-up, a link's, a read's credential).
	tokenPlacement = newPlacement([]string{"token"})
)

// maxPlacementDepth bounds the object nesting checkPlacement follows, so
// that its walk needs no allocation: every flag's home is at most one
// object deep, and no client nests a flag eight objects deep by mistake.
const maxPlacementDepth = 8

// checkPlacement records a field error for every flag of p found other
// than at its home under a spelling the handler reads there, and for
// every dotted key ("purchase.amount", a form's purchase.amount=...) that
// names one of p's objects or flags: the decoder reads nested objects
// only, and such a key would be ignored. metadata objects take any keys
// and are not looked into. Call it before the fields are read, so that
// its problem, not "is required", names a dotted key.
func (b *body) checkPlacement(p *placement) {
	var stack [maxPlacementDepth]string
	b.placeIn(p, 0, len(b.v), stack[:0])
}

// placeIn checks the members among lo to hi, inside the objects named by
// parents.
func (b *body) placeIn(p *placement, lo, hi int, parents []string) {
	for j := lo; j < hi; j = int(b.v[j].end) {
		v := &b.v[j]
		if v.kind == kindAbsent {
			continue
		}
		if strings.IndexByte(v.key, '.') >= 0 && p.dotted(v.key) {
			b.fail(joinPath(parents, v.key), "send nested objects: "+nested(v.key)+"; a dotted key is not read")
			continue
		}
		if rule, ok := p.flag(v.key); ok && !rule.readAt(parents, v.key) && !b.saysTheSame(rule, v) {
			b.fail(joinPath(parents, v.key), rule.problem(parents))
			continue
		}
		if v.kind == kindObject && len(parents) < maxPlacementDepth && !sameKey(v.key, "metadata") {
			b.placeIn(p, j+1, int(v.end), append(parents, v.key))
		}
	}
}

// saysTheSame reports whether v, a flag sent where the call does not
// read it, says what the call does anyway: the flag's value at its home,
// or its value when it is not sent. Ignored, it changes nothing, so it is
// not refused: a hold's flag echoed as true in token beside the one in
// purchase, a false one where false is the default, a tokenisation's
// multi_use true beside its store_card_permission true.
func (b *body) saysTheSame(r *keyRule, v *value) bool {
	if r.text {
		return false
	}
	on, ok := flag(v)
	return ok && on == b.flagValue(r)
}

// flagValue is the value the call reads for r's flag: the first of its
// paths sent, or r.absent (a value that is no flag is the handler's to
// refuse). It looks, as peek does, without recording a problem.
func (b *body) flagValue(r *keyRule) bool {
	for _, path := range r.paths {
		if v := b.peek(path); v != nil {
			if on, ok := flag(v); ok {
				return on
			}
			return r.absent
		}
	}
	return r.absent
}

// flag returns the rule of the flag key names, under any spelling: its
// name in snake_case, camelCase or run together in any case
// ("shouldserviceapplysurcharge").
func (p *placement) flag(key string) (*keyRule, bool) {
	if p.initials&initialBit(key) == 0 {
		return nil, false
	}
	var buf [maxSquashed]byte
	sq, ok := squash(buf[:0], key)
	if !ok {
		return nil, false
	}
	for _, n := range p.names {
		if string(sq) == n.name {
			return n.rule, true
		}
	}
	return nil, false
}

// leaf is the last key of a dotted path.
func leaf(path string) string { return path[strings.LastIndexByte(path, '.')+1:] }

// dotted reports whether a key holding a dot names one of p's objects
// (its first segment) or flags (any segment).
func (p *placement) dotted(key string) bool {
	first, _, _ := strings.Cut(key, ".")
	for _, o := range p.objects {
		if looseEqual(first, o) {
			return true
		}
	}
	for seg := range strings.SplitSeq(key, ".") {
		if _, ok := p.flag(seg); ok {
			return true
		}
	}
	return false
}

// problem is the field error of the rule's key sent inside parents
// where it is not read: out of its object, or in it under a spelling the
// decoder does not read ("shouldserviceapplysurcharge").
func (r *keyRule) problem(parents []string) string {
	if r.lacks != "" {
		return "this call has no such flag, and would ignore it: " + r.lacks
	}
	if r.inHome(parents) {
		return "is not read spelled so and would be ignored: send it as " + r.home()
	}
	return "belongs at " + r.home() + "; sent here it would be ignored"
}

// inHome reports whether parents are the objects of the rule's home, as
// the decoder's look-up matches them.
func (r *keyRule) inHome(parents []string) bool {
	if len(r.paths) == 0 {
		return false
	}
	home := r.home()
	for _, parent := range parents {
		object, rest, nested := strings.Cut(home, ".")
		if !nested || !sameKey(parent, object) {
			return false
		}
		home = rest
	}
	return strings.IndexByte(home, '.') < 0
}

// readAt reports whether the handler reads key, inside parents, as the
// rule's flag: parents are the home's objects and key one of its names,
// as the decoder's look-up matches them (exactly, or in snake_case for a
// key with capitals).
func (r *keyRule) readAt(parents []string, key string) bool {
	if !r.inHome(parents) {
		return false
	}
	for _, p := range r.paths {
		if sameKey(key, leaf(p)) {
			return true
		}
	}
	return false
}

// sameKey reports whether the decoder's look-up reads key as name (a
// snake_case key): spelled alike, or alike once in snake_case
// (snakeKey), compared as it would spell it, without a copy.
func sameKey(key, name string) bool {
	if key == name {
		return true
	}
	j := 0
	for i := 0; i < len(key); i++ {
		c := key[i]
		if isUpper(c) {
			if i > 0 && startsWord(key, i) {
				if j >= len(name) || name[j] != '_' {
					return false
				}
				j++
			}
			c += 'a' - 'A'
		}
		if j >= len(name) || name[j] != c {
			return false
		}
		j++
	}
	return j == len(name)
}

// looseEqual compares two keys ignoring ASCII case, '_' and '-':
// "should_service_apply_surcharge", "shouldServiceApplySurcharge" and
// "SHOULDSERVICEAPPLYSURCHARGE" are one name. It does not allocate.
func looseEqual(a, b string) bool {
	i, j := 0, 0
	for {
		for i < len(a) && (a[i] == '_' || a[i] == '-') {
			i++
		}
		for j < len(b) && (b[j] == '_' || b[j] == '-') {
			j++
		}
		if i == len(a) || j == len(b) {
			return i == len(a) && j == len(b)
		}
		if lower(a[i]) != lower(b[j]) {
			return false
		}
		i++
		j++
	}
}

// lower is an ASCII letter in lower case; other bytes as they are.
func lower(c byte) byte {
	if isUpper(c) {
		return c + 'a' - 'A'
	}
	return c
}

// joinPath is the dotted path of key inside parents, as a field error
// names it.
func joinPath(parents []string, key string) string {
	if len(parents) == 0 {
		return key
	}
	return strings.Join(parents, ".") + "." + key
}

// nested spells a dotted key as the nested objects it means:
// "purchase.amount" is {"purchase": {"amount": ...}}.
func nested(key string) string {
	segs := strings.Split(key, ".")
	var s strings.Builder
	for _, seg := range segs {
		s.WriteString(`{"` + seg + `": `)
	}
	s.WriteString("...")
	s.WriteString(strings.Repeat("}", len(segs)))
	return s.String()
}
