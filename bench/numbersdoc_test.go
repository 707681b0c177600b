package bench

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestMakeBenchWritesTheNumbersPage: the file make bench rewrites is the one
// that holds the Numbers table, between its markers, so a figure on that page
// can only come from make bench, and a moved table cannot leave make bench
// writing to a page that lost it.
func TestMakeBenchWritesTheNumbersPage(t *testing.T) {
	makefile, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`onsale bench numbers [^\n]*-doc (\S+)`).FindSubmatch(makefile)
	if m == nil {
		t.Fatal("make bench does not write the Numbers table anywhere (no `onsale bench numbers -doc <file>`)")
	}
	page := string(m[1])
	if page != "docs/benchmarks.md" {
		t.Errorf("make bench writes %s; the documentation's map (README.md) names docs/benchmarks.md", page)
	}
	b, err := os.ReadFile(filepath.Join("..", page))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i, j := strings.Index(doc, numbersBegin), strings.Index(doc, numbersEnd)
	if i < 0 || j < i || strings.Count(doc, numbersBegin) != 1 {
		t.Fatalf("%s has no single %s ... %s pair for make bench to rewrite", page, numbersBegin, numbersEnd)
	}
	if !strings.HasPrefix(doc[i+len(numbersBegin):], "\nMeasured ") {
		t.Errorf("%s: the Numbers table does not start as Table writes it", page)
	}
}
