package waitingroom

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// CheckText says what is wrong with s as the value of a text setting, or
// returns nil. A text setting is one line that a person reads (the title on
// the waiting page, the dashboard and the command line), so it must be valid
// UTF-8 and hold no control character: none of C0 (which takes in NUL, tab and
// the line breaks), DEL or C1, and neither of Unicode's line and paragraph
// separators. Such characters are never meant in a title; they break the line
// they are printed on, or hide what an operator typed.
//
// U+FFFD, the replacement character, is refused too, though it is valid:
// it is what a reader puts where it met bytes that were not UTF-8, and
// Caddy's Caddyfile reader does so before Foyer sees the line, so in a
// Caddyfile it is the only trace of broken text left. A title never means
// it, and one rule for every way a title arrives is easier to state than
// one per way. The error does not name the setting: the caller does.
func CheckText(s string) error {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 {
			return invalidUTF8(s, i)
		}
		if r == utf8.RuneError {
			return fmt.Errorf("must be valid UTF-8; byte %d is U+FFFD, the replacement character, which stands where a reader met bytes that were not UTF-8", i+1)
		}
		if name, bad := controlName(r); bad {
			return fmt.Errorf("must be one line of text without control characters; byte %d is %U (%s)", i+1, r, name)
		}
		i += size
	}
	return nil
}

// invalidUTF8 describes the bytes at i that are not UTF-8. A surrogate
// encoded as if it were a character (what a lone "\ud800" turns into when
// some tools write it out) is named as such, since that is what its writer
// meant and would look for.
func invalidUTF8(s string, i int) error {
	if i+2 < len(s) && s[i] == 0xED && s[i+1] >= 0xA0 && s[i+1] <= 0xBF && s[i+2]&0xC0 == 0x80 {
		r := rune(s[i]&0x0F)<<12 | rune(s[i+1]&0x3F)<<6 | rune(s[i+2]&0x3F)
		return fmt.Errorf("must be valid UTF-8; byte %d starts a lone surrogate %U, which is not a character", i+1, r)
	}
	return fmt.Errorf("must be valid UTF-8; byte %d (0x%02X) is not", i+1, s[i])
}

// controlName names a character that a text setting refuses, with whether it
// is one.
func controlName(r rune) (string, bool) {
	switch {
	case r == 0:
		return "NUL", true
	case r == '\t':
		return "a tab", true
	case r == '\n' || r == '\r':
		return "a line break", true
	case r < 0x20:
		return "a control character", true
	case r == 0x7F:
		return "DEL", true
	case r >= 0x80 && r <= 0x9F:
		return "a C1 control character", true
	case r == 0x2028 || r == 0x2029:
		return "a line or paragraph separator", true
	}
	return "", false
}

// DecodeText reads a text setting from its JSON value, refusing what CheckText
// refuses. It reads the raw bytes itself first, because encoding/json turns
// invalid UTF-8 and a lone surrogate escape ("\ud800") into U+FFFD without a
// word: decoded, a broken title would pass for a good one with a replacement
// character in it. A value that is not a JSON string is a
// *json.UnmarshalTypeError, as for any other setting.
func DecodeText(raw []byte) (string, error) {
	if len(raw) == 0 || raw[0] != '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		if err == nil {
			err = errors.New("must be a JSON string")
		}
		return "", err
	}
	if err := checkJSONString(raw); err != nil {
		return "", err
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", err
	}
	return s, CheckText(s)
}

// checkJSONString looks through a JSON string literal, quotes included, for
// what decoding would silently replace: bytes that are not UTF-8, and
// surrogate escapes that are not a high one followed at once by a low one.
// The literal's syntax is the JSON decoder's to check.
func checkJSONString(raw []byte) error {
	body := raw[1 : len(raw)-1]
	for i := 0; i < len(body); {
		c := body[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRune(body[i:])
			if r == utf8.RuneError && size <= 1 {
				return fmt.Errorf("must be valid UTF-8; byte %d of the JSON string (0x%02X) is not", i+1, c)
			}
			i += size
			continue
		}
		if c != '\\' || i+1 >= len(body) {
			i++
			continue
		}
		if body[i+1] != 'u' {
			i += 2 // an escape of one character: \" \\ \/ \b \f \n \r \t
			continue
		}
		r, ok := hexEscape(body, i)
		if !ok {
			return nil // not an escape the decoder will take; it says why
		}
		switch {
		case r >= 0xD800 && r <= 0xDBFF:
			if low, ok := hexEscape(body, i+6); ok && low >= 0xDC00 && low <= 0xDFFF {
				i += 12
				continue
			}
			return fmt.Errorf("must be valid Unicode; %s is half of a surrogate pair, with no low half after it", body[i:i+6])
		case r >= 0xDC00 && r <= 0xDFFF:
			return fmt.Errorf("must be valid Unicode; %s is half of a surrogate pair, with no high half before it", body[i:i+6])
		}
		i += 6
	}
	return nil
}

// hexEscape reads the \uXXXX escape at body[i:], if there is one.
func hexEscape(body []byte, i int) (rune, bool) {
	if i+6 > len(body) || body[i] != '\\' || body[i+1] != 'u' {
		return 0, false
	}
	n, err := strconv.ParseUint(string(body[i+2:i+6]), 16, 32)
	return rune(n), err == nil
}
