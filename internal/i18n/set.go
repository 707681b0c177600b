package i18n

import (
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
)

// Set is the languages offered, the reference first, and how one is chosen
// for a request. Safe for concurrent use.
type Set struct {
	Locales []*Locale
	matcher *Matcher
	// Cookie remembers a fan's choice from the menu.
	Cookie string
}

// NewSet reads and checks the catalogs in dir of fsys.
func NewSet(fsys fs.FS, dir, cookie string) (*Set, error) {
	cats, err := ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	s := &Set{Cookie: cookie}
	codes := append([]string{Reference}, sortedKeys(cats)...)
	seen := make(map[string]bool, len(cats))
	for _, code := range codes {
		if seen[code] {
			continue
		}
		seen[code] = true
		l := NewLocale(cats[code])
		if l.Name == "" {
			return nil, fmt.Errorf("messages: %s: no language.name", cats[code].File)
		}
		s.Locales = append(s.Locales, l)
	}
	s.matcher = NewMatcher(s.Locales)
	return s, nil
}

// Default is the reference language, read when nothing else matches.
func (s *Set) Default() *Locale { return s.Locales[0] }

// match finds the offered language closest to a tag asked for by name (the
// menu, the cookie), or nil.
func (s *Set) match(v string) *Locale {
	if i := s.matcher.Match(v); i >= 0 {
		return s.Locales[i]
	}
	return nil
}

// Choose picks the language of a page: the fan's choice from the menu
// (?lang=, remembered in the cookie when w is not nil), then the cookie,
// then Accept-Language through CLDR's matcher (de-CH, fr;q=0.8 reads
// German), and English when nothing matches.
func (s *Set) Choose(w http.ResponseWriter, r *http.Request) *Locale {
	if l := s.match(r.URL.Query().Get("lang")); l != nil {
		if w != nil {
			RememberChoice(w, r, s.Cookie, l.Code)
		}
		return l
	}
	if c, err := r.Cookie(s.Cookie); err == nil {
		if l := s.match(c.Value); l != nil {
			return l
		}
	}
	return s.Locales[s.matcher.Accept(r.Header.Get("Accept-Language"))]
}

// RememberChoice keeps the language a fan picked from the menu in the cookie
// for a year, so their next page opens in it.
func RememberChoice(w http.ResponseWriter, r *http.Request, cookie, code string) {
	http.SetCookie(w, &http.Cookie{Name: cookie, Value: code, Path: "/", MaxAge: 365 * 24 * 3600,
		HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteLaxMode})
}

// Option is one entry of a page's language menu.
type Option struct {
	Code, Name, Dir, URL string
	Current              bool
}

// Menu lists the offered languages for the page at u, each a link that
// chooses it.
func (s *Set) Menu(u *url.URL, current *Locale) []Option {
	return MenuOf(u, s.Locales, func(l *Locale) *Locale { return l }, current)
}

// MenuOf is Menu over any list of locales (the gateway wraps each with its
// room's texts); of reads the Locale of one.
func MenuOf[T any](u *url.URL, locales []T, of func(T) *Locale, current *Locale) []Option {
	q := u.Query()
	out := make([]Option, 0, len(locales))
	for _, wrapped := range locales {
		l := of(wrapped)
		q.Set("lang", l.Code)
		out = append(out, Option{Code: l.Code, Name: l.Name, Dir: l.Dir, URL: u.Path + "?" + q.Encode(), Current: l == current})
	}
	return out
}
