package integration

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/foyer-dev/foyer/gateway"
	"github.com/foyer-dev/foyer/internal/redistest"
	"github.com/foyer-dev/foyer/waitingroom"
	"github.com/foyer-dev/foyer/waitingroom/redisstore"
)

// failoverTarget is how long after a replica's promotion every node must
// reach the store again.
const failoverTarget = 3 * time.Second

// TestFaultClusterFailover: the master that holds the room is killed (SIGKILL)
// in a Redis Cluster of three masters with one replica each, under three
// nodes whose clients are made from a redis+cluster:// URL as the Caddyfile's
// would be. The origin revokes a pass through a node that cannot reach the
// master. Every node must reach the store again within failoverTarget of the
// replica's promotion; the revocation reaches the store and every node
// refuses the pass; nobody was admitted while the master was away; the line
// then moves in order, and the origin never saw more sessions valid at once
// than the cap.
func TestFaultClusterFailover(t *testing.T) {
	// Not parallel: it holds the failover to a wall-clock target, which other
	// tests sharing the two cores would stretch.
	clock := newTestClock()
	cluster := redistest.StartReplicatedCluster(t)
	url := "redis+cluster://" + strings.Join(cluster.Addrs, ",")
	dial := func() redis.UniversalClient {
		c, err := redisstore.NewClient(url)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	key := deploymentKey(t)
	ledger := newPassLedger(key, clock.Now)
	// Two slots, both taken before the kill: nobody may be admitted during
	// the failover but through the slot the revocation frees.
	const capacity = 2
	const longGrace = 30 * time.Second
	cfg := gateway.Handler{Room: "failover", Settings: waitingroom.Settings{TotalActiveUsers: capacity, NewUsersPerMinute: 60, SessionDuration: time.Minute, AdmissionGrace: longGrace}}
	var nodes []*node
	for range 3 {
		nodes = append(nodes, ledgerNode(t, clock.Now, cfg, redisNodeStore(t, dial, "foyer"), key, ledger))
	}
	tr := sharedTransport(t)

	first := walkIn(t, nodes[0], tr)
	fans := joinLine(t, nodes, tr, "fan", 5, 1)
	step(t, clock, nodes)
	if st := fans[0].status(t, nodes[1]); st.State != waitingroom.StateAdmitted {
		t.Fatalf("%s: %s, want admitted", fans[0].name, st.State)
	}
	inside, waiting := fans[0], fans[1:]
	shown := make(map[*lineFan]uint64)
	for _, f := range waiting {
		shown[f] = *f.status(t, nodes[2]).Position
	}

	master, replica := roomShards(t, cluster, "foyer:{failover}:meta")
	// The failover under test is to a replica that holds the room. Redis
	// streams a freshly synced replica its master's writes only once the
	// replica acknowledges the sync, up to a second later; on a loaded
	// machine the kill can come first, and the promoted replica has never
	// seen the room. The nodes then re-seed it, as after Redis restarted
	// empty (the tests that restart it cover that path): held slots for a
	// session and a grace per unheld place of the re-seed's margin, far
	// longer than this line's rounds.
	synced := time.Now()
	redistest.WaitReplicated(t, master, 5*time.Second)
	t.Logf("replica acknowledged the room's writes in %v", time.Since(synced).Round(time.Millisecond))
	ctx, cancel := context.WithCancel(context.Background())
	ticks := startTicking(ctx, nodes)
	real := followRealTime(clock)
	killed := time.Now()
	master.Stop(t)

	// The origin ends a session through a node that cannot reach the master.
	if !inside.visit(t, nodes[1], "/done") {
		t.Fatalf("%s's checkout did not reach the origin", inside.name)
	}
	if _, err := nodes[1].room().CheckPass(ledger.revoked(clock.Now())[0]); err == nil {
		t.Fatal("the node that took the revocation still accepts the pass")
	}
	// Nobody gets in, and newcomers are told to come back.
	for i, f := range waiting {
		n := nodes[i%len(nodes)]
		st := f.status(t, n)
		if st.State != waitingroom.StateQueued || f.v.cookie(n.url, "foyer_pass") != "" {
			t.Fatalf("%s during the failover: %+v, want queued, no pass", f.name, st)
		}
		if *st.Position > shown[f] {
			t.Fatalf("%s's position rose from %d to %d", f.name, shown[f], *st.Position)
		}
	}
	for i, n := range nodes {
		resp, _, err := newVisitor(tr).get(n.url+"/_waiting-room/status", true)
		if err != nil || resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
			t.Fatalf("newcomer on node %d during the failover: %v %d, want 503 with Retry-After", i, err, code(resp))
		}
	}

	promoted := redistest.WaitPromoted(t, replica, 30*time.Second, real.catchUp)
	recovered := ticks.waitRecovered(t, 15*time.Second, real.catchUp)
	cancel()
	ticks.wg.Wait()
	t.Logf("replica promoted %v after the kill", promoted.Sub(killed).Round(10*time.Millisecond))
	for i, at := range recovered {
		d := max(0, at.Sub(promoted))
		t.Logf("node %d healthy %v after the promotion", i, d.Round(10*time.Millisecond))
		if d > failoverTarget {
			t.Errorf("node %d reached the store %v after the promotion, want within %v", i, d, failoverTarget)
		}
	}

	step(t, clock, nodes)
	for i, n := range nodes {
		if !n.room().Healthy() {
			t.Fatalf("node %d is not healthy after the failover", i)
		}
		if u := n.room().Unsent(); u != 0 {
			t.Fatalf("node %d still holds %d revocations for the store", i, u)
		}
	}
	for i, n := range nodes {
		if r := n.room().Stats().Reseeds.Load(); r != 0 {
			t.Fatalf("node %d re-seeded the room %d times: the promoted replica lost it", i, r)
		}
	}
	refusedEverywhere(t, nodes, ledger.revoked(clock.Now()), "after the failover")

	later := joinLine(t, nodes, tr, "later", 3, 0)
	if !first.visit(t, nodes[0], "/done") {
		t.Fatal("the first fan's checkout did not reach the origin")
	}
	admitAll(t, clock, nodes, append(waiting, later...), 2*time.Second, 60, nil)
	ledger.check(t, capacity)
}

