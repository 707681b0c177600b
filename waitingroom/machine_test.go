package waitingroom_test

import (
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/foyer-dev/foyer/waitingroom"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite docs/ARCHITECTURE.md's generated admission table")

const (
	transitionsBegin = "<!-- transitions:begin -->"
	transitionsEnd   = "<!-- transitions:end -->"
)

// TestArchitectureTransitions fails when docs/ARCHITECTURE.md's admission
// table differs from the one the code follows; with -update-docs it rewrites
// it.
func TestArchitectureTransitions(t *testing.T) {
	const path = "../docs/ARCHITECTURE.md"
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(old)
	i, j := strings.Index(doc, transitionsBegin), strings.Index(doc, transitionsEnd)
	if i < 0 || j < i {
		t.Fatalf("%s has no %s ... %s markers", path, transitionsBegin, transitionsEnd)
	}
	doc = doc[:i+len(transitionsBegin)] + "\n" + waitingroom.TransitionsMarkdown() + doc[j:]
	if doc == string(old) {
		return
	}
	if *updateDocs {
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Log("docs/ARCHITECTURE.md: admission table rewritten")
		return
	}
	t.Errorf("docs/ARCHITECTURE.md's admission table is stale: run `go test ./waitingroom/ -run '^TestArchitectureTransitions$' -update-docs` and commit it")
}

// TestTransitionsAreComplete: every request state Admit can reach has a row
// for every request event it can meet, and every row's action is one the
// request path or the store's step carries out.
func TestTransitionsAreComplete(t *testing.T) {
	seen := make(map[[2]string]bool)
	for _, tr := range waitingroom.Transitions {
		k := [2]string{tr.From.String(), tr.Event.String()}
		if seen[k] {
			t.Errorf("two rows for %s on %s", tr.From, tr.Event)
		}
		seen[k] = true
		if tr.Why == "" {
			t.Errorf("%s on %s: no reason given", tr.From, tr.Event)
		}
		if strings.HasPrefix(tr.Action.String(), "action(") || tr.Action == 0 {
			t.Errorf("%s on %s: no action", tr.From, tr.Event)
		}
	}
	// The pairs Admit looks up on the request path.
	for _, p := range []struct{ s, e string }{
		{"new", "arrive"}, {"new", "answer"}, {"new", "over join_limit"}, {"new", "room shut"}, {"new", "store away"}, {"new", "pass"},
		{"challenged", "arrive"}, {"waiting", "poll"}, {"waiting", "store away"}, {"at the front", "poll"}, {"at the front", "store away"},
		{"in session", "pass"}, {"in session", "ticket after pass"},
		{"in session", "requeue"}, {"in session", "requeue refused"},
		{"new", "code"}, {"new", "code accepted"}, {"new", "code refused"}, {"new", "code required"},
		{"waiting", "code"}, {"at the front", "code"},
	} {
		if !seen[[2]string{p.s, p.e}] {
			t.Errorf("no row for %s on %s", p.s, p.e)
		}
	}
	for _, from := range []string{"at the front", "in session", "idled out", "returned"} {
		for _, ev := range []string{"claim: opened", "claim: full", "claim: held", "claim: finished", "claim: passed", "claim: not yet", "claim: requeued"} {
			if from == "idled out" && ev == "claim: opened" {
				ev = "claim: resumed"
			}
			if !seen[[2]string{from, ev}] {
				t.Errorf("no row for %s on %s: the store may answer it", from, ev)
			}
		}
	}
}
