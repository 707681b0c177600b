package i18n

import "golang.org/x/text/language"

// Matcher finds, among the languages offered (in order, the default first),
// the one a page's code, a fan's choice or a browser asks for. It answers
// with an index into that order, so that a caller may keep its own words
// beside each Locale. Built once; safe for concurrent use.
type Matcher struct {
	byCode  map[string]int
	matcher language.Matcher
}

// NewMatcher matches among locales, the default first.
func NewMatcher(locales []*Locale) *Matcher {
	m := &Matcher{byCode: make(map[string]int, len(locales))}
	tags := make([]language.Tag, 0, len(locales))
	for i, l := range locales {
		m.byCode[l.Code] = i
		tags = append(tags, l.Tag)
	}
	m.matcher = language.NewMatcher(tags)
	return m
}

// Lookup finds an offered language by its exact code, as a page sends it
// back (lang="zh-Hans").
func (m *Matcher) Lookup(code string) (int, bool) {
	i, ok := m.byCode[code]
	return i, ok
}

// Match finds the offered language closest to a tag asked for by name (a
// menu, a cookie): its code, or one CLDR's matcher holds close with high
// confidence; -1 when none is.
func (m *Matcher) Match(v string) int {
	if v == "" {
		return -1
	}
	if i, ok := m.byCode[v]; ok {
		return i
	}
	tag, err := language.Parse(v)
	if err != nil {
		return -1
	}
	_, i, conf := m.matcher.Match(tag)
	if conf < language.High {
		return -1
	}
	return i
}

// Accept matches an Accept-Language header through CLDR's matcher (de-CH,
// fr;q=0.8 reads German); the default, 0, when nothing matches.
func (m *Matcher) Accept(header string) int {
	if header == "" {
		return 0
	}
	tags, _, err := language.ParseAcceptLanguage(header)
	if err != nil || len(tags) == 0 {
		return 0
	}
	_, i, conf := m.matcher.Match(tags...)
	if conf == language.No {
		return 0
	}
	return i
}
