package i18n

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"

	"golang.org/x/text/feature/plural"
	"golang.org/x/text/language"
)

// Reference is the language every other catalog is checked against.
const Reference = "en"

// Message is one entry of a catalog: one text, or one per plural form.
type Message struct {
	Forms  [plural.Many + 1]string // by plural.Form; Forms[plural.Other] always set
	Plural bool
}

// Catalog is one language's messages, as read from one file.
type Catalog struct {
	File string
	Tag  language.Tag
	Msgs map[string]Message
}

var formNames = map[string]plural.Form{
	"other": plural.Other, "zero": plural.Zero, "one": plural.One,
	"two": plural.Two, "few": plural.Few, "many": plural.Many,
}

// FormName is CLDR's name of a plural form: "one", "few", "other".
func FormName(f plural.Form) string {
	for name, g := range formNames {
		if g == f {
			return name
		}
	}
	return "other"
}

// Parse reads one catalog file: a JSON object whose values are texts, or
// objects of texts by CLDR plural form. file (its base name is the language
// tag) names it in errors.
func Parse(file string, data []byte) (*Catalog, error) {
	name := strings.TrimSuffix(path.Base(file), ".json")
	tag, err := language.Parse(name)
	if err != nil || !strings.HasSuffix(file, ".json") {
		return nil, fmt.Errorf("messages: %s: the file's name must be a language tag and .json, such as de.json", file)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("messages: %s: %v", file, err)
	}
	c := &Catalog{File: file, Tag: tag, Msgs: make(map[string]Message, len(raw))}
	for key, v := range raw {
		var m Message
		var text string
		if err := json.Unmarshal(v, &text); err == nil {
			m.Forms[plural.Other] = text
		} else {
			var forms map[string]string
			if err := json.Unmarshal(v, &forms); err != nil {
				return nil, fmt.Errorf("messages: %s: key %q: must be a text or an object of texts by plural form", file, key)
			}
			m.Plural = true
			for fname, text := range forms {
				f, ok := formNames[fname]
				if !ok {
					return nil, fmt.Errorf("messages: %s: key %q: %q is not a plural form (zero, one, two, few, many, other)", file, key, fname)
				}
				m.Forms[f] = text
			}
		}
		c.Msgs[key] = m
	}
	return c, nil
}

// NeededForms are the plural forms a language's whole numbers take, by
// CLDR's rules in golang.org/x/text, and "other", which every plural text has.
func NeededForms(tag language.Tag) []plural.Form {
	seen := map[plural.Form]bool{plural.Other: true}
	for i := range 1000 {
		seen[plural.Cardinal.MatchPlural(tag, i, 0, 0, 0, 0)] = true
	}
	for _, i := range []int{1000000, 2000000, 1000001} {
		seen[plural.Cardinal.MatchPlural(tag, i, 0, 0, 0, 0)] = true
	}
	forms := slices.Collect(maps.Keys(seen))
	slices.Sort(forms)
	return forms
}

var placeholderRE = regexp.MustCompile(`\{[a-z_]+\}`)

func placeholders(s string) []string {
	p := placeholderRE.FindAllString(s, -1)
	slices.Sort(p)
	return slices.Compact(p)
}

// Check reports what keeps c from standing beside ref: a key missing, a key
// ref lacks, a text where ref has plural forms or the reverse, a plural form
// the language needs, or placeholders other than ref's. Errors name the
// file and the key.
func (c *Catalog) Check(ref *Catalog) error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("messages: %s: key %q: "+format, append([]any{c.File, key}, args...)...))
	}
	for _, key := range sortedKeys(ref.Msgs) {
		if _, ok := c.Msgs[key]; !ok {
			bad(key, "missing (%s has it)", ref.File)
		}
	}
	need := NeededForms(c.Tag)
	for _, key := range sortedKeys(c.Msgs) {
		m := c.Msgs[key]
		r, ok := ref.Msgs[key]
		if !ok {
			bad(key, "not a key of %s", ref.File)
			continue
		}
		if m.Plural != r.Plural {
			if r.Plural {
				bad(key, "must be an object of texts by plural form, as in %s", ref.File)
			} else {
				bad(key, "must be one text, as in %s", ref.File)
			}
			continue
		}
		want := placeholders(strings.Join(r.Forms[:], " "))
		if !m.Plural {
			if m.Forms[plural.Other] == "" {
				bad(key, "is empty")
			} else if got := placeholders(m.Forms[plural.Other]); !slices.Equal(got, want) {
				bad(key, "has placeholders %v, want %v", got, want)
			}
			continue
		}
		for _, f := range need {
			if m.Forms[f] == "" {
				bad(key, "lacks the plural form %q, which %s needs", FormName(f), c.Tag)
			}
		}
		for f, text := range m.Forms {
			// A form may leave the number out ("one seat"), but may bring
			// no placeholder of its own.
			for _, p := range placeholders(text) {
				if !slices.Contains(want, p) {
					bad(key, "form %q has the placeholder %s, which %s's has not", FormName(plural.Form(f)), p, ref.File)
				}
			}
		}
	}
	return errors.Join(errs...)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := slices.Collect(maps.Keys(m))
	sort.Strings(keys)
	return keys
}

// ReadDir reads every *.json catalog in dir of fsys, by tag string, and
// checks each against the reference (en.json), which must be among them.
func ReadDir(fsys fs.FS, dir string) (map[string]*Catalog, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	out := make(map[string]*Catalog, len(entries))
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		data, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		c, err := Parse(path.Join(dir, e.Name()), data)
		if err != nil {
			return nil, err
		}
		out[c.Tag.String()] = c
	}
	ref := out[Reference]
	if ref == nil {
		return nil, fmt.Errorf("messages: no %s.json in %s", Reference, dir)
	}
	var errs []error
	for _, code := range sortedKeys(out) {
		if code != Reference {
			errs = append(errs, out[code].Check(ref))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}
