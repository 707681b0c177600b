package integration

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/foyer-dev/foyer/gateway"
	"github.com/foyer-dev/foyer/internal/cutproxy"
	"github.com/foyer-dev/foyer/internal/redistest"
	"github.com/foyer-dev/foyer/waitingroom"
)

// Limits across nodes (docs/bots.md, "Bots and abuse"): two gateway nodes share a
// private redis-server behind a round-robin balancer, the test sending one
// client's requests to each in turn. join_limit and the spent seeds are kept
// by the store for the room, so the nodes together give what one would.

// privateRedisDial starts a redis-server of the test's own and dials new
// clients of it, one per node.
func privateRedisDial(t *testing.T) func() redis.UniversalClient {
	srv := redistest.StartServer(t, nil)
	return func() redis.UniversalClient { return redis.NewClient(&redis.Options{Addr: srv.Addr}) }
}

// roomSeq is the number of places the store handed out in room.
func roomSeq(t *testing.T, n *node) uint64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := n.room().Tick(ctx); err != nil {
		t.Fatal(err)
	}
	return n.room().Snapshot().Seq
}

// TestMultiNodeJoinLimitRoomWide: with join_limit 3/m, one client that
// alternates between two nodes gets 3 places in the minute, not 3 on each;
// the rest are 429 with Retry-After and no cookie, whichever node answers.
// Once the limit gives it another place, it gets exactly one, and another
// client is never held back.
func TestMultiNodeJoinLimitRoomWide(t *testing.T) {
	t.Parallel()
	clock := newTestClock()
	dial := privateRedisDial(t)
	key := deploymentKey(t)
	cfg := gateway.Handler{Room: "limit-nodes", Settings: waitingroom.Settings{
		TotalActiveUsers: 1000, NewUsersPerMinute: 60, QueueAll: true,
		JoinLimit: waitingroom.JoinLimit{N: 3, Per: time.Minute},
	}}
	nodes := []*node{
		newNode(t, clock.Now, cfg, redisNodeStore(t, dial, "foyer"), key),
		newNode(t, clock.Now, cfg, redisNodeStore(t, dial, "foyer"), key),
	}
	bot := newPeer(t, "127.0.0.21")
	places, refused := 0, 0
	for i := range 12 {
		a := bot.do(http.MethodGet, nodes[i%2].url+"/events/42", "Accept", "application/json")
		switch {
		case a.code == http.StatusOK && a.ticket:
			places++
		case a.code == http.StatusTooManyRequests && a.retryAfter != "" && a.cookies == 0:
			refused++
		default:
			t.Fatalf("request %d through node %d: %d %q (ticket %v, Retry-After %q)", i, i%2, a.code, a.body, a.ticket, a.retryAfter)
		}
	}
	if places != 3 || refused != 9 {
		t.Fatalf("12 joins of one client over two nodes with join_limit 3/m: %d places, %d refused; want 3 places for the room, not 3 per node", places, refused)
	}
	other := newPeer(t, "127.0.0.22")
	if a := other.do(http.MethodGet, nodes[1].url+"/events/42", "Accept", "application/json"); a.code != http.StatusOK || !a.ticket {
		t.Fatalf("another client: %d %q, want a place", a.code, a.body)
	}
	// 20 s on the limit has one place for the client again: one, through
	// whichever node.
	for range 20 {
		step(t, clock, nodes)
	}
	places = 0
	for i := range 4 {
		if a := bot.do(http.MethodGet, nodes[(i+1)%2].url+"/events/42", "Accept", "application/json"); a.ticket {
			places++
		}
	}
	if places != 1 {
		t.Fatalf("20 s later, 4 joins over two nodes: %d places, want 1", places)
	}
	if seq := roomSeq(t, nodes[0]); seq != 5 {
		t.Fatalf("the store handed out %d places, want 5 (3 + 1 for the client, 1 for the other)", seq)
	}
}

