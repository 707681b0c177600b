package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// executable writes an empty file that may be run at path.
func executable(t *testing.T, path string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestFindBinary: without -foyer or -booking, onsale finds the binaries
// beside its own executable from any directory, else under ./bin; when
// neither has one, it says which binary is missing, where it looked, and how
// to get it.
func TestFindBinary(t *testing.T) {
	install := t.TempDir()
	onsale := executable(t, filepath.Join(install, "bin", "onsale"))
	self := func() (string, error) { return onsale, nil }
	elsewhere := t.TempDir()
	t.Chdir(elsewhere)

	// Nothing beside onsale, nothing under ./bin.
	_, err := findBinary("foyer", "", self)
	for _, want := range []string{"no foyer binary", filepath.Join(install, "bin", "foyer"), filepath.Join(elsewhere, "bin", "foyer"), "make build", "-foyer"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("nothing to find: error %v, want one mentioning %q", err, want)
		}
	}

	// Under ./bin of the working directory, as `go run ./cmd/onsale` from
	// the checkout's root has it.
	local := executable(t, filepath.Join(elsewhere, "bin", "foyer"))
	if got, err := findBinary("foyer", "", self); err != nil || got != local {
		t.Errorf("found %q, %v; want %s", got, err, local)
	}

	// Beside onsale, which wins: it is the build onsale came with.
	beside := executable(t, filepath.Join(install, "bin", "foyer"))
	if got, err := findBinary("foyer", "", self); err != nil || got != beside {
		t.Errorf("found %q, %v; want %s", got, err, beside)
	}

	// Given with its flag: used as given, and refused if it cannot run.
	if got, err := findBinary("foyer", local, self); err != nil || got != local {
		t.Errorf("given %s: %q, %v", local, got, err)
	}
	missing := filepath.Join(elsewhere, "nope", "foyer")
	if _, err := findBinary("foyer", missing, self); err == nil || !strings.Contains(err.Error(), "-foyer") || !strings.Contains(err.Error(), missing) {
		t.Errorf("given a path with nothing there: %v", err)
	}
	plain := filepath.Join(elsewhere, "plain")
	if err := os.WriteFile(plain, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := findBinary("booking", plain, self); err == nil || !strings.Contains(err.Error(), "-booking") {
		t.Errorf("given a file that may not be run: %v", err)
	}
	if _, err := findBinary("booking", elsewhere, self); err == nil || !strings.Contains(err.Error(), "directory") {
		t.Errorf("given a directory: %v", err)
	}

	// A benchmark's flags are resolved as they are read.
	set := flag.NewFlagSet("bench", flag.ContinueOnError)
	foyer := set.String("foyer", "", "")
	if err := set.Parse(nil); err != nil {
		t.Fatal(err)
	}
	if err := findBinaries(set, self); err != nil || *foyer != beside {
		t.Errorf("bench flags: foyer %q, %v; want %s", *foyer, err, beside)
	}
}
