package i18n

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"golang.org/x/text/feature/plural"
	"golang.org/x/text/language"
)

// A catalog is one JSON file per language named by its BCP 47 tag
// (de.json, pt-BR.json). A value is a text, or an object of texts by CLDR
// plural form ("zero", "one", "two", "few", "many", "other") for a text
// about a number. Placeholders are written {name}: {n} is the number a
// plural text is about.
//
// English is the reference. A catalog is complete when it has every key
// English has, no key English lacks, the same placeholders, and, for a
// plural text, every form its language's whole numbers take (from CLDR's
// rules as golang.org/x/text has them) and "other".

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
	name := strings.TrimSuffix(path.Base(filepath.ToSlash(file)), ".json")
	tag, err := language.Parse(name)
	if err != nil || !strings.HasSuffix(file, ".json") {
		return nil, fmt.Errorf("messages: %s: the file's name must be a language tag and .json, such as de.json or pt-BR.json", file)
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
func (c *Catalog) Check(ref *Catalog) error { return c.check(ref, false, false) }

// CheckOverride is Check for c laid over ref in ref's own language (an
// operator's English over the built-in one): c may leave keys out and add
// keys of its own, but a key ref has keeps its shape and its placeholders.
func (c *Catalog) CheckOverride(ref *Catalog) error { return c.check(ref, true, true) }

func (c *Catalog) check(ref *Catalog, partial, addsKeys bool) error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("messages: %s: key %q: "+format, append([]any{c.File, key}, args...)...))
	}
	if !partial {
		for _, key := range sortedKeys(ref.Msgs) {
			if _, ok := c.Msgs[key]; !ok {
				bad(key, "missing (%s has it)", ref.File)
			}
		}
	}
	need := NeededForms(c.Tag)
	for _, key := range sortedKeys(c.Msgs) {
		m := c.Msgs[key]
		r, ok := ref.Msgs[key]
		if !ok {
			if !addsKeys {
				bad(key, "not a key of %s", ref.File)
			}
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
			// A form may leave the number out ("one seat", "one second"), but may bring
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

// Overlay is base with over's messages over it: a key of over replaces
// base's, and a new key joins it. Errors about the result name over's file.
func Overlay(base, over *Catalog) *Catalog {
	c := &Catalog{File: over.File, Tag: base.Tag, Msgs: maps.Clone(base.Msgs)}
	maps.Copy(c.Msgs, over.Msgs)
	return c
}

// ParseFS parses every *.json catalog in dir of fsys, by tag string,
// without checking them against each other. Files are named dir/name.
func ParseFS(fsys fs.FS, dir string) (map[string]*Catalog, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	return parseDir(entries, func(name string) (string, []byte, error) {
		file := path.Join(dir, name)
		data, err := fs.ReadFile(fsys, file)
		return file, data, err
	})
}

// ParseOSDir is ParseFS for a directory of the operating system's, such as
// one an operator names in a setting: files are named by their path there,
// and a directory with no catalog is refused.
func ParseOSDir(dir string) (map[string]*Catalog, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("messages: %w", err)
	}
	out, err := parseDir(entries, func(name string) (string, []byte, error) {
		file := filepath.Join(dir, name)
		data, err := os.ReadFile(file)
		if err != nil {
			return file, nil, fmt.Errorf("messages: %w", err)
		}
		return file, data, nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("messages: %s holds no catalog (<language>.json)", dir)
	}
	return out, nil
}

// parseDir parses the *.json files among entries, which read names (for
// errors) and reads. Two files of one language are refused.
func parseDir(entries []fs.DirEntry, read func(name string) (file string, data []byte, err error)) (map[string]*Catalog, error) {
	out := make(map[string]*Catalog, len(entries))
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		file, data, err := read(e.Name())
		if err != nil {
			return nil, err
		}
		c, err := Parse(file, data)
		if err != nil {
			return nil, err
		}
		if prev, dup := out[c.Tag.String()]; dup {
			return nil, fmt.Errorf("messages: %s and %s are the same language", prev.File, file)
		}
		out[c.Tag.String()] = c
	}
	return out, nil
}

// ReadDir reads every *.json catalog in dir of fsys, by tag string, and
// checks each against the reference (en.json), which must be among them.
func ReadDir(fsys fs.FS, dir string) (map[string]*Catalog, error) {
	out, err := ParseFS(fsys, dir)
	if err != nil {
		return nil, err
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