// TestMultiNodeJoinLimitStoreAwayKeepsAllowance: joins answered 503 while
// the store is away made no place, so they take none of the client's
// allowance, on either node or in the store: once it is back the client has
// the rest of its burst for the room, and no more.
func TestMultiNodeJoinLimitStoreAwayKeepsAllowance(t *testing.T) {
	t.Parallel()
	clock := newTestClock()
	srv := redistest.StartServer(t, nil)
	cut := cutproxy.Start(t, srv.Addr)
	dial := func() redis.UniversalClient { return redis.NewClient(&redis.Options{Addr: cut.Addr(), MaxRetries: -1}) }
	key := deploymentKey(t)
	cfg := gateway.Handler{Room: "limit-away", Settings: waitingroom.Settings{
		TotalActiveUsers: 1000, NewUsersPerMinute: 60, QueueAll: true,
		JoinLimit: waitingroom.JoinLimit{N: 3, Per: time.Minute},
	}}
	nodes := []*node{
		newNode(t, clock.Now, cfg, redisNodeStore(t, dial, "foyer"), key),
		newNode(t, clock.Now, cfg, redisNodeStore(t, dial, "foyer"), key),
	}
	bot := newPeer(t, "127.0.0.24")
	join := func(n *node) reply { return bot.do(http.MethodGet, n.url+"/events/42", "Accept", "application/json") }
	if a := join(nodes[0]); !a.ticket {
		t.Fatalf("first join: %d %q, want a place", a.code, a.body)
	}
	cut.Cut()
	for i := range 6 {
		if a := join(nodes[i%2]); a.code != http.StatusServiceUnavailable || a.ticket {
			t.Fatalf("join %d with the store away, through node %d: %d %q, want 503 and no place", i, i%2, a.code, a.body)
		}
	}
	cut.Restore()
	step(t, clock, nodes) // each node finds its store again
	places := 0
	for i := range 8 {
		a := join(nodes[i%2])
		switch {
		case a.ticket:
			places++
		case a.code != http.StatusTooManyRequests:
			t.Fatalf("join %d once the store is back: %d %q, want a place or 429", i, a.code, a.body)
		}
	}
	if places != 2 {
		t.Fatalf("once the store is back: %d places, want the 2 left of the burst of 3 (the 503s took none, and the nodes share one allowance)", places)
	}
	if seq := roomSeq(t, nodes[0]); seq != 3 {
		t.Fatalf("the store handed out %d places, want 3", seq)
	}
}

// TestMultiNodeSeedBuysOnePlace: one solved seed, answered on one node, then
// replayed on the other, on the first again, and on the first after it
// restarted (its own memory of spent seeds gone): one place in all, every
// replay a 409 seed_spent that sets no cookie. Each replay is judged on its
// own, so that a failure says which of them made a place.
func TestMultiNodeSeedBuysOnePlace(t *testing.T) {
	t.Parallel()
	clock := newTestClock() // time stands still
	dial := privateRedisDial(t)
	key := deploymentKey(t)
	cfg := gateway.Handler{Room: "seed-nodes", Settings: waitingroom.Settings{
		TotalActiveUsers: 1000, NewUsersPerMinute: 60, QueueAll: true,
		Challenge: waitingroom.Challenge{PoWBits: 8},
	}}
	a := newNode(t, clock.Now, cfg, redisNodeStore(t, dial, "foyer"), key)
	b := newNode(t, clock.Now, cfg, redisNodeStore(t, dial, "foyer"), key)
	solver := newPeer(t, "127.0.0.23")

	first := solver.do(http.MethodGet, a.url+"/events/42", "Accept", "application/json")
	answer := solvePuzzle(t, first)
	if r := solver.post(a.url+"/_waiting-room/join", answer); r.code != http.StatusOK || !r.ticket {
		t.Fatalf("the answer on node a: %d %q, want a place", r.code, r.body)
	}
	replayed := func(what string, n *node) {
		t.Helper()
		r := solver.post(n.url+"/_waiting-room/join", answer)
		var e errorBody
		_ = json.Unmarshal([]byte(r.body), &e)
		if r.code != http.StatusConflict || e.Error != "seed_spent" || r.cookies != 0 {
			t.Errorf("the answer replayed %s: %d %q (%d cookies), want 409 seed_spent and no cookie", what, r.code, r.body, r.cookies)
		}
	}
	replayed("on node a", a)
	replayed("on node b", b)
	// Node a restarts: a new process remembers no seed of its own.
	a.srv.Close()
	a = newNode(t, clock.Now, cfg, redisNodeStore(t, dial, "foyer"), key)
	replayed("on node a after its restart", a)
	replayed("on node b again", b)
	if seq := roomSeq(t, a); seq != 1 {
		t.Fatalf("one solved seed made %d places over two nodes and a restart, want 1", seq)
	}
}
