package integration

import (
	"net/http"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/gateway"
	"github.com/foyer-dev/foyer/waitingroom"
)

// TestFaultTotalLossServesNoPlaceTwice: a line moves through two nodes, each
// keeping its memo on a disk of its own, and every fan let in has checked out.
// redis-server and both gateways are lost together; Redis comes back empty and
// the gateways restart on their disks. No fan with a live pass comes back
// while the room settles, so only the memos know how far admission had gone:
// the room must resume from there. No place already let in is let in again
// (served twice), an old ticket of a fan who was let in gets no new pass, and
// the fans who waited go in first, in order.
func TestFaultTotalLossServesNoPlaceTwice(t *testing.T) {
	t.Parallel()
	clock := newTestClock()
	srv, dial := privateRedis(t)
	key := deploymentKey(t)
	const capacity = 3
	cfg := gateway.Handler{Room: "total", Settings: waitingroom.Settings{TotalActiveUsers: capacity, NewUsersPerMinute: 120, SessionDuration: time.Minute, AdmissionGrace: grace}}
	disks := []*nodeDisk{{}, {}}
	a := newNodeOn(t, clock.Now, cfg, redisNodeStore(t, dial, "foyer"), key, disks[0])
	b := newNodeOn(t, clock.Now, cfg, redisNodeStore(t, dial, "foyer"), key, disks[1])
	nodes := []*node{a, b}
	tr := sharedTransport(t)

	// The first walks in and out; twenty join. Admission runs until twelve
	// have been let in, each checking out at once.
	first := walkIn(t, a, tr)
	if !first.visit(t, a, "/done") {
		t.Fatal("the first fan's checkout did not reach the origin")
	}
	fans := joinLine(t, nodes, tr, "fan", 20, 0)
	for i := range fans {
		fans[i].name = "fan" + string(rune('a'+i))
	}
	served := 1
	for round := 0; served < 13; round++ {
		if round > 60 {
			t.Fatalf("only %d let in after %d rounds", served, round)
		}
		step(t, clock, nodes)
		for i, f := range fans {
			if f.admitted >= 0 {
				continue
			}
			n := nodes[(round+i)%2]
			if st := f.status(t, n); st.State == waitingroom.StateAdmitted {
				f.admitted = round
				served++
				if !f.visit(t, nodes[(round+i+1)%2], "/done") {
					t.Fatalf("%s could not check out", f.name)
				}
			}
		}
	}
	step(t, clock, nodes)
	before := a.room().Snapshot()
	var gone, waiting []*lineFan
	for _, f := range fans {
		if f.admitted >= 0 {
			gone = append(gone, f)
		} else {
			waiting = append(waiting, f)
			// Let in but not yet through: a room re-created blank does not
			// know whether they claimed, and sends them to the back.
			f.returner = f.key < before.Serving
		}
	}
	t.Logf("before the loss: serving %d, seq %d; %d fans let in, %d waiting", before.Serving, before.Seq, len(gone)+1, len(waiting))

	// Everything is lost together; Redis comes back empty, then the gateways
	// restart on their disks.
	srv.Stop(t)
	loseNode(a)
	loseNode(b)
	clock.Advance(3 * time.Second)
	srv.Restart(t)
	a = newNodeOn(t, clock.Now, cfg, redisNodeStore(t, dial, "foyer"), key, disks[0])
	b = newNodeOn(t, clock.Now, cfg, redisNodeStore(t, dial, "foyer"), key, disks[1])
	nodes = []*node{a, b}
	resp, _, err := newVisitor(tr).get(a.url+"/_waiting-room/status", true)
	if err != nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("newcomer right after the loss: %v %d, want 503 while the room settles", err, code(resp))
	}
	// While the room settles only the waiting fans poll; nobody inside comes
	// back.
	settle := a.room().Snapshot().SettleUntil
	for i, f := range waiting {
		if st := f.status(t, nodes[i%2]); st.State != waitingroom.StateQueued {
			t.Fatalf("%s while the room settles: %s, want queued", f.name, st.State)
		}
	}
	for !clock.Now().After(settle) {
		step(t, clock, nodes)
	}
	step(t, clock, nodes)
	after := a.room().Snapshot()
	twice := before.Serving - min(before.Serving, after.Serving)
	t.Logf("after the loss: serving %d, seq %d; %d places served twice", after.Serving, after.Seq, twice)
	if twice > 0 {
		t.Fatalf("serving %d after the loss, was %d: %d places let in before it are let in again", after.Serving, before.Serving, twice)
	}
	// An old ticket of a fan let in before the loss gets no new pass.
	for i, f := range gone {
		if st := f.status(t, nodes[i%2]); st.State == waitingroom.StateAdmitted {
			t.Fatalf("%s, let in before the loss, is let in again", f.name)
		}
	}
	l := newLedger()
	faultLine(t, clock, nodes, waiting, l, capacity, time.Second, 60)
}
