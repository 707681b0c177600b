package i18n

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

// catalogs is a reference and two languages with different plural rules.
var catalogs = fstest.MapFS{
	"m/en.json": {Data: []byte(`{"language.name": "English", "greet": "Hello {who}",
		"seats": {"one": "{n} seat", "other": "{n} seats"}}`)},
	"m/de.json": {Data: []byte(`{"language.name": "Deutsch", "greet": "Hallo {who}",
		"seats": {"one": "{n} Platz", "other": "{n} Plätze"}}`)},
	"m/fr.json": {Data: []byte(`{"language.name": "Français", "greet": "Bonjour {who}",
		"seats": {"one": "{n} place", "many": "{n} de places", "other": "{n} places"}}`)},
}

func TestReadDirAndChoose(t *testing.T) {
	s, err := NewSet(catalogs, "m", "lang")
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Default().Code; got != Reference {
		t.Errorf("default %s, want %s", got, Reference)
	}
	m := NewMatcher(s.Locales)
	for _, tc := range []struct {
		accept, want string
	}{{"de-CH, fr;q=0.8", "de"}, {"fr-BE", "fr"}, {"ja", "en"}, {"", "en"}} {
		if got := s.Locales[m.Accept(tc.accept)].Code; got != tc.want {
			t.Errorf("Accept-Language %q reads %s, want %s", tc.accept, got, tc.want)
		}
	}
	if i := m.Match("xx-invalid-"); i != -1 {
		t.Errorf("Match of a bad tag = %d, want -1", i)
	}
	if i, ok := m.Lookup("fr"); !ok || s.Locales[i].Code != "fr" {
		t.Errorf("Lookup(fr) = %d, %v", i, ok)
	}
}

// TestCount: a count beyond what an int of the plural rules takes still
// picks a form, and its digits are all written in the language's grouping.
func TestCount(t *testing.T) {
	s, err := NewSet(catalogs, "m", "lang")
	if err != nil {
		t.Fatal(err)
	}
	fr := s.Locales[NewMatcher(s.Locales).Match("fr")]
	for n, want := range map[uint64]string{
		1:         "1 place",
		2:         "2 places",
		1000000:   "1 000 000 places",
		1<<40 + 1: "1 099 511 627 777 places",
	} {
		if got := strings.NewReplacer("\u202f", " ", "\u00a0", " ").Replace(fr.Count("seats", n)); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
	if got := s.Default().N("seats", 1); got != "1 seat" {
		t.Errorf("N(1) = %q", got)
	}
	if got := s.Default().T("greet", "who", "you"); got != "Hello you" {
		t.Errorf("T = %q", got)
	}
}

// TestCheckOverride: an override in the reference's own language may leave
// keys out and add its own, but keeps each key's shape and placeholders.
func TestCheckOverride(t *testing.T) {
	ref, err := Parse("en.json", catalogs["m/en.json"].Data)
	if err != nil {
		t.Fatal(err)
	}
	ok, _ := Parse("own/en.json", []byte(`{"greet": "Hi {who}", "extra": "More"}`))
	if err := ok.CheckOverride(ref); err != nil {
		t.Errorf("a partial override with a key of its own: %v", err)
	}
	if err := ok.Check(ref); err == nil {
		t.Error("Check passed a partial catalog")
	}
	bad, _ := Parse("own/en.json", []byte(`{"greet": "Hi {name}", "seats": "seats"}`))
	err = bad.CheckOverride(ref)
	for _, want := range []string{`own/en.json: key "greet": has placeholders`, `own/en.json: key "seats": must be an object`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want one saying %s", err, want)
		}
	}
	over := Overlay(ref, ok)
	if over.Msgs["greet"].Forms[0] != "Hi {who}" || over.Msgs["seats"].Forms[0] == "" || over.File != "own/en.json" {
		t.Errorf("Overlay = %+v", over)
	}
}

// TestParseOSDir: an operator's directory is named by its path in errors,
// and two files of one language, or none at all, are refused.
func TestParseOSDir(t *testing.T) {
	dir := t.TempDir()
	if _, err := ParseOSDir(dir); err == nil || !strings.Contains(err.Error(), dir+" holds no catalog") {
		t.Errorf("empty directory: %v", err)
	}
	write := func(name, data string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("de.json", `{"greet": "Hallo {who}"}`)
	write("notes.txt", "not a catalog")
	cats, err := ParseOSDir(dir)
	if err != nil || cats["de"] == nil || cats["de"].File != filepath.Join(dir, "de.json") {
		t.Fatalf("ParseOSDir = %v, %v", cats, err)
	}
	write("de-DE.json", `{}`)
	write("DE.json", `{}`)
	if _, err := ParseOSDir(dir); err == nil || !strings.Contains(err.Error(), "are the same language") {
		t.Errorf("two files of one language: %v", err)
	}
	if err := os.Remove(filepath.Join(dir, "DE.json")); err != nil {
		t.Fatal(err)
	}
	write("xx_1.json", `{}`)
	if _, err := ParseOSDir(dir); err == nil || !strings.Contains(err.Error(), "must be a language tag") {
		t.Errorf("a file not named by a tag: %v", err)
	}
}
