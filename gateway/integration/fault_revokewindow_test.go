package integration

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/gateway"
	"github.com/foyer-dev/foyer/waitingroom"
)

// revocationWindow is how soon after the store answers again every node
// refuses a pass revoked while it was away (docs/operations.md, "What survives what").
const revocationWindow = 600 * time.Millisecond

// TestFaultRevocationsReachEveryNodeAfterOutage: three nodes run their
// controller loops in real time over a private redis-server. Passes are
// revoked through one node around a kill of redis-server: one just before
// it (the store recorded it; the other nodes had not read it yet), one right
// after it (the node still thought the store was there), one well into the
// outage. redis-server comes back empty two seconds later. Every node must
// refuse every revoked pass within revocationWindow of the store answering.
func TestFaultRevocationsReachEveryNodeAfterOutage(t *testing.T) {
	// Not parallel: its rooms run on the wall clock and it holds them to a
	// window of real time, which other tests sharing the two cores would stretch.
	srv, dial := privateRedis(t)
	key := deploymentKey(t)
	ledger := newPassLedger(key, time.Now) // the rooms run on the wall clock
	const capacity = 4
	cfg := gateway.Handler{Room: "revwindow", Settings: waitingroom.Settings{TotalActiveUsers: capacity, NewUsersPerMinute: 6000, SessionDuration: time.Minute, AdmissionGrace: 5 * time.Second}}
	var nodes []*node
	for range 3 {
		nodes = append(nodes, ledgerNode(t, time.Now, cfg, redisNodeStore(t, dial, "foyer"), key, ledger))
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, n := range nodes {
		wg.Go(func() { n.room().Run(ctx) })
	}
	defer func() { cancel(); wg.Wait() }()
	tr := sharedTransport(t)

	// capacity fans inside, each having walked in through the first node.
	var inside []*lineFan
	for i := range capacity {
		deadline := time.Now().Add(10 * time.Second)
		f := &lineFan{name: "fan" + string(rune('0'+i)), v: newVisitor(tr)}
		for {
			if f.visit(t, nodes[0], "/events/42") {
				inside = append(inside, f)
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("fan %d could not walk in", i)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	time.Sleep(time.Second) // every node has read the sessions
	through := nodes[1]
	others := []*node{nodes[0], nodes[2]}

	// Revoked just before the kill, right after it, and within the outage.
	if !inside[0].visit(t, through, "/done") {
		t.Fatal("checkout before the kill did not reach the origin")
	}
	srv.Stop(t)
	killed := time.Now()
	if !inside[1].visit(t, through, "/done") {
		t.Fatal("checkout right after the kill did not reach the origin")
	}
	time.Sleep(time.Second)
	if !inside[2].visit(t, through, "/done") {
		t.Fatal("checkout within the outage did not reach the origin")
	}
	revoked := ledger.revoked(time.Now())
	if len(revoked) != 3 {
		t.Fatalf("the origin revoked %d passes, want 3", len(revoked))
	}
	accepted := 0
	for time.Since(killed) < 2*time.Second {
		for _, n := range others {
			for _, tok := range revoked {
				if _, err := n.room().CheckPass(tok); err == nil {
					accepted++
				}
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("while the store was away, other nodes accepted revoked passes %d times (polled every 10 ms)", accepted)

	srv.Restart(t)
	answered := time.Now()
	var slowest time.Duration
	for i, n := range others {
		for j, tok := range revoked {
			for {
				if _, err := n.room().CheckPass(tok); errors.Is(err, waitingroom.ErrInvalidPass) {
					break
				}
				if time.Since(answered) > 10*time.Second {
					t.Fatalf("node %d still accepts revoked pass %d 10 s after the store answered", i, j)
				}
				time.Sleep(5 * time.Millisecond)
			}
			slowest = max(slowest, time.Since(answered))
		}
	}
	t.Logf("every node refuses every revoked pass %v after the store answered", slowest.Round(time.Millisecond))
	if slowest > revocationWindow {
		t.Errorf("revoked passes accepted up to %v after the store answered, want within %v", slowest, revocationWindow)
	}
	refusedEverywhere(t, nodes, revoked, "after the outage")
	if !inside[3].visit(t, nodes[2], "/events/42") {
		t.Fatal("the fan whose session was never revoked lost access")
	}
}
