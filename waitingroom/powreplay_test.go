package waitingroom_test

import (
	"errors"
	"net/netip"
	"testing"

	"github.com/foyer-dev/foyer/waitingroom"
)

// TestAnswerReplayedAcrossNodes: one right answer, replayed by its solver
// on every node of the room and from another address. Each node takes it
// once (the spent seeds are each node's own: the README's accepted bound, one
// place per node), a second time on the same node is seed_spent, and from
// another address it is worth nothing.
func TestAnswerReplayedAcrossNodes(t *testing.T) {
	e := newEnv(t)
	nodes := []*waitingroom.Room{e.node("pow", powSettings(8)), e.node("pow", powSettings(8)), e.node("pow", powSettings(8))}
	st, _ := nodes[0].NewChallenge(netip.MustParseAddr("192.0.2.1"))
	nonce := solve(t, st.Challenge.Seed, 8)
	for i, n := range nodes {
		if _, err := n.JoinWithAnswer(e.ctx, netip.MustParseAddr("192.0.2.1"), st.Challenge.Seed, nonce); err != nil {
			t.Fatalf("node %d, first time: %v", i, err)
		}
		if _, err := n.JoinWithAnswer(e.ctx, netip.MustParseAddr("192.0.2.1"), st.Challenge.Seed, nonce); !errors.Is(err, waitingroom.ErrSeedSpent) {
			t.Fatalf("node %d, replayed: %v, want seed spent", i, err)
		}
		if _, err := n.JoinWithAnswer(e.ctx, netip.MustParseAddr("192.0.2.99"), st.Challenge.Seed, nonce); !errors.Is(err, waitingroom.ErrSeedInvalid) {
			t.Fatalf("node %d, from another address: %v, want seed invalid", i, err)
		}
	}
	if seq := e.snapshot(nodes[0]).Seq; seq != uint64(len(nodes)) {
		t.Fatalf("%d places from one answer on %d nodes, want one per node", seq, len(nodes))
	}
}
