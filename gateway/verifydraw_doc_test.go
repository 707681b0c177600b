package gateway

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fencedAfter returns the body of the first fenced block (```) after marker
// in doc, and the rest of doc after that block.
func fencedAfter(t *testing.T, doc, marker string) (string, string) {
	t.Helper()
	i := strings.Index(doc, marker)
	if i < 0 {
		t.Fatalf("docs/PROTOCOL.md lacks %q", marker)
	}
	rest := doc[i:]
	open := strings.Index(rest, "```")
	body := rest[open:]
	body = body[strings.Index(body, "\n")+1:]
	end := strings.Index(body, "```")
	return body[:end], body[end+3:]
}

// TestVerifyDrawOfTheDocumentedExample runs verify-draw on the fairness
// report of docs/PROTOCOL.md's worked example and checks that it prints
// what the document says it prints: the document and the command agree.
func TestVerifyDrawOfTheDocumentedExample(t *testing.T) {
	raw, err := os.ReadFile("../docs/PROTOCOL.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	_, rest := fencedAfter(t, doc, "<!-- example:begin -->") // the draw endpoint
	report, _ := fencedAfter(t, rest, "```json")
	want, _ := fencedAfter(t, doc, "<!-- verify-draw:example -->")
	path := filepath.Join(t.TempDir(), "report.json")
	if err := os.WriteFile(path, []byte(report), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := verifyDraw(t, "--report", path, "--draw-index", "3")
	if err != nil || out != want {
		t.Fatalf("verify-draw of the documented example: %v\n%s\nthe document says:\n%s", err, out, want)
	}
}
