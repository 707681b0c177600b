package waitingroom_test

import (
	"errors"
	"net/netip"
	"testing"

	"github.com/foyer-dev/foyer/waitingroom"
)

// TestAnswerReplayedAcrossNodes: one right answer, replayed by its solver
// on every node of the room and from another address. The first node takes
// it; every other node, and the first again, refuses it as seed_spent (the
// store keeps the seeds that bought a place for every node sharing it), and
// from another address it is worth nothing.
func TestAnswerReplayedAcrossNodes(t *testing.T) {
	e := newEnv(t)
	nodes := []*waitingroom.Room{e.node("pow", powSettings(8)), e.node("pow", powSettings(8)), e.node("pow", powSettings(8))}
	st, _ := nodes[0].NewChallenge(netip.MustParseAddr("192.0.2.1"))
	nonce := solve(t, st.Challenge.Seed, 8)
	if _, err := nodes[0].JoinWithAnswer(e.ctx, netip.MustParseAddr("192.0.2.1"), st.Challenge.Seed, nonce); err != nil {
		t.Fatalf("node 0, first time: %v", err)
	}
	for i, n := range append(nodes[1:], nodes...) {
		if _, err := n.JoinWithAnswer(e.ctx, netip.MustParseAddr("192.0.2.1"), st.Challenge.Seed, nonce); !errors.Is(err, waitingroom.ErrSeedSpent) {
			t.Fatalf("replay %d: %v, want seed spent", i, err)
		}
		if _, err := n.JoinWithAnswer(e.ctx, netip.MustParseAddr("192.0.2.99"), st.Challenge.Seed, nonce); !errors.Is(err, waitingroom.ErrSeedInvalid) {
			t.Fatalf("replay %d, from another address: %v, want seed invalid", i, err)
		}
	}
	if seq := e.snapshot(nodes[0]).Seq; seq != 1 {
		t.Fatalf("%d places from one answer on %d nodes, want one", seq, len(nodes))
	}
}
