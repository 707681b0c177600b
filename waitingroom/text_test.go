package waitingroom_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/foyer-dev/foyer/waitingroom"
)

// TestCheckText: a text setting is one line of valid UTF-8 without control
// characters; each refusal says what it found and where.
func TestCheckText(t *testing.T) {
	cases := []struct {
		name, text, mention string // mention is "" for text that is good
	}{
		{"plain", "Big Night", ""},
		{"empty", "", ""},
		{"accents and an emoji", "Café Ünïcode 🎫 — live", ""},
		{"replacement character", "a\ufffdb", "byte 2 is U+FFFD"},
		{"invalid byte", "a\xff\xfeb", "byte 2 (0xFF) is not"},
		{"cut-off sequence", "a\xe2\x82", "valid UTF-8"},
		{"encoded surrogate", "a\xed\xa0\x80b", "lone surrogate U+D800"},
		{"NUL", "a\x00b", "U+0000 (NUL)"},
		{"tab", "a\tb", "U+0009 (a tab)"},
		{"newline", "a\nb", "U+000A (a line break)"},
		{"carriage return", "a\rb", "line break"},
		{"escape", "a\x1b[31mb", "U+001B (a control character)"},
		{"DEL", "a\x7fb", "U+007F (DEL)"},
		{"C1", "a\u0085b", "U+0085 (a C1 control character)"},
		{"line separator", "a\u2028b", "U+2028"},
		{"paragraph separator", "a\u2029b", "U+2029"},
	}
	for _, tc := range cases {
		err := waitingroom.CheckText(tc.text)
		switch {
		case tc.mention == "" && err != nil:
			t.Errorf("%s: %q refused: %v", tc.name, tc.text, err)
		case tc.mention != "" && (err == nil || !strings.Contains(err.Error(), tc.mention)):
			t.Errorf("%s: %q: error %v, want one mentioning %q", tc.name, tc.text, err, tc.mention)
		}
	}
}

// TestDecodeText: the JSON reading of a text setting refuses on the raw bytes
// what encoding/json would silently turn into U+FFFD, and what CheckText
// refuses once decoded.
func TestDecodeText(t *testing.T) {
	cases := []struct {
		name, raw, want, mention string
	}{
		{"plain", `"Big Night"`, "Big Night", ""},
		{"escapes", `"a\"b\\c\/d"`, `a"b\c/d`, ""},
		{"surrogate pair", `"\ud83c\udfab"`, "🎫", ""},
		{"escaped backslash before u", `"\\ud800"`, `\ud800`, ""},
		{"invalid bytes", "\"a\xff\xfeb\"", "", "byte 2 of the JSON string (0xFF)"},
		{"lone high surrogate", `"a\ud800b"`, "", `\ud800 is half of a surrogate pair, with no low half`},
		{"lone high at the end", `"\uD800"`, "", `\uD800 is half`},
		{"high then high", `"\ud800\ud800"`, "", "no low half"},
		{"lone low surrogate", `"\udc00"`, "", "no high half"},
		{"escaped NUL", `"a\u0000b"`, "", "U+0000 (NUL)"},
		{"escaped newline", `"a\nb"`, "", "line break"},
		{"escaped tab", `"a\tb"`, "", "tab"},
		{"escaped C1", `"\u009b"`, "", "C1"},
		{"escaped replacement character", `"a\ufffd"`, "", "U+FFFD"},
	}
	for _, tc := range cases {
		got, err := waitingroom.DecodeText([]byte(tc.raw))
		switch {
		case tc.mention == "" && (err != nil || got != tc.want):
			t.Errorf("%s: %s gave %q, %v; want %q", tc.name, tc.raw, got, err, tc.want)
		case tc.mention != "" && (err == nil || !strings.Contains(err.Error(), tc.mention)):
			t.Errorf("%s: %s: error %v, want one mentioning %q", tc.name, tc.raw, err, tc.mention)
		}
	}
	for _, raw := range []string{`5`, `true`, `{}`, `["a"]`} {
		if _, err := waitingroom.DecodeText([]byte(raw)); !isTypeError(err) {
			t.Errorf("%s: error %v, want a *json.UnmarshalTypeError", raw, err)
		}
	}
}

func isTypeError(err error) bool {
	_, ok := errors.AsType[*json.UnmarshalTypeError](err)
	return ok
}

// TestTextSettingsValidate: whichever way a title arrives, Validate refuses
// what CheckText refuses, naming the setting, and measures its length in
// characters rather than bytes.
func TestTextSettingsValidate(t *testing.T) {
	for _, tc := range []struct {
		title string
		ok    bool
	}{
		{"Big Night", true},
		{strings.Repeat("é", 200), true}, // 400 bytes, 200 characters
		{strings.Repeat("é", 201), false},
		{"a\x00b", false},
		{"two\nlines", false},
		{"a\xffb", false},
	} {
		err := waitingroom.Settings{Title: tc.title}.WithDefaults().Validate()
		var se *waitingroom.SettingError
		if tc.ok != (err == nil) || err != nil && (!errors.As(err, &se) || se.Setting != "title") {
			t.Errorf("title %q: %v", tc.title, err)
		}
	}
}
