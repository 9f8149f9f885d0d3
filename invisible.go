package paylink

import (
	"unicode"
	"unicode/utf8"
)

// kept is what invisibleChar leaves out of Default_Ignorable_Code_Point:
// the zero-width non-joiner and joiner (Persian and Indic spelling, emoji
// sequences), the direction marks U+061C, U+200E and U+200F, and the
// bidirectional controls, which CheckText refuses in every field with its
// own message (bidiControl).
func kept(r rune) bool {
	switch r {
	case '\u061c', '\u200c', '\u200d', '\u200e', '\u200f':
		return true
	}
	return bidiControl(r)
}

// invisibleChar reports whether r is invisible and spells nothing:
// Unicode's Default_Ignorable_Code_Point characters (defaultIgnorable)
// but those writing needs and those another rule decides (kept), and
// the interlinear annotation marks U+FFF9 to U+FFFB, which no text field
// needs either.
func invisibleChar(r rune) bool {
	if r < 0xad {
		return false // ASCII and Latin-1 up to the soft hyphen: none
	}
	return (r >= '\ufff9' && r <= '\ufffb') || (defaultIgnorable(r) && !kept(r))
}

// defaultIgnorable reports whether r is in Unicode's
// Default_Ignorable_Code_Point set, derived as DerivedCoreProperties.txt
// derives it from properties Go's unicode package has:
// Other_Default_Ignorable_Code_Point + Cf + Variation_Selector -
// White_Space - U+FFF9..U+FFFB - U+13430..U+13440 -
// Prepended_Concatenation_Mark.
func defaultIgnorable(r rune) bool {
	switch {
	case !unicode.In(r, unicode.Other_Default_Ignorable_Code_Point, unicode.Cf, unicode.Variation_Selector),
		unicode.Is(unicode.White_Space, r), r >= '\ufff9' && r <= '\ufffb', r >= 0x13430 && r <= 0x13440,
		unicode.Is(unicode.Prepended_Concatenation_Mark, r):
		return false
	}
	return true
}

// Characters of the two emoji sequences in which default-ignorable
// characters spell something visible.
const (
	blackFlag   = '\U0001f3f4' // the base of a subdivision flag (England, Scotland, Wales)
	cancelTag   = '\U000e007f' // ends a tag sequence
	keycapMark  = '\u20e3'     // combining enclosing keycap: 1️⃣ is 1, U+FE0F, U+20E3
	emojiSelect = '\ufe0f'     // variation selector-16, emoji presentation
)

// invisibleIn reports whether s holds a character that is invisible and
// spells nothing (invisibleChar), with which two values that read the
// same differ. A variation selector is kept where it selects the look of
// the character before it (selects), and the tag characters of a
// subdivision flag (U+1F3F4, tags, U+E007F) are kept as the flag they
// spell; anywhere else they are invisible ("INV-7" and "INV-7" with a
// tag or a selector after it read the same).
func invisibleIn(s string) bool {
	prev := rune(-1)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == blackFlag {
			if tags := tagSequence(s[i+n:]); tags > 0 {
				i, prev = i+n+tags, cancelTag
				continue
			}
		}
		if invisibleChar(r) && !(unicode.Is(unicode.Variation_Selector, r) && selects(prev, r, s[i+n:])) {
			return true
		}
		i, prev = i+n, r
	}
	return false
}

// tagSequence is the length in bytes of the tag specification that s
// starts with (tags U+E0020 to U+E007E, at least one, ended by the cancel
// tag), 0 when it starts with none.
func tagSequence(s string) int {
	for i, r := range s {
		switch {
		case r == cancelTag && i > 0:
			return i + utf8.RuneLen(r)
		case r < 0xe0020 || r > 0xe007e:
			return 0
		}
	}
	return 0
}

// selects reports whether the variation selector vs, after prev and
// before rest, selects a look of prev: prev is a character whose look a
// selector chooses (an emoji, a CJK ideograph, a Mongolian letter, a
// mathematical symbol), or the ASCII base of a keycap (#, *, a digit)
// with U+FE0F and the keycap mark after it. After ASCII otherwise, at the
// start, or after another selector or an invisible character it spells
// nothing.
func selects(prev, vs rune, rest string) bool {
	switch {
	case prev < 0:
		return false
	case prev < utf8.RuneSelf:
		r, _ := utf8.DecodeRuneInString(rest)
		return vs == emojiSelect && r == keycapMark && (prev == '#' || prev == '*' || prev >= '0' && prev <= '9')
	}
	// The characters whose look a selector chooses: symbols (emoji, ©,
	// ↔), CJK ideographs, the scripts with standardised variants of
	// their letters, and the five emoji outside the symbol categories
	// (‼ ⁉ ℹ 〰 〽). After a letter of another script (Ä), a currency
	// sign, a combining or enclosing mark or another selector it spells
	// nothing. The rule goes by category, not by Unicode's list of
	// variation sequences: after a symbol that has no variants (°) a
	// selector is kept all the same.
	switch prev {
	case '\u203c', '\u2049', '\u2139', '\u3030', '\u303d':
		return true
	}
	return unicode.In(prev, unicode.So, unicode.Sm, unicode.Han, unicode.Mongolian, unicode.Phags_Pa, unicode.Myanmar)
}
