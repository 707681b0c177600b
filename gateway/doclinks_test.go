package gateway

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// TestDocLinksResolve: every relative link in README.md and docs/*.md names
// a file of the repository, and every #anchor a heading of the page it points
// at (as GitHub makes anchors of headings), so a section moved between pages
// cannot leave a link behind it.
func TestDocLinksResolve(t *testing.T) {
	pages, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages = append([]string{"../README.md"}, pages...)
	anchors := map[string]map[string]bool{} // by cleaned path
	anchorsOf := func(path string) map[string]bool {
		if a, ok := anchors[path]; ok {
			return a
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		anchors[path] = headingAnchors(string(b))
		return anchors[path]
	}
	links := 0
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range relativeLinks(string(b)) {
			links++
			target, frag, _ := strings.Cut(l.target, "#")
			path := filepath.Clean(page)
			if target != "" {
				path = filepath.Join(filepath.Dir(page), target)
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s:%d: link to %s: no such file", filepath.Base(page), l.line, l.target)
					continue
				}
			}
			if frag == "" {
				continue
			}
			if !strings.HasSuffix(path, ".md") {
				t.Errorf("%s:%d: link to %s: an anchor in a file that is not Markdown", filepath.Base(page), l.line, l.target)
				continue
			}
			if !anchorsOf(path)[frag] {
				t.Errorf("%s:%d: link to %s: %s has no heading with that anchor", filepath.Base(page), l.line, l.target, filepath.Base(path))
			}
		}
	}
	if links < 50 {
		t.Errorf("only %d relative links found in %d pages: the link reader is broken", links, len(pages))
	}
}

type docLink struct {
	line   int
	target string
}

var (
	markdownLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	inlineCode   = regexp.MustCompile("`[^`]*`")
	schemePrefix = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
)

// relativeLinks lists the links of a Markdown page that stay in the
// repository, outside code blocks and inline code.
func relativeLinks(doc string) []docLink {
	var out []docLink
	fence := false
	for i, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "```") {
			fence = !fence
			continue
		}
		if fence {
			continue
		}
		for _, m := range markdownLink.FindAllStringSubmatch(inlineCode.ReplaceAllString(line, ""), -1) {
			if !schemePrefix.MatchString(m[1]) {
				out = append(out, docLink{i + 1, m[1]})
			}
		}
	}
	return out
}

// headingAnchors is the set of anchors GitHub gives a page's headings: the
// text lower-cased, spaces as hyphens, other punctuation dropped, and -1, -2,
// ... after a repeat.
func headingAnchors(doc string) map[string]bool {
	set := map[string]bool{}
	seen := map[string]int{}
	fence := false
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "```") {
			fence = !fence
			continue
		}
		text := strings.TrimLeft(line, "#")
		if fence || len(text) == len(line) || len(line)-len(text) > 6 || !strings.HasPrefix(text, " ") {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(text)) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			seen[a] = n + 1
			a += "-" + strconv.Itoa(n)
		} else {
			seen[a] = 1
		}
		set[a] = true
	}
	return set
}
