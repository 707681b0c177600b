package integration

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/foyer-dev/foyer/gateway"
	"github.com/foyer-dev/foyer/internal/redistest"
	"github.com/foyer-dev/foyer/waitingroom"
)

// privateRedis starts a redis-server of the test's own, which it may stop and
// flush, and returns a dial for the nodes' clients. They give up on a dead
// server after one dial, not go-redis's five a hundred milliseconds apart, so
// the outage costs the test little time; what a node does with the error is
// the same.
func privateRedis(t *testing.T) (*redistest.Server, func() redis.UniversalClient) {
	t.Helper()
	srv := redistest.StartServer(t, nil)
	return srv, srv.Dial()
}

// TestMultiNodeRedisStopped: Redis stops mid-queue under three nodes (the
// third with on_store_failure open) and comes back empty on the same port.
// While it is away, admitted fans keep reaching the origin on every node,
// waiting fans keep their tickets and are told the store is reconnecting,
// nobody is admitted, and newcomers get 503 with Retry-After (page and JSON),
// except on the open node, which lets them through with a pass. Once it is
// back, the nodes re-seed it without moving serving, hold the slots of the
// sessions from before, and the line moves again in order: those who waited,
// then those who joined after.
func TestMultiNodeRedisStopped(t *testing.T) {
	t.Parallel()
	clock := newTestClock()
	srv, dial := privateRedis(t)
	key := deploymentKey(t)
	// The rate, not the cap, holds the line back: a slot is free when Redis
	// comes back.
	cfg := gateway.Handler{Room: "outage", Settings: waitingroom.Settings{TotalActiveUsers: 4, NewUsersPerMinute: 60, SessionDuration: time.Minute, AdmissionGrace: grace}}
	a := newNode(t, clock.Now, cfg, redisNodeStore(t, dial, "foyer"), key)
	b := newNode(t, clock.Now, cfg, redisNodeStore(t, dial, "foyer"), key)
	cfg.OnStoreFailure = "open"
	open := newNode(t, clock.Now, cfg, redisNodeStore(t, dial, "foyer"), key)
	nodes, closed := []*node{a, b, open}, []*node{a, b}
	tr := sharedTransport(t)

	// The first fan walks in; of those behind, the first is admitted and
	// claims, the second is admitted and has yet to claim, five wait.
	first := walkIn(t, a, tr)
	fans := joinLine(t, closed, tr, "fan", 7, 1)
	step(t, clock, nodes)
	if st := fans[0].status(t, b); st.State != waitingroom.StateAdmitted {
		t.Fatalf("fan0 after a second: %+v, want admitted", st)
	}
	step(t, clock, nodes)
	inside, due, waiting := []*lineFan{first, fans[0]}, fans[1], fans[2:]
	shown := make(map[*lineFan]uint64)
	for _, f := range waiting {
		shown[f] = *f.status(t, a).Position
	}

	srv.Stop(t)
	for range 3 {
		clock.Advance(time.Second)
		if tickAll(nodes) == nil {
			t.Fatal("the nodes ticked with Redis stopped")
		}
	}
	for i, n := range nodes {
		if n.room().Healthy() {
			t.Fatalf("node %d still calls its store healthy", i)
		}
	}

	for _, f := range inside {
		for i, n := range nodes {
			if !f.visit(t, n, "/events/42") {
				t.Fatalf("%s, admitted before the outage, did not reach the origin through node %d", f.name, i)
			}
		}
	}
	for i, f := range append([]*lineFan{due}, waiting...) {
		n := closed[i%2]
		before := f.ticket(t, n)
		st := f.status(t, n)
		if st.State != waitingroom.StateQueued || !st.Reconnecting || f.v.cookie(n.url, "foyer_pass") != "" {
			t.Fatalf("%s with Redis stopped: %+v, want queued, reconnecting and no pass", f.name, st)
		}
		if after := f.ticket(t, n); after.Visitor != before.Visitor || after.Key != before.Key {
			t.Fatalf("%s's ticket changed from key %d to %d", f.name, before.Key, after.Key)
		}
		if p, ok := shown[f]; ok && *st.Position > p {
			t.Fatalf("%s's position rose from %d to %d", f.name, p, *st.Position)
		}
	}
	resp, body, err := waiting[0].v.get(b.url+"/events/42", false)
	if err != nil || resp.StatusCode != http.StatusOK || !isWaitingPage(body) || !strings.Contains(body, `class="notice"`) || !strings.Contains(body, "Reconnecting") {
		t.Fatalf("waiting page with Redis stopped: %v %d, want the page with its reconnecting notice:\n%s", err, code(resp), body)
	}
	newcomerGets503(t, tr, closed)
	lucky := newVisitor(tr)
	if resp, body, err := lucky.get(open.url+"/events/42", false); err != nil || body != "origin" {
		t.Fatalf("newcomer on the on_store_failure open node: %v %d %q, want the origin", err, code(resp), body)
	}
	if _, err := a.room().CheckPass(lucky.cookie(open.url, "foyer_pass")); err != nil {
		t.Fatalf("the open node's pass is refused by another node: %v", err)
	}

	srv.Restart(t)
	before := a.room().Snapshot()
	clock.Advance(time.Second)
	recoverNode(t, a) // alone, so that no other node steps the room first
	if after := a.room().Snapshot(); after.Serving != before.Serving || after.Seq <= before.Seq || after.Active != before.Active+before.Pending {
		t.Fatalf("re-seeded: serving %d, seq %d, active %d; want serving kept at %d, seq above %d, the %d sessions and admissions held",
			after.Serving, after.Seq, after.Active, before.Serving, before.Seq, before.Active+before.Pending)
	}
	recoverNode(t, b)
	recoverNode(t, open)
	late := joinLine(t, closed, tr, "late", 2, 0)
	// The fan whose turn came just before the outage could not claim while
	// Redis was away, and their grace ran out meanwhile: they are let in as a
	// late returner, at the next free slot, which the controller may have
	// given the next place first.
	due.returner = true
	admitAll(t, clock, nodes, append(append([]*lineFan{due}, waiting...), late...), grace, 150, nil)
}