// roomShards returns the master that holds key and its replica.
func roomShards(t *testing.T, c *redistest.ReplicatedCluster, key string) (master, replica *redistest.Server) {
	t.Helper()
	cl := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs})
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	m, err := cl.MasterForKey(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	addr := m.Options().Addr
	return c.ServerAt(t, addr), c.ReplicaOf(t, addr)
}

// realTime moves a test clock on with the wall clock: while a real Cluster
// fails over, the nodes' notion of staleness must follow real time.
type realTime struct {
	clock *testClock
	last  time.Time
}

func followRealTime(clock *testClock) *realTime { return &realTime{clock: clock, last: time.Now()} }

// catchUp moves the clock by the real time since the last call.
func (r *realTime) catchUp() {
	n := time.Now()
	r.clock.Advance(n.Sub(r.last))
	r.last = n
}

// ticking runs every node's controller loop in real time, as a node would,
// and notes when each first succeeds after a failure.
type ticking struct {
	wg        sync.WaitGroup
	mu        sync.Mutex
	failed    []bool
	recovered []time.Time
}

// tickEvery is the nodes' loop period in the failover test: the room's
// RefreshInterval.
const tickEvery = waitingroom.RefreshInterval

func startTicking(ctx context.Context, nodes []*node) *ticking {
	tk := &ticking{failed: make([]bool, len(nodes)), recovered: make([]time.Time, len(nodes))}
	for i, n := range nodes {
		tk.wg.Go(func() {
			t := time.NewTicker(tickEvery)
			defer t.Stop()
			for {
				err := n.room().Tick(ctx)
				done := time.Now()
				tk.mu.Lock()
				if err != nil && ctx.Err() == nil {
					tk.failed[i] = true
				} else if err == nil && tk.failed[i] && tk.recovered[i].IsZero() && n.room().Healthy() {
					tk.recovered[i] = done
				}
				tk.mu.Unlock()
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
			}
		})
	}
	return tk
}

// waitRecovered waits until every node failed and then succeeded, calling
// meanwhile every 20 ms, and returns when each recovered.
func (tk *ticking) waitRecovered(t *testing.T, within time.Duration, meanwhile func()) []time.Time {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		meanwhile()
		tk.mu.Lock()
		done := true
		for _, at := range tk.recovered {
			done = done && !at.IsZero()
		}
		out := append([]time.Time(nil), tk.recovered...)
		failed := append([]bool(nil), tk.failed...)
		tk.mu.Unlock()
		if done {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("nodes not back within %v of the promotion: failed %v, recovered at %v", within, failed, out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
