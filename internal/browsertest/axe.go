package browsertest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// AxeEnv may name axe.min.js; unset, it is looked up where scripts/deps.sh
// installs it: scripts/axe/node_modules/axe-core/ at the module's root.
const AxeEnv = "FOYER_AXE_JS"

// AxeTags are the rule sets every page state must pass: WCAG 2.0, 2.1 and 2.2
// at levels A and AA. They cover contrast, names, roles and target size.
var AxeTags = []string{"wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"}

// AxeSource reads axe-core, or skips the test (fails it in CI, where
// scripts/deps.sh must have installed it).
func AxeSource(t testing.TB) string {
	t.Helper()
	path := os.Getenv(AxeEnv)
	if path == "" {
		root, err := moduleRoot()
		if err != nil {
			t.Fatal(err)
		}
		path = filepath.Join(root, "scripts", "axe", "node_modules", "axe-core", "axe.min.js")
	}
	src, err := os.ReadFile(path)
	if err == nil {
		return string(src)
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("axe-core: %v; scripts/deps.sh installs it (npm ci --prefix scripts/axe)", err)
	}
	t.Skipf("SKIPPED, integration test not run: no axe-core (%v); scripts/deps.sh installs it", err)
	return ""
}

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = parent
	}
}

// Violation is one rule axe found broken, with the elements that break it.
type Violation struct {
	ID     string `json:"id"`
	Impact string `json:"impact"`
	Help   string `json:"help"`
	Nodes  []struct {
		Target  []any  `json:"target"`
		Summary string `json:"failureSummary"`
	} `json:"nodes"`
}

func (v Violation) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s): %s", v.ID, v.Impact, v.Help)
	for i, n := range v.Nodes {
		if i == 5 {
			fmt.Fprintf(&b, "\n    … and %d more", len(v.Nodes)-i)
			break
		}
		fmt.Fprintf(&b, "\n    %v: %s", n.Target, strings.ReplaceAll(n.Summary, "\n", " "))
	}
	return b.String()
}

// Axe runs axe-core's AxeTags rules on the page as it is now and returns the
// violations. The script is evaluated through DevTools, so the page's
// Content-Security-Policy does not keep it out.
func (p *Page) Axe(src string) []Violation {
	p.t.Helper()
	if !p.JS {
		// axe works with promises and timers, which do not run while scripts
		// are off. The page was parsed and laid out with them off, and its own
		// scripts were skipped then; turning them on now runs none of them.
		p.scripts(true)
		defer p.scripts(false)
	}
	if !Eval[bool](p, `typeof window.axe === "object"`) {
		Eval[bool](p, src+"\n;true")
	}
	tags, _ := json.Marshal(AxeTags)
	out := Eval[string](p, `axe.run(document, {runOnly: {type: "tag", values: `+string(tags)+`}, resultTypes: ["violations"]})
		.then((r) => JSON.stringify(r.violations))`)
	var vs []Violation
	if err := json.Unmarshal([]byte(out), &vs); err != nil {
		p.t.Fatalf("axe's answer: %v", err)
	}
	return vs
}
