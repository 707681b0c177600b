package i18n

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"

	"golang.org/x/text/currency"
	"golang.org/x/text/feature/plural"
	"golang.org/x/text/language"
	xmessage "golang.org/x/text/message"
	"golang.org/x/text/number"
	"golang.org/x/text/unicode/bidi"
)

// Locale is one language, ready for pages: its messages and how it writes
// numbers, built once.
type Locale struct {
	Tag  language.Tag
	Code string // as pages write it: lang="zh-Hans"
	Dir  string // "ltr" or "rtl"
	Name string // the language's own name, for the menu
	msgs map[string]Message
	num  NumberFormat
	dec  string // the decimal separator
}

// NewLocale readies a checked catalog. Its "language.name" is the
// language's own name.
func NewLocale(c *Catalog) *Locale {
	l := &Locale{Tag: c.Tag, Code: c.Tag.String(), msgs: c.Msgs, num: NewNumberFormat(c.Tag)}
	l.Name = l.T("language.name")
	l.Dir = directionOf(l.Name)
	l.dec = "."
	// The separator between the 1 and the 5 of one and a half.
	s := []rune(xmessage.NewPrinter(c.Tag).Sprint(number.Decimal(1.5, number.Scale(1))))
	for _, r := range s {
		if !unicode.IsDigit(r) {
			l.dec = string(r)
			break
		}
	}
	return l
}

// directionOf says which way a language is written, from the first letter
// of its own name: Arabic's "العربية" is right to left.
func directionOf(name string) string {
	for _, r := range name {
		if !unicode.IsLetter(r) {
			continue
		}
		switch p, _ := bidi.LookupRune(r); p.Class() {
		case bidi.R, bidi.AL:
			return "rtl"
		}
		return "ltr"
	}
	return "ltr"
}

// T is the text of key with each {name} replaced by its value, given as
// pairs: T("hold.until", "time", "20:15"). A key no catalog has is written
// as itself, which the catalogs' tests never let through.
func (l *Locale) T(key string, pairs ...string) string {
	m, ok := l.msgs[key]
	if !ok {
		return key
	}
	return fill(m.Forms[plural.Other], pairs...)
}

// Has reports whether the language's catalog has key.
func (l *Locale) Has(key string) bool {
	_, ok := l.msgs[key]
	return ok
}

// N is the plural text of key about n, {n} written in the language's digits,
// and each other {name} replaced as by T.
func (l *Locale) N(key string, n int, pairs ...string) string {
	m, ok := l.msgs[key]
	if !ok {
		return key
	}
	return fill(strings.Replace(l.form(m, uint64(max(n, 0))), "{n}", l.Number(n), 1), pairs...)
}

// Count is the plural text of key about n, {n} written in the language's
// digits, for a count that may pass what an int holds (a place in a line).
// It allocates only the text it returns, so a poll may word a place with it.
func (l *Locale) Count(key string, n uint64) string {
	m, ok := l.msgs[key]
	if !ok {
		return key
	}
	return strings.Replace(l.form(m, n), "{n}", l.num.Format(n), 1)
}

// form is m's text for n by the language's plural rules.
func (l *Locale) form(m Message, n uint64) string {
	text := m.Forms[plural.Other]
	if m.Plural {
		// The rules look at the last digits; very large numbers are
		// "other" or "many" alike, and read as a million does.
		i := int(min(n, 1<<30))
		if n > 1<<30 {
			i = 1000000
		}
		if t := m.Forms[plural.Cardinal.MatchPlural(l.Tag, i, 0, 0, 0, 0)]; t != "" {
			text = t
		}
	}
	return text
}

func fill(text string, pairs ...string) string {
	for i := 0; i+1 < len(pairs); i += 2 {
		text = strings.ReplaceAll(text, "{"+pairs[i]+"}", pairs[i+1])
	}
	return text
}

// Number writes a whole number in the language's digits and grouping.
func (l *Locale) Number(n int) string {
	if n < 0 {
		return "-" + l.num.Format(uint64(-n))
	}
	return l.num.Format(uint64(n))
}

// Uint is Number for a count that may pass what an int holds.
func (l *Locale) Uint(n uint64) string { return l.num.Format(n) }

// Money writes an amount in cents of a currency (ISO 4217) as the language
// does: its digits and separators, and where the symbol goes (the
// catalog's "format.money", such as "{symbol}{amount}" or "{amount} {symbol}").
func (l *Locale) Money(cents int64, code string) string {
	sym := code
	if u, err := currency.ParseISO(code); err == nil {
		sym = xmessage.NewPrinter(l.Tag).Sprint(currency.NarrowSymbol(u))
	}
	neg := ""
	if cents < 0 {
		neg, cents = "-", -cents
	}
	frac := l.num.Format(uint64(cents % 100))
	if cents%100 < 10 {
		frac = l.num.Format(0) + frac
	}
	amount := neg + l.num.Format(uint64(cents/100)) + l.dec + frac
	return l.T("format.money", "amount", amount, "symbol", sym)
}

// Time writes t in its own zone: the catalog's "format.datetime" with
// {weekday}, {day}, {month}, {year} and {time} (24-hour hh:mm), the names
// from "format.weekdays" (Sunday first) and "format.months", each a list
// separated by commas.
func (l *Locale) Time(t time.Time) string {
	wd := strings.Split(l.T("format.weekdays"), ",")
	mo := strings.Split(l.T("format.months"), ",")
	name := func(list []string, i int) string {
		if i < len(list) {
			return strings.TrimSpace(list[i])
		}
		return ""
	}
	hm := l.digits(fmt.Sprintf("%02d:%02d", t.Hour(), t.Minute()))
	return l.T("format.datetime",
		"weekday", name(wd, int(t.Weekday())), "day", l.Number(t.Day()),
		"month", name(mo, int(t.Month())-1), "year", l.digits(strconv.Itoa(t.Year())), "time", hm)
}

// Digits writes each ASCII digit of s in the language's digits, with no
// grouping: a date and a clock such as "2026-06-01 10:00:00.000 UTC".
func (l *Locale) Digits(s string) string { return l.digits(s) }

// digits writes each ASCII digit of s in the language's digits, with no
// grouping: a year, a clock.
func (l *Locale) digits(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= '0' && r <= '9' {
			b.WriteString(l.num.digits[r-'0'])
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// JSON is the messages whose keys start with prefix, for a page's script:
// texts as strings, plural texts as objects by CLDR form name, which the
// browser's Intl.PluralRules picks from.
func (l *Locale) JSON(prefix string) []byte {
	out := make(map[string]any)
	for key, m := range l.msgs {
		if !strings.HasPrefix(key, prefix) {
			continue
		}
		if !m.Plural {
			out[key] = m.Forms[plural.Other]
			continue
		}
		forms := make(map[string]string)
		for f, text := range m.Forms {
			if text != "" {
				forms[FormName(plural.Form(f))] = text
			}
		}
		out[key] = forms
	}
	b, _ := json.Marshal(out)
	return b
}
