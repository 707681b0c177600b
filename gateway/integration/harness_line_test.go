package integration

import (
	"cmp"
	"encoding/json"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// A line is a handful of fans whose every request the test makes in turn, for
// the failure tests, where what matters is the order of events and not their
// concurrency.
type lineFan struct {
	name     string
	v        *visitor
	key      uint64
	admitted int // the round of admission; -1 while waiting
	// returner is set for a fan whose admission the store lost before they
	// claimed it: they come back as a late returner, let in at the next free
	// slot rather than at their place, so admitAll does not hold them to the
	// order of keys.
	returner bool
}

// walkIn has the first fan of an empty room come in through n, straight to
// the origin.
func walkIn(t *testing.T, n *node, tr http.RoundTripper) *lineFan {
	t.Helper()
	f := &lineFan{name: "first", v: newVisitor(tr)}
	if !f.visit(t, n, "/events/42") {
		t.Fatal("the first fan did not walk in")
	}
	return f
}

// joinLine has count fans join through the nodes in turn, starting with
// nodes[first]. None may walk straight in: the test has made sure the line
// is not empty.
func joinLine(t *testing.T, nodes []*node, tr http.RoundTripper, name string, count, first int) []*lineFan {
	t.Helper()
	var fans []*lineFan
	for i := range count {
		f := &lineFan{name: name + string(rune('0'+i)), v: newVisitor(tr), admitted: -1}
		n := nodes[(first+i)%len(nodes)]
		resp, body, err := f.v.get(n.url+"/events/42", false)
		if err != nil || resp.StatusCode != http.StatusOK || !isWaitingPage(body) {
			t.Fatalf("%s joining: %v %d %.80q, want the waiting page", f.name, err, code(resp), body)
		}
		f.key = f.ticket(t, n).Key
		fans = append(fans, f)
	}
	return fans
}

// ticket opens the fan's ticket cookie as node n sees it.
func (f *lineFan) ticket(t *testing.T, n *node) waitingroom.Ticket {
	t.Helper()
	tk, err := n.room().OpenTicket(f.v.cookie(n.url, "foyer_ticket"))
	if err != nil {
		t.Fatalf("%s: ticket: %v", f.name, err)
	}
	return tk
}

// status polls the fan's status JSON through n.
func (f *lineFan) status(t *testing.T, n *node) waitingroom.Status {
	t.Helper()
	resp, body, err := f.v.get(n.url+"/_waiting-room/status", true)
	var st waitingroom.Status
	if err != nil || resp.StatusCode != http.StatusOK || json.Unmarshal([]byte(body), &st) != nil {
		t.Fatalf("%s: status: %v %d %.200q", f.name, err, code(resp), body)
	}
	return st
}

// visit asks for a page of the site through n and reports whether the origin
// answered.
func (f *lineFan) visit(t *testing.T, n *node, path string) bool {
	t.Helper()
	resp, body, err := f.v.get(n.url+path, false)
	if err != nil {
		t.Fatalf("%s: %s: %v", f.name, path, err)
	}
	return resp.StatusCode == http.StatusOK && (body == "origin" || body == "bye")
}

// pass is the fan's pass as node n verifies it.
func (f *lineFan) pass(t *testing.T, n *node) waitingroom.Pass {
	t.Helper()
	p, err := n.room().CheckPass(f.v.cookie(n.url, "foyer_pass"))
	if err != nil {
		t.Fatalf("%s: pass: %v", f.name, err)
	}
	return p
}

// admitAll has each waiting fan poll through the nodes in turn, then moves
// the clock on by stride and ticks every node, round after round until all
// are admitted, within maxRounds. An admitted fan checks out at once through the next node,
// so their slot frees. It fails unless fans are admitted in the order of their
// keys (returners aside), and calls check, if not nil, after every round.
//
// A stride of the admission grace lets the line move past places nobody
// holds, as after a re-seed (see Room.reseed), in a round each.
func admitAll(t *testing.T, clock *testClock, nodes []*node, fans []*lineFan, stride time.Duration, maxRounds int, check func(round int)) {
	t.Helper()
	for round := 0; ; round++ {
		waiting := 0
		for i, f := range fans {
			if f.admitted >= 0 {
				continue
			}
			n := nodes[(round+i)%len(nodes)]
			st := f.status(t, n)
			switch st.State {
			case waitingroom.StateAdmitted:
				if p := f.pass(t, n); p.OrderKey != f.key {
					t.Fatalf("%s: pass for place %d, ticket key %d", f.name, p.OrderKey, f.key)
				}
				f.admitted = round
				if !f.visit(t, nodes[(round+i+1)%len(nodes)], "/done") {
					t.Fatalf("%s: admitted, but the origin was not reached", f.name)
				}
			case waitingroom.StateQueued:
				if st.Reconnecting {
					t.Fatalf("round %d: %s is told the store is away", round, f.name)
				}
				if st.Returned {
					// Their admission lapsed (a store that hung ran an
					// admission with the time it was sent, so its grace
					// ran out meanwhile): they wait at the front for
					// the rate and a slot, outside the order of keys.
					f.returner = true
				}
				waiting++
			default:
				t.Fatalf("round %d: %s in state %s", round, f.name, st.State)
			}
		}
		if check != nil {
			check(round)
		}
		if waiting == 0 {
			break
		}
		if round == maxRounds {
			for i, n := range nodes {
				t.Logf("node %d: %+v", i, n.room().Snapshot())
			}
			for _, f := range fans {
				t.Logf("%s key %d admitted %d", f.name, f.key, f.admitted)
			}
			t.Fatalf("%d rounds and %d fans still wait", maxRounds, waiting)
		}
		// Polls come first in a round, right after the last tick, so that a
		// fan admitted by it claims within any grace.
		clock.Advance(stride)
		if err := tickAll(nodes); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
	}
	var byKey []*lineFan
	for _, f := range fans {
		if !f.returner {
			byKey = append(byKey, f)
		}
	}
	slices.SortFunc(byKey, func(a, b *lineFan) int { return cmp.Compare(a.key, b.key) })
	for i := 1; i < len(byKey); i++ {
		if a, b := byKey[i-1], byKey[i]; a.admitted > b.admitted {
			t.Fatalf("%s (key %d) admitted in round %d, after %s (key %d) in round %d", a.name, a.key, a.admitted, b.name, b.key, b.admitted)
		}
	}
}

// jsonState reports whether body is status JSON in state st.
func jsonState(body string, st waitingroom.State) bool {
	var s waitingroom.Status
	return json.Unmarshal([]byte(body), &s) == nil && s.State == st
}

func code(resp *http.Response) int {
	if resp == nil {
		return 0
	}
	return resp.StatusCode
}
