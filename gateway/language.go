package gateway

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"unicode"

	"golang.org/x/text/feature/plural"
	"golang.org/x/text/language"
	"golang.org/x/text/unicode/bidi"
)

// locale is one language, ready for fans: its messages and everything worded
// from them that a poll or a live update needs, built once when the handler
// is provisioned, so that wording a status is a few map lookups.
type locale struct {
	tag  language.Tag
	code string // the tag as pages write it: lang="zh-Hans"
	dir  string // "ltr" or "rtl"
	name string // the language's own name, for the menu
	msgs map[string]message
	num  numberFormat
	// texts are fanShapes worded in this language.
	texts map[string]fanText
}

func newLocale(c *catalog) *locale {
	l := &locale{tag: c.tag, code: c.tag.String(), msgs: c.msgs, num: newNumberFormat(c.tag)}
	l.name = l.text("language.name")
	l.dir = directionOf(l.name)
	l.texts = make(map[string]fanText, len(fanShapes))
	for v, shape := range fanShapes {
		t := shape
		t.Headline = l.text(v + ".headline")
		t.Lead = l.text(v + ".lead")
		if shape.PositionLabel != "" {
			t.PositionLabel = l.text(shape.PositionLabel)
		}
		if shape.NoETA != "" {
			t.NoETA = l.text(shape.NoETA)
		}
		l.texts[v] = t
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

// text is a message that is not about a number. Provisioning checked that
// every key the room uses is in every catalog it offers.
func (l *locale) text(key string) string {
	return l.msgs[key].forms[plural.Other]
}

// count is a plural message about n, with {n} written in the language's
// digits.
func (l *locale) count(key string, n uint64) string {
	m := l.msgs[key]
	text := m.forms[plural.Other]
	if m.plural {
		i := int(min(n, 1<<30)) // the rules look at the last digits; very large numbers are "other" or "many" alike
		if n > 1<<30 {
			i = 1000000
		}
		if t := m.forms[plural.Cardinal.MatchPlural(l.tag, i, 0, 0, 0, 0)]; t != "" {
			text = t
		}
	}
	return strings.Replace(text, "{n}", l.num.format(n), 1)
}

// fill replaces each {name} in text by its value.
func fill(text string, pairs ...string) string {
	for i := 0; i+1 < len(pairs); i += 2 {
		text = strings.ReplaceAll(text, "{"+pairs[i]+"}", pairs[i+1])
	}
	return text
}

// Values of the language setting.
const languageAuto = "auto"

// langSet is the languages a room offers its fans, and how one is chosen.
type langSet struct {
	// locales are those offered, the room's default first.
	locales []*locale
	byCode  map[string]*locale
	matcher language.Matcher
	// fixed: the language setting names one, which every fan reads unless
	// they choose another from the page's menu.
	fixed  bool
	cookie string
	// remember sets the cookie that keeps a fan's choice, with the room's
	// cookie attributes (Handler.setCookie); nil in tests of the choice
	// alone, which then use plain Lax cookies.
	remember func(w http.ResponseWriter, r *http.Request, name, value string, maxAge int)
}

// newLangSet builds the offered languages from the built-in catalogs, the
// operator's (messages), the language setting (auto or a tag) and the list
// of languages (empty: every catalog). Every error names the setting, and
// for a catalog the file and the key.
func newLangSet(lang string, offered []string, messagesDir, cookie string) (*langSet, error) {
	builtin, err := builtinCatalogs()
	if err != nil {
		return nil, err
	}
	all := make(map[string]*catalog, len(builtin))
	for code, c := range builtin {
		all[code] = c
	}
	var own map[string]*catalog
	if messagesDir != "" {
		if own, err = readMessagesDir(messagesDir); err != nil {
			return nil, err
		}
		for code, c := range own {
			if base, ok := all[code]; ok {
				all[code] = overlay(base, c)
			} else {
				all[code] = c
			}
		}
	}
	// Which languages, in which order: the default first.
	var codes []string
	if len(offered) > 0 {
		for _, s := range offered {
			tag, err := language.Parse(s)
			if err != nil {
				return nil, fmt.Errorf("languages: %q is not a language tag", s)
			}
			if all[tag.String()] == nil {
				return nil, fmt.Errorf("languages: no catalog for %s (built in: %s; add <tag>.json with the messages setting)", tag, strings.Join(sortedKeys(builtin), ", "))
			}
			if !containsString(codes, tag.String()) {
				codes = append(codes, tag.String())
			}
		}
	} else {
		codes = append(codes, referenceLanguage)
		for _, code := range sortedKeys(all) {
			if code != referenceLanguage {
				codes = append(codes, code)
			}
		}
	}
	fixed := false
	if lang != "" && lang != languageAuto {
		tag, err := language.Parse(lang)
		if err != nil {
			return nil, fmt.Errorf("language: %q is neither auto nor a language tag", lang)
		}
		i := indexString(codes, tag.String())
		if i < 0 {
			return nil, fmt.Errorf("language: %s is not among the languages offered (%s)", tag, strings.Join(codes, " "))
		}
		codes = append([]string{codes[i]}, append(codes[:i:i], codes[i+1:]...)...)
		fixed = true
	}
	// Every catalog offered stands beside the reference: English, with
	// what the operator's English adds or changes.
	ref := all[referenceLanguage]
	var errs []error
	if own[referenceLanguage] != nil {
		if err := own[referenceLanguage].check(builtin[referenceLanguage], true, true); err != nil {
			errs = append(errs, err)
		}
	}
	for _, code := range codes {
		c := all[code]
		if code == referenceLanguage {
			continue
		}
		if messagesDir != "" && own[code] == nil {
			// Checked for the keys the operator's English may add.
			c = &catalog{file: filepath.Join(messagesDir, code+".json") + " (not given)", tag: c.tag, msgs: c.msgs}
		}
		if err := c.check(ref, false, false); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	ls := &langSet{byCode: make(map[string]*locale, len(codes)), fixed: fixed, cookie: cookie}
	tags := make([]language.Tag, 0, len(codes))
	for _, code := range codes {
		l := newLocale(all[code])
		ls.locales = append(ls.locales, l)
		ls.byCode[l.code] = l
		tags = append(tags, l.tag)
	}
	ls.matcher = language.NewMatcher(tags)
	return ls, nil
}

func indexString(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

func containsString(list []string, s string) bool { return indexString(list, s) >= 0 }

// def is the room's default language.
func (ls *langSet) def() *locale { return ls.locales[0] }

// lookup finds an offered language by the code a page sent back (its own
// polls and live connection); anything else reads the default.
func (ls *langSet) lookup(code string) *locale {
	if l, ok := ls.byCode[code]; ok {
		return l
	}
	return ls.def()
}

// match finds the offered language closest to a tag a fan asked for by name
// (the menu, the cookie), or nil.
func (ls *langSet) match(s string) *locale {
	if s == "" {
		return nil
	}
	if l, ok := ls.byCode[s]; ok {
		return l
	}
	tag, err := language.Parse(s)
	if err != nil {
		return nil
	}
	_, i, conf := ls.matcher.Match(tag)
	if conf < language.High {
		return nil
	}
	return ls.locales[i]
}

// choose picks the language of a page for r: the fan's own choice from the
// menu (?lang=, which it remembers in a cookie), then the one they chose
// before (the cookie), then the room's fixed language, then the browser's
// Accept-Language through CLDR's language matcher (de-CH, fr;q=0.8 reads
// German), and the room's default when nothing matches. A nil w (a JSON
// answer) remembers nothing.
func (ls *langSet) choose(w http.ResponseWriter, r *http.Request) *locale {
	if q := r.URL.Query().Get("lang"); q != "" && w != nil {
		if l := ls.match(q); l != nil {
			if ls.remember != nil {
				ls.remember(w, r, ls.cookie, l.code, 365*24*3600)
			} else {
				http.SetCookie(w, &http.Cookie{Name: ls.cookie, Value: l.code, Path: "/", MaxAge: 365 * 24 * 3600,
					HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteLaxMode})
			}
			return l
		}
	}
	if c, err := r.Cookie(ls.cookie); err == nil {
		if l := ls.match(c.Value); l != nil {
			return l
		}
	}
	if ls.fixed || len(ls.locales) == 1 {
		return ls.def()
	}
	return ls.fromHeader(r.Header.Get("Accept-Language"))
}

// fromHeader matches an Accept-Language header.
func (ls *langSet) fromHeader(accept string) *locale {
	if accept == "" {
		return ls.def()
	}
	tags, _, err := language.ParseAcceptLanguage(accept)
	if err != nil || len(tags) == 0 {
		return ls.def()
	}
	_, i, conf := ls.matcher.Match(tags...)
	if conf == language.No {
		return ls.def()
	}
	return ls.locales[i]
}

// langOption is one entry of the page's language menu.
type langOption struct {
	Code, Name, Dir, URL string
	Current              bool
}

// menu lists the offered languages for the page at u, with links that
// choose each.
func (ls *langSet) menu(u *url.URL, current *locale) []langOption {
	if len(ls.locales) < 2 {
		return nil
	}
	q := u.Query()
	out := make([]langOption, 0, len(ls.locales))
	for _, l := range ls.locales {
		q.Set("lang", l.code)
		out = append(out, langOption{Code: l.code, Name: l.name, Dir: l.dir, URL: u.Path + "?" + q.Encode(), Current: l == current})
	}
	return out
}
