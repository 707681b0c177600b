package integration

import (
	"strconv"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// The fault tests' line: fans poll through the nodes in turn, round after
// round; a fan let in holds their pass for a round (so sessions overlap, as in
// a real sale) and then checks out. Every round it checks the invariants a
// fault must not break: never more sessions valid at once than the cap, and
// nobody admitted while a fan with an earlier key still waits.

// ledger is every pass the test saw handed out, to count those valid at once.
type ledger struct {
	passes map[string]passEntry
}

type passEntry struct {
	expires time.Time
	revoked bool
}

func newLedger() *ledger { return &ledger{passes: make(map[string]passEntry)} }

// record notes the pass f holds, as node n verifies it.
func (l *ledger) record(t *testing.T, f *lineFan, n *node) waitingroom.Pass {
	t.Helper()
	p := f.pass(t, n)
	if _, ok := l.passes[p.ID]; !ok {
		l.passes[p.ID] = passEntry{expires: p.ExpiresAt}
	}
	return p
}

// revoke notes that the pass with id was revoked.
func (l *ledger) revoke(id string) {
	if e, ok := l.passes[id]; ok {
		e.revoked = true
		l.passes[id] = e
	}
}

// valid counts the passes valid at now.
func (l *ledger) valid(now time.Time) int {
	n := 0
	for _, e := range l.passes {
		if !e.revoked && now.Before(e.expires) {
			n++
		}
	}
	return n
}

// checkCap fails when more sessions are valid at once than the cap.
func (l *ledger) checkCap(t *testing.T, now time.Time, capacity int, when string) {
	t.Helper()
	if n := l.valid(now); n > capacity {
		t.Fatalf("%s: %d sessions valid at once, cap %d", when, n, capacity)
	}
}

// faultLine runs fans through the nodes until all are in, within maxRounds,
// moving the clock by stride between rounds. It fails as soon as a fan is let
// in while one with an earlier key still waits (returners aside, who are let
// in at the next free slot by design), or the ledger shows more valid
// sessions than capacity.
func faultLine(t *testing.T, clock *testClock, nodes []*node, fans []*lineFan, l *ledger, capacity int, stride time.Duration, maxRounds int) {
	t.Helper()
	passOf := make(map[*lineFan]string)
	for round := 0; ; round++ {
		// Those let in last round check out now.
		for i, f := range fans {
			if id, ok := passOf[f]; ok && f.admitted == round-1 {
				if !f.visit(t, nodes[(round+i)%len(nodes)], "/done") {
					t.Fatalf("round %d: %s could not reach the origin to check out", round, f.name)
				}
				l.revoke(id)
			}
		}
		waiting := 0
		minWaiting, maxIn := ^uint64(0), uint64(0)
		anyIn := false
		for i, f := range fans {
			if f.admitted >= 0 {
				if !f.returner {
					maxIn, anyIn = max(maxIn, f.key), true
				}
				continue
			}
			n := nodes[(round+i)%len(nodes)]
			st := f.status(t, n)
			if k := f.ticket(t, n).Key; k != f.key && !f.returner {
				t.Fatalf("round %d: %s lost their place: key %d, was %d", round, f.name, k, f.key)
			}
			switch st.State {
			case waitingroom.StateAdmitted:
				p := l.record(t, f, n)
				if !f.returner && p.OrderKey != f.key {
					t.Fatalf("%s: pass for place %d, ticket key %d", f.name, p.OrderKey, f.key)
				}
				passOf[f], f.admitted = p.ID, round
				if !f.returner {
					maxIn, anyIn = max(maxIn, f.key), true
				}
			case waitingroom.StateQueued:
				waiting++
				if !f.returner {
					minWaiting = min(minWaiting, f.key)
				}
			default:
				t.Fatalf("round %d: %s in state %s", round, f.name, st.State)
			}
		}
		if anyIn && minWaiting != ^uint64(0) && maxIn > minWaiting {
			t.Fatalf("round %d: key %d let in while key %d still waits", round, maxIn, minWaiting)
		}
		l.checkCap(t, clock.Now(), capacity, "round "+strconv.Itoa(round))
		if waiting == 0 {
			return
		}
		if round == maxRounds {
			for i, n := range nodes {
				t.Logf("node %d: %+v settings %+v", i, n.room().Snapshot(), n.room().Settings())
			}
			for _, f := range fans {
				t.Logf("%s key %d admitted %d", f.name, f.key, f.admitted)
			}
			t.Fatalf("%d rounds and %d fans still wait", maxRounds, waiting)
		}
		clock.Advance(stride)
		if err := tickAll(nodes); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
	}
}

// loseNode stops n's server, as a crash of the gateway process would: its
// memory (the room's view, what it handed out) is gone with it.
func loseNode(n *node) { n.srv.Close() }
