package gateway

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"golang.org/x/text/language"

	"github.com/foyer-dev/foyer/internal/i18n"
	"github.com/foyer-dev/foyer/static"
)

// The words a fan reads come from message catalogs (package i18n): the
// built-in ones, embedded from static/messages, and an operator's, given
// with the messages setting, which add languages or override built-in
// words. What an operator gives is checked against English when the handler
// is provisioned, so that a fan never reads a blank or a raw key.

// locale is one language, ready for fans: its messages, and fanShapes
// worded in it, built once when the handler is provisioned, so that wording
// a status for a poll or a live update is a few map lookups.
type locale struct {
	*i18n.Locale
	// texts are fanShapes worded in this language.
	texts map[string]fanText
}

func newLocale(c *i18n.Catalog) *locale {
	l := &locale{Locale: i18n.NewLocale(c), texts: make(map[string]fanText, len(fanShapes))}
	for v, shape := range fanShapes {
		t := shape
		t.Headline = l.T(v + ".headline")
		t.Lead = l.T(v + ".lead")
		if shape.PositionLabel != "" {
			t.PositionLabel = l.T(shape.PositionLabel)
		}
		if shape.NoETA != "" {
			t.NoETA = l.T(shape.NoETA)
		}
		l.texts[v] = t
	}
	return l
}

// Values of the language setting.
const languageAuto = "auto"

// langSet is the languages a room offers its fans, and how one is chosen.
type langSet struct {
	// locales are those offered, the room's default first.
	locales []*locale
	matcher *i18n.Matcher
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
	all := maps.Clone(builtin)
	var own map[string]*i18n.Catalog
	if messagesDir != "" {
		if own, err = i18n.ParseOSDir(messagesDir); err != nil {
			return nil, err
		}
		for code, c := range own {
			if base, ok := all[code]; ok {
				all[code] = i18n.Overlay(base, c)
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
				return nil, fmt.Errorf("languages: no catalog for %s (built in: %s; add <tag>.json with the messages setting)", tag, strings.Join(slices.Sorted(maps.Keys(builtin)), ", "))
			}
			if !containsString(codes, tag.String()) {
				codes = append(codes, tag.String())
			}
		}
	} else {
		codes = append(codes, i18n.Reference)
		for _, code := range slices.Sorted(maps.Keys(all)) {
			if code != i18n.Reference {
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
	ref := all[i18n.Reference]
	var errs []error
	if own[i18n.Reference] != nil {
		if err := own[i18n.Reference].CheckOverride(builtin[i18n.Reference]); err != nil {
			errs = append(errs, err)
		}
	}
	for _, code := range codes {
		c := all[code]
		if code == i18n.Reference {
			continue
		}
		if messagesDir != "" && own[code] == nil {
			// Checked for the keys the operator's English may add.
			c = &i18n.Catalog{File: filepath.Join(messagesDir, code+".json") + " (not given)", Tag: c.Tag, Msgs: c.Msgs}
		}
		if err := c.Check(ref); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	ls := &langSet{fixed: fixed, cookie: cookie}
	plain := make([]*i18n.Locale, 0, len(codes))
	for _, code := range codes {
		l := newLocale(all[code])
		ls.locales = append(ls.locales, l)
		plain = append(plain, l.Locale)
	}
	ls.matcher = i18n.NewMatcher(plain)
	return ls, nil
}

// builtinCatalogs reads the catalogs embedded in the binary, by tag string.
var builtinCatalogs = sync.OnceValues(func() (map[string]*i18n.Catalog, error) {
	out, err := i18n.ParseFS(static.Messages, static.MessagesDir)
	if err != nil {
		return nil, err
	}
	if out[i18n.Reference] == nil {
		return nil, errors.New("messages: no " + i18n.Reference + ".json among the built-in catalogs")
	}
	return out, nil
})

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
	if i, ok := ls.matcher.Lookup(code); ok {
		return ls.locales[i]
	}
	return ls.def()
}

// Message is the room's wording of a message catalog key (static/messages,
// overlaid by the operator's messages) in the offered language code names,
// as the page's lang attribute writes it, or in the room's default language
// when the room offers none such; placeholders ({s}, {when}, ...) are left as
// written, and a key no catalog has is returned as itself. It is for a
// program that serves pages of its own beside the room's, such as an origin
// saying that a session ended, and wants them in the words the room's fans
// read; the page of a variant says "<variant>.headline" as its heading. The
// handler must be provisioned (by Caddy, or NewStandalone).
func (h *Handler) Message(code, key string) string { return h.langs.lookup(code).T(key) }

// match finds the offered language closest to a tag a fan asked for by name
// (the menu, the cookie), or nil.
func (ls *langSet) match(s string) *locale {
	if i := ls.matcher.Match(s); i >= 0 {
		return ls.locales[i]
	}
	return nil
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
				ls.remember(w, r, ls.cookie, l.Code, 365*24*3600)
			} else {
				i18n.RememberChoice(w, r, ls.cookie, l.Code)
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
	return ls.locales[ls.matcher.Accept(accept)]
}

// langOption is one entry of the page's language menu.
type langOption = i18n.Option

// menu lists the offered languages for the page at u, with links that
// choose each.
func (ls *langSet) menu(u *url.URL, current *locale) []langOption {
	if len(ls.locales) < 2 {
		return nil
	}
	var cur *i18n.Locale
	if current != nil {
		cur = current.Locale
	}
	return i18n.MenuOf(u, ls.locales, func(l *locale) *i18n.Locale { return l.Locale }, cur)
}
