package gateway

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
	"sync"

	"golang.org/x/text/feature/plural"
	"golang.org/x/text/language"

	"github.com/foyer-dev/foyer/static"
)

// Message catalogs: every word a fan reads from the room, one JSON file per
// language named by its BCP 47 tag (static/messages/de.json). A value is a
// text, or an object of texts by CLDR plural form ("zero", "one", "two",
// "few", "many", "other") for a text about a number. Placeholders are
// written {name}: {n} is the number a plural text is about.
//
// English is the reference. A catalog is complete when it has every key
// English has, no key English lacks, the same placeholders, and, for a
// plural text, every form its language's whole numbers take (from CLDR's
// rules as golang.org/x/text has them) and "other". Operators add or
// override catalogs with the messages setting; what they give is checked
// the same way when the handler is provisioned, so a fan never reads a
// blank or a raw key.

// referenceLanguage is the catalog every other is checked against.
const referenceLanguage = "en"

// message is one entry of a catalog: one text, or one per plural form.
type message struct {
	forms  [plural.Many + 1]string // by plural.Form; forms[plural.Other] always set
	plural bool
}

// catalog is one language's messages, as read from one file.
type catalog struct {
	file string
	tag  language.Tag
	msgs map[string]message
}

var pluralFormNames = map[string]plural.Form{
	"other": plural.Other, "zero": plural.Zero, "one": plural.One,
	"two": plural.Two, "few": plural.Few, "many": plural.Many,
}

func formName(f plural.Form) string {
	for name, g := range pluralFormNames {
		if g == f {
			return name
		}
	}
	return "other"
}

// parseCatalog reads one catalog file; file names it in errors.
func parseCatalog(file string, data []byte) (*catalog, error) {
	name := strings.TrimSuffix(path.Base(filepath.ToSlash(file)), ".json")
	tag, err := language.Parse(name)
	if err != nil || !strings.HasSuffix(file, ".json") {
		return nil, fmt.Errorf("messages: %s: the file's name must be a language tag and .json, such as de.json or pt-BR.json", file)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("messages: %s: %v", file, err)
	}
	c := &catalog{file: file, tag: tag, msgs: make(map[string]message, len(raw))}
	for key, v := range raw {
		var m message
		var text string
		if err := json.Unmarshal(v, &text); err == nil {
			m.forms[plural.Other] = text
		} else {
			var forms map[string]string
			if err := json.Unmarshal(v, &forms); err != nil {
				return nil, fmt.Errorf("messages: %s: key %q: must be a text or an object of texts by plural form", file, key)
			}
			m.plural = true
			for fname, text := range forms {
				f, ok := pluralFormNames[fname]
				if !ok {
					return nil, fmt.Errorf("messages: %s: key %q: %q is not a plural form (zero, one, two, few, many, other)", file, key, fname)
				}
				m.forms[f] = text
			}
		}
		c.msgs[key] = m
	}
	return c, nil
}

// neededForms are the plural forms a language's whole numbers take, by CLDR's
// rules in golang.org/x/text, and "other", which every plural text has.
func neededForms(tag language.Tag) []plural.Form {
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

// check reports what keeps c from standing beside ref: a key missing (unless
// partial: an operator's overrides of a built-in catalog), a key ref lacks
// (unless addsKeys: the operator's English, which may add words of their own),
// a text where ref has plural forms or the reverse, a plural form the
// language needs, or placeholders other than ref's. Errors name the file and
// the key.
func (c *catalog) check(ref *catalog, partial, addsKeys bool) error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("messages: %s: key %q: "+format, append([]any{c.file, key}, args...)...))
	}
	if !partial {
		for _, key := range sortedKeys(ref.msgs) {
			if _, ok := c.msgs[key]; !ok {
				bad(key, "missing (%s has it)", ref.file)
			}
		}
	}
	need := neededForms(c.tag)
	for _, key := range sortedKeys(c.msgs) {
		m := c.msgs[key]
		r, ok := ref.msgs[key]
		if !ok {
			if !addsKeys {
				bad(key, "not a key of %s", ref.file)
			}
			continue
		}
		if m.plural != r.plural {
			if r.plural {
				bad(key, "must be an object of texts by plural form, as in %s", ref.file)
			} else {
				bad(key, "must be one text, as in %s", ref.file)
			}
			continue
		}
		want := placeholders(strings.Join(r.forms[:], " "))
		if !m.plural {
			if m.forms[plural.Other] == "" {
				bad(key, "is empty")
			} else if got := placeholders(m.forms[plural.Other]); !slices.Equal(got, want) {
				bad(key, "has placeholders %v, want %v", got, want)
			}
			continue
		}
		for _, f := range need {
			if m.forms[f] == "" {
				bad(key, "lacks the plural form %q, which %s needs", formName(f), c.tag)
			}
		}
		for f, text := range m.forms {
			// A form may leave the number out ("one second"), but may
			// bring no placeholder of its own.
			for _, p := range placeholders(text) {
				if !slices.Contains(want, p) {
					bad(key, "form %q has the placeholder %s, which %s's has not", formName(plural.Form(f)), p, ref.file)
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

// builtinCatalogs reads the catalogs embedded in the binary, by tag string.
var builtinCatalogs = sync.OnceValues(func() (map[string]*catalog, error) {
	entries, err := fs.ReadDir(static.Messages, static.MessagesDir)
	if err != nil {
		return nil, err
	}
	out := make(map[string]*catalog, len(entries))
	for _, e := range entries {
		data, err := fs.ReadFile(static.Messages, static.MessagesDir+"/"+e.Name())
		if err != nil {
			return nil, err
		}
		c, err := parseCatalog(static.MessagesDir+"/"+e.Name(), data)
		if err != nil {
			return nil, err
		}
		out[c.tag.String()] = c
	}
	if out[referenceLanguage] == nil {
		return nil, errors.New("messages: no " + referenceLanguage + ".json among the built-in catalogs")
	}
	return out, nil
})

// readMessagesDir reads an operator's catalogs: every *.json file in dir.
func readMessagesDir(dir string) (map[string]*catalog, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("messages: %w", err)
	}
	out := make(map[string]*catalog)
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		file := filepath.Join(dir, e.Name())
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("messages: %w", err)
		}
		c, err := parseCatalog(file, data)
		if err != nil {
			return nil, err
		}
		if prev, dup := out[c.tag.String()]; dup {
			return nil, fmt.Errorf("messages: %s and %s are the same language", prev.file, file)
		}
		out[c.tag.String()] = c
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("messages: %s holds no catalog (<language>.json)", dir)
	}
	return out, nil
}

// overlay is base with the operator's messages over it: a key of over
// replaces base's, and a new key joins it.
func overlay(base, over *catalog) *catalog {
	c := &catalog{file: over.file, tag: base.tag, msgs: maps.Clone(base.msgs)}
	maps.Copy(c.msgs, over.msgs)
	return c
}
