package i18n

import (
	"fmt"
	"io/fs"
	"net/http"
	"net/url"

	"golang.org/x/text/language"
)

// Set is the languages offered, the reference first, and how one is chosen
// for a request. Safe for concurrent use.
type Set struct {
	Locales []*Locale
	byCode  map[string]*Locale
	matcher language.Matcher
	// Cookie remembers a fan's choice from the menu.
	Cookie string
}

// NewSet reads and checks the catalogs in dir of fsys.
func NewSet(fsys fs.FS, dir, cookie string) (*Set, error) {
	cats, err := ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	s := &Set{byCode: make(map[string]*Locale, len(cats)), Cookie: cookie}
	codes := append([]string{Reference}, sortedKeys(cats)...)
	tags := make([]language.Tag, 0, len(cats))
	for _, code := range codes {
		if s.byCode[code] != nil {
			continue
		}
		l := NewLocale(cats[code])
		if l.Name == "" {
			return nil, fmt.Errorf("messages: %s: no language.name", cats[code].File)
		}
		s.Locales = append(s.Locales, l)
		s.byCode[code] = l
		tags = append(tags, l.Tag)
	}
	s.matcher = language.NewMatcher(tags)
	return s, nil
}

// Default is the reference language, read when nothing else matches.
func (s *Set) Default() *Locale { return s.Locales[0] }

// match finds the offered language closest to a tag asked for by name (the
// menu, the cookie), or nil.
func (s *Set) match(v string) *Locale {
	if v == "" {
		return nil
	}
	if l, ok := s.byCode[v]; ok {
		return l
	}
	tag, err := language.Parse(v)
	if err != nil {
		return nil
	}
	_, i, conf := s.matcher.Match(tag)
	if conf < language.High {
		return nil
	}
	return s.Locales[i]
}

// Choose picks the language of a page: the fan's choice from the menu
// (?lang=, remembered in the cookie when w is not nil), then the cookie,
// then Accept-Language through CLDR's matcher (de-CH, fr;q=0.8 reads
// German), and English when nothing matches.
func (s *Set) Choose(w http.ResponseWriter, r *http.Request) *Locale {
	if l := s.match(r.URL.Query().Get("lang")); l != nil {
		if w != nil {
			http.SetCookie(w, &http.Cookie{Name: s.Cookie, Value: l.Code, Path: "/", MaxAge: 365 * 24 * 3600,
				HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteLaxMode})
		}
		return l
	}
	if c, err := r.Cookie(s.Cookie); err == nil {
		if l := s.match(c.Value); l != nil {
			return l
		}
	}
	tags, _, err := language.ParseAcceptLanguage(r.Header.Get("Accept-Language"))
	if err != nil || len(tags) == 0 {
		return s.Default()
	}
	_, i, conf := s.matcher.Match(tags...)
	if conf == language.No {
		return s.Default()
	}
	return s.Locales[i]
}

// Option is one entry of a page's language menu.
type Option struct {
	Code, Name, Dir, URL string
	Current              bool
}

// Menu lists the offered languages for the page at u, each a link that
// chooses it.
func (s *Set) Menu(u *url.URL, current *Locale) []Option {
	q := u.Query()
	out := make([]Option, 0, len(s.Locales))
	for _, l := range s.Locales {
		q.Set("lang", l.Code)
		out = append(out, Option{Code: l.Code, Name: l.Name, Dir: l.Dir, URL: u.Path + "?" + q.Encode(), Current: l == current})
	}
	return out
}