// recoverNode ticks n until its store answers again: a client whose dials
// failed probes the server on its own schedule, so this waits, with a
// deadline, in real time.
func recoverNode(t *testing.T, n *node) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := n.room().Tick(context.Background())
		if err == nil && n.room().Healthy() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("node did not recover: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestMultiNodeRedisFlushed: Redis loses every key (FLUSHALL) mid-queue under
// two nodes, right after some fans joined that neither node has seen in a
// refresh. Newcomers after the loss are placed behind every ticket issued
// before it; serving does not jump; the sessions open before the loss still
// take their slots, and the fan admitted just before it still claims theirs
// within their grace, so nobody new is admitted until those sessions end; then
// the line moves in order.
func TestMultiNodeRedisFlushed(t *testing.T) {
	t.Parallel()
	clock := newTestClock()
	srv, dial := privateRedis(t)
	key := deploymentKey(t)
	// The cap, not the rate, holds the line back, as in a busy on-sale: when
	// Redis loses its data every slot is taken.
	const capacity = 5
	cfg := gateway.Handler{Room: "flush", Settings: waitingroom.Settings{TotalActiveUsers: capacity, NewUsersPerMinute: 600, SessionDuration: time.Minute, AdmissionGrace: grace}}
	a := newNode(t, clock.Now, cfg, redisNodeStore(t, dial, "foyer"), key)
	b := newNode(t, clock.Now, cfg, redisNodeStore(t, dial, "foyer"), key)
	watch := redisNodeStore(t, dial, "foyer")
	nodes := []*node{a, b}
	tr := sharedTransport(t)

	// Four fans hold sessions, a fifth was admitted and has yet to claim, five
	// wait.
	first := walkIn(t, a, tr)
	fans := joinLine(t, nodes, tr, "fan", 9, 1)
	step(t, clock, nodes)
	inside, due, waiting := []*lineFan{first, fans[0], fans[1], fans[3]}, fans[2], fans[4:]
	for i, f := range inside[1:] {
		if st := f.status(t, nodes[i%2]); st.State != waitingroom.StateAdmitted {
			t.Fatalf("%s: %s, want admitted", f.name, st.State)
		}
	}
	// Joins since the nodes last refreshed: in tickets, in no node's view.
	recent := joinLine(t, nodes, tr, "recent", 4, 0)
	seen := a.room().Snapshot()
	var lastKey uint64
	for _, f := range recent {
		lastKey = max(lastKey, f.key)
	}

	admin := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer admin.Close()
	if err := admin.FlushAll(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}

	newcomers := joinLine(t, nodes, tr, "new", 4, 1)
	for _, f := range newcomers {
		if f.key <= lastKey {
			t.Fatalf("%s joined after the loss with key %d, ahead of a ticket issued before it (key %d)", f.name, f.key, lastKey)
		}
	}
	for range 3 {
		step(t, clock, nodes)
		s, err := watch.Snapshot(context.Background(), "flush", clock.Now(), 0)
		if err != nil {
			t.Fatal(err)
		}
		if s.Serving != seen.Serving {
			t.Fatalf("serving %d after the loss, was %d: it must neither jump nor admit past held slots", s.Serving, seen.Serving)
		}
		if s.Active+s.Pending != capacity {
			t.Fatalf("after the loss the store holds %d sessions and %d admissions, want the %d from before", s.Active, s.Pending, capacity)
		}
	}
	// The fan admitted just before the loss claims the slot kept for them,
	// within their grace, and no sixth one.
	if st := due.status(t, b); st.State != waitingroom.StateAdmitted {
		t.Fatalf("%s, admitted before the loss, could not claim within their grace: %s", due.name, st.State)
	}
	if s, err := watch.Snapshot(context.Background(), "flush", clock.Now(), 0); err != nil || s.Active != capacity || s.Pending != 0 {
		t.Fatalf("after %s claimed: %d active, %d pending (%v), want the %d slots as sessions", due.name, s.Active, s.Pending, err, capacity)
	}
	inside = append(inside, due)
	for _, f := range inside {
		if !f.visit(t, b, "/events/42") {
			t.Fatalf("%s, inside before the loss, lost access", f.name)
		}
	}
	lineup := append(append(waiting, recent...), newcomers...)
	admitAll(t, clock, nodes, lineup, grace, 60, func(round int) {
		s, err := watch.Snapshot(context.Background(), "flush", clock.Now(), 0)
		if err != nil {
			t.Fatal(err)
		}
		if s.Active+s.Pending > capacity {
			t.Fatalf("round %d: %d active, %d pending, cap %d", round, s.Active, s.Pending, capacity)
		}
	})
	if at := time.Duration(waiting[0].admitted) * grace; at < 50*time.Second {
		t.Fatalf("%s was let in %v after the loss, while the slots held for the sessions from before ran a minute", waiting[0].name, at)
	}
}

// grace is the admission grace of the failure tests' rooms, the shortest
// allowed, so that an admission nobody claims frees its slot soon.
const grace = 5 * time.Second

// step moves the clock a second and ticks every node; none may fail.
func step(t *testing.T, clock *testClock, nodes []*node) {
	t.Helper()
	clock.Advance(time.Second)
	if err := tickAll(nodes); err != nil {
		t.Fatal(err)
	}
}

// newcomerGets503: a visitor with no ticket, while the store is away, is told
// to come back, as a page and as JSON, on each node, and given no ticket.
func newcomerGets503(t *testing.T, tr http.RoundTripper, nodes []*node) {
	t.Helper()
	for i, n := range nodes {
		v := newVisitor(tr)
		resp, body, err := v.get(n.url+"/events/42", false)
		if err != nil || resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !isWaitingPage(body) {
			t.Fatalf("newcomer's page on node %d: %v %d Retry-After %q", i, err, code(resp), resp.Header.Get("Retry-After"))
		}
		if strings.Contains(body, "keep your place") {
			t.Fatalf("node %d tells a newcomer, who has no place yet, that they keep theirs", i)
		}
		for _, path := range []string{"/events/42", "/_waiting-room/status"} {
			resp, body, err = v.get(n.url+path, true)
			var e errorBody
			if err != nil || resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" ||
				json.Unmarshal([]byte(body), &e) != nil || e.Error != "unavailable" {
				t.Fatalf("newcomer's JSON %s on node %d: %v %d %q", path, i, err, code(resp), body)
			}
		}
		if v.cookie(n.url, "foyer_ticket") != "" {
			t.Fatalf("node %d gave a ticket while it could not place anyone", i)
		}
	}
}
