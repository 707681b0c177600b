package redisstore_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/foyer-dev/foyer/internal/redistest"
	"github.com/foyer-dev/foyer/waitingroom"
	"github.com/foyer-dev/foyer/waitingroom/redisstore"
)

// The benchmarks run on a private redis-server each, so that INFO commandstats
// and INFO memory count this package's work and nothing else.
//
//	go test -run '^$' -bench . ./waitingroom/redisstore
//
// cmds/op counts the commands the client sends (EVALSHA, EVAL and any other):
// the round trips. redis-calls/op adds the commands the scripts run inside
// Redis, which cost server time but no round trip.

var benchT0 = time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)

func benchLimits() waitingroom.Limits {
	return waitingroom.Limits{Rate: 600, Cap: 5000, Session: 10 * time.Minute, Grace: 30 * time.Second, Retention: time.Hour, Open: true}
}

// benchStore starts a private server and returns a store on it, its scripts
// loaded, and a second client for INFO.
func benchStore(b *testing.B) (*redisstore.Store, *redis.Client) {
	b.Helper()
	srv := redistest.StartServer(b, nil)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, PoolSize: 16})
	admin := redis.NewClient(&redis.Options{Addr: srv.Addr, PoolSize: 1})
	b.Cleanup(func() { c.Close(); admin.Close() })
	s, err := redisstore.New(c)
	if err != nil {
		b.Fatal(err)
	}
	if err := s.LoadScripts(context.Background()); err != nil {
		b.Fatal(err)
	}
	return s, admin
}

// countCommands runs fn and reports, per op, the commands clients sent and the
// calls Redis executed, from INFO commandstats.
func countCommands(b *testing.B, admin *redis.Client, ops int, unit string, fn func()) {
	b.Helper()
	ctx := context.Background()
	before := redistest.CommandCalls(ctx, b, admin)
	b.ResetTimer()
	fn()
	b.StopTimer()
	after := redistest.CommandCalls(ctx, b, admin)
	var sent, calls int64
	for name, n := range after {
		if name == "info" {
			continue // our own measuring
		}
		d := n - before[name]
		calls += d
		switch name {
		case "evalsha", "eval", "evalsha_ro", "eval_ro":
			sent += d
		}
	}
	b.ReportMetric(float64(sent)/float64(ops), "cmds/"+unit)
	b.ReportMetric(float64(calls)/float64(ops), "redis-calls/"+unit)
}

// benchLineBehindOne is a room whose first visitor walked in, so that
// everyone who joins after waits: what a join meets in an on-sale's first
// minutes.
func benchLineBehindOne(b *testing.B) (*redisstore.Store, *redis.Client, waitingroom.Limits) {
	b.Helper()
	s, admin := benchStore(b)
	ctx := context.Background()
	if err := s.Init(ctx, "bench", waitingroom.Recall{}); err != nil {
		b.Fatal(err)
	}
	lim := benchLimits()
	s.Join(ctx, "bench", "first", benchT0, lim)
	return s, admin, lim
}

// BenchmarkJoin is a fan joining a room where others wait: the hot path of an
// on-sale's first minutes.
func BenchmarkJoin(b *testing.B) {
	s, admin, lim := benchLineBehindOne(b)
	ctx := context.Background()
	countCommands(b, admin, b.N, "join", func() {
		for i := range b.N {
			if _, err := s.Join(ctx, "bench", "v"+strconv.Itoa(i), benchT0, lim); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkJoinWeighed is BenchmarkJoinBatch with every fan weighed by
// join_limit (each from a network of its own, as a crowd is) and every
// fourth answering a seed: what a join costs the store with join_limit and
// challenge on, against BenchmarkJoinBatch in the same run.
func BenchmarkJoinWeighed(b *testing.B) {
	const joinBatchSize = 24
	s, admin, lim := benchLineBehindOne(b)
	lim.JoinLimit = waitingroom.JoinLimit{N: 20, Per: time.Minute}
	ctx := context.Background()
	batch := make([]waitingroom.Joiner, joinBatchSize)
	b.ReportAllocs()
	countCommands(b, admin, b.N, "join", func() {
		for i := 0; i < b.N; i += joinBatchSize {
			for k := range batch {
				n := i + k
				batch[k] = waitingroom.Joiner{Visitor: waitingroom.NewVisitorID().String(), Client: fmt.Sprintf("10.%d.%d.%d", n>>16&255, n>>8&255, n&255)}
				if n%4 == 0 {
					batch[k].Seed, batch[k].SeedUntil = "s"+strconv.Itoa(n), benchT0.Add(waitingroom.SeedLifetime)
				}
			}
			if _, err := s.JoinMany(ctx, "bench", batch, benchT0, lim); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkClaim is an admitted fan opening a session.
func BenchmarkClaim(b *testing.B) {
	s, admin := benchStore(b)
	ctx := context.Background()
	if err := s.Init(ctx, "bench", waitingroom.Recall{}); err != nil {
		b.Fatal(err)
	}
	closed := benchLimits()
	closed.Open = false
	for i := range b.N {
		if _, err := s.Join(ctx, "bench", "v"+strconv.Itoa(i), benchT0, closed); err != nil {
			b.Fatal(err)
		}
	}
	// One step admits them all: a budget of b.N a second and room for them.
	lim := benchLimits()
	lim.Rate, lim.Cap = 60*b.N, b.N
	if err := s.Advance(ctx, "bench", benchT0.Add(time.Second), lim); err != nil {
		b.Fatal(err)
	}
	at := benchT0.Add(2 * time.Second)
	countCommands(b, admin, b.N, "claim", func() {
		for i := range b.N {
			res, err := s.Claim(ctx, "bench", "v"+strconv.Itoa(i), uint64(i), at, lim)
			if err != nil || res.Status != waitingroom.Claimed {
				b.Fatalf("claim %d: %v %v", i, res.Status, err)
			}
		}
	})
}

// BenchmarkSnapshot is a node refreshing its view of a room.
func BenchmarkSnapshot(b *testing.B) {
	s, admin := benchStore(b)
	ctx := context.Background()
	if err := s.Init(ctx, "bench", waitingroom.Recall{}); err != nil {
		b.Fatal(err)
	}
	countCommands(b, admin, b.N, "snapshot", func() {
		for range b.N {
			if _, err := s.Snapshot(ctx, "bench", benchT0, 0); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkMemoryPerWaitingFan measures what 100,000 waiting fans cost in Redis
// memory (INFO memory used_memory, before and after), for this store and, in
// the same run on the same server, for the ordinary design that keeps one
// sorted-set member per fan (ZADD queue <join order> <visitor id>).
func BenchmarkMemoryPerWaitingFan(b *testing.B) {
	const fans = 100_000
	s, admin := benchStore(b)
	ctx := context.Background()
	closed := benchLimits()
	closed.Open = false
	ids := visitorIDs(b, fans)
	// Open every connection the joins will use before the first reading, so
	// that their buffers are in both readings and not counted as fans.
	if err := s.Init(ctx, "warm-up", waitingroom.Recall{}); err != nil {
		b.Fatal(err)
	}
	joinAll(b, s, "warm-up", ids[:1000], closed)

	var ours, baseline float64
	b.ResetTimer()
	for iter := range b.N {
		room := fmt.Sprintf("mem-%d", iter)
		if err := s.Init(ctx, room, waitingroom.Recall{}); err != nil {
			b.Fatal(err)
		}
		m0 := redistest.HeldMemory(ctx, b, admin)
		joinAll(b, s, room, ids, closed)
		m1 := redistest.HeldMemory(ctx, b, admin)
		ours += float64(m1-m0) / fans

		queue := "baseline:{" + room + "}:queue"
		for lo := 0; lo < fans; lo += 1000 {
			pipe := admin.Pipeline()
			for i := lo; i < min(lo+1000, fans); i++ {
				pipe.ZAdd(ctx, queue, redis.Z{Score: float64(i), Member: ids[i]})
			}
			if _, err := pipe.Exec(ctx); err != nil {
				b.Fatal(err)
			}
		}
		m2 := redistest.HeldMemory(ctx, b, admin)
		baseline += float64(m2-m1) / fans
	}
	b.StopTimer()
	ours /= float64(b.N)
	baseline /= float64(b.N)
	b.ReportMetric(ours, "bytes/fan")
	b.ReportMetric(baseline, "zset-bytes/fan")
	// The ratio is only meaningful when ours is measurably above zero.
	if ours > 0 {
		b.ReportMetric(baseline/ours, "x-smaller")
	}
	b.ReportMetric(0, "ns/op")
}

// visitorIDs makes n ids like the gateway's: 16 random bytes, base64url.
func visitorIDs(b *testing.B, n int) []string {
	ids := make([]string, n)
	var raw [16]byte
	for i := range ids {
		if _, err := rand.Read(raw[:]); err != nil {
			b.Fatal(err)
		}
		ids[i] = base64.RawURLEncoding.EncodeToString(raw[:])
	}
	return ids
}

// joinAll joins every id into room from a few goroutines, as several gateway
// connections would.
func joinAll(b *testing.B, s *redisstore.Store, room string, ids []string, lim waitingroom.Limits) {
	ctx := context.Background()
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Value
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(len(ids)) {
					return
				}
				if _, err := s.Join(ctx, room, ids[i], benchT0, lim); err != nil {
					failed.Store(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err, ok := failed.Load().(error); ok {
		b.Fatal(err)
	}
}

// heartbeatMemory joins fans into room and then has every one of them seen
// in each of the windows a store keeps, stepping the controller (which counts
// the live places) in each: the most liveness can hold for a line. It returns
// the bytes a fan cost: in the room's keys (MEMORY USAGE, key names and
// allocations included), and in the server's used_memory.
func heartbeatMemory(tb testing.TB, s *redisstore.Store, admin *redis.Client, room string, fans int) (keys, used float64) {
	// The scripts' compiled code and the Lua heap, which grows with the
	// arguments of the biggest calls, cost the server a few hundred
	// kilobytes once, whatever the line: a first room of the same size pays
	// for them, and the Lua heap is collected before each reading.
	fillBeats(tb, s, room+"-warm-up", fans)
	ctx := context.Background()
	gc := func() {
		if err := admin.Eval(ctx, "collectgarbage('collect') return 0", nil).Err(); err != nil {
			tb.Fatal(err)
		}
	}
	gc()
	m0 := redistest.HeldMemory(ctx, tb, admin)
	fillBeats(tb, s, room, fans)
	gc()
	m1 := redistest.HeldMemory(ctx, tb, admin)
	names, err := admin.Keys(ctx, "*{"+room+"}*").Result()
	if err != nil {
		tb.Fatal(err)
	}
	var sum int64
	for _, k := range names {
		n, err := admin.MemoryUsage(ctx, k).Result()
		if err != nil {
			tb.Fatal(err)
		}
		sum += n
	}
	return float64(sum) / float64(fans), float64(m1-m0) / float64(fans)
}

// fillBeats joins fans into room, and has each seen in every window kept.
func fillBeats(tb testing.TB, s *redisstore.Store, room string, fans int) {
	ctx := context.Background()
	lim := benchLimits()
	lim.Open = false
	lim.WaitingIdle = 2 * time.Minute
	if err := s.Init(ctx, room, waitingroom.Recall{}); err != nil {
		tb.Fatal(err)
	}
	for lo := 0; lo < fans; lo += 1000 {
		vs := make([]string, min(1000, fans-lo))
		for i := range vs {
			vs[i] = "v" + strconv.Itoa(lo+i)
		}
		if _, err := s.JoinMany(ctx, room, joinersOf(vs), benchT0, lim); err != nil {
			tb.Fatal(err)
		}
	}
	window := waitingroom.BeatWindow(lim.WaitingIdle)
	for w := range waitingroom.BeatWindows + 1 {
		now := benchT0.Add(time.Duration(w) * window)
		// The first window's step records where the judged places end; the
		// next five hold the beats, as many as a store keeps at once.
		for lo := 0; w > 0 && lo < fans; lo += 10_000 {
			places := make([]uint64, 0, 10_000)
			for p := lo; p < min(lo+10_000, fans); p++ {
				places = append(places, uint64(p))
			}
			if err := s.Beat(ctx, room, waitingroom.Beats{Places: places}, now, lim); err != nil {
				tb.Fatal(err)
			}
		}
		if err := s.Advance(ctx, room, now, lim); err != nil {
			tb.Fatal(err)
		}
	}
	snap, err := s.Snapshot(ctx, room, benchT0.Add(time.Duration(waitingroom.BeatWindows)*window), 0)
	if err != nil {
		tb.Fatal(err)
	}
	if snap.Live.Young != uint64(fans) || len(snap.Live.Counts) == 0 || snap.Live.Counts[0] != waitingroom.LiveBlock {
		tb.Fatalf("the line was not judged whole: young from %d, counts %v", snap.Live.Young, snap.Live.Counts[:min(3, len(snap.Live.Counts))])
	}
}

// TestHeartbeatsCostUnderAByteAFan: with every fan beating in every window
// kept, a waiting fan costs Redis at most a byte (five bits of windows, and
// the allocations around them).
func TestHeartbeatsCostUnderAByteAFan(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a redis-server")
	}
	srv := redistest.StartServer(t, nil)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, PoolSize: 1})
	defer c.Close()
	s, err := redisstore.New(c)
	if err != nil {
		t.Fatal(err)
	}
	keys, used := heartbeatMemory(t, s, c, "r", 100_000)
	t.Logf("a waiting fan with heartbeats: %.3f bytes in the room's keys, %.3f in used_memory", keys, used)
	if keys > 1 {
		t.Fatalf("%.3f bytes a waiting fan with heartbeats; at most 1", keys)
	}
}

// BenchmarkMemoryPerWaitingFanWithHeartbeats is BenchmarkMemoryPerWaitingFan
// with liveness at its fullest: 100,000 waiting fans, every one seen in every
// heartbeat window the store keeps.
func BenchmarkMemoryPerWaitingFanWithHeartbeats(b *testing.B) {
	s, admin := benchStore(b)
	var keys, used float64
	for iter := range b.N {
		k, u := heartbeatMemory(b, s, admin, fmt.Sprintf("hb-%d-%d", iter, time.Now().UnixNano()), 100_000)
		keys, used = keys+k, used+u
	}
	b.ReportMetric(keys/float64(b.N), "key-bytes/fan")
	b.ReportMetric(used/float64(b.N), "used-bytes/fan")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkJoinBatch is a batch of joins as a crowd sends them (see
// waitingroom's joinBatcher): one script call for joinBatchSize fans who
// wait. ns/op and allocs/op are per fan.
func BenchmarkJoinBatch(b *testing.B) {
	const joinBatchSize = 24
	s, admin, lim := benchLineBehindOne(b)
	ctx := context.Background()
	visitors := make([]waitingroom.Joiner, joinBatchSize)
	for i := range visitors {
		visitors[i].Visitor = waitingroom.NewVisitorID().String()
	}
	b.ReportAllocs()
	countCommands(b, admin, b.N, "join", func() {
		for i := 0; i < b.N; i += joinBatchSize {
			if _, err := s.JoinMany(ctx, "bench", visitors, benchT0, lim); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkMemoryPerJoinCheck is what the store keeps for join_limit and the
// proof of work, for every node sharing it: a key per client network while
// its allowance is not whole, and a key per seed that bought a place, until
// the seed expires (joinchecks.go). Each sub-benchmark makes 100,000 places,
// each from a network of its own or with a seed of its own, and reports the
// bytes each cost: in its key (MEMORY USAGE) and in the server's used_memory,
// which also counts the key's expiry.
func BenchmarkMemoryPerJoinCheck(b *testing.B) {
	const n = 100_000
	cases := []struct {
		name   string
		joiner func(i int) waitingroom.Joiner
	}{
		{"network=IPv4", func(i int) waitingroom.Joiner {
			return waitingroom.Joiner{Client: fmt.Sprintf("10.%d.%d.%d", i>>16, i>>8&255, i&255)}
		}},
		{"network=IPv6", func(i int) waitingroom.Joiner {
			return waitingroom.Joiner{Client: fmt.Sprintf("2001:db8:%x:%x::/64", i>>16, i&0xffff)}
		}},
		{"seed", func(i int) waitingroom.Joiner {
			// A seed's identifier as the room names it: 12 bytes, base64url.
			var id [12]byte
			binary.BigEndian.PutUint64(id[4:], uint64(i))
			return waitingroom.Joiner{Seed: base64.RawURLEncoding.EncodeToString(id[:]), SeedUntil: benchT0.Add(waitingroom.SeedLifetime + 30*time.Second)}
		}},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			s, admin := benchStore(b)
			ctx := context.Background()
			lim := benchLimits()
			lim.Open = false
			// A long interval, so that no network's key expires while it is
			// measured: its size does not depend on the limit.
			lim.JoinLimit = waitingroom.JoinLimit{N: 1, Per: time.Hour}
			var keys, used float64
			for iter := range b.N {
				room := fmt.Sprintf("jc-%d", iter)
				fill := func(room string) {
					if err := s.Init(ctx, room, waitingroom.Recall{}); err != nil {
						b.Fatal(err)
					}
					batch := make([]waitingroom.Joiner, 0, 256)
					for i := range n {
						j := tc.joiner(i)
						j.Visitor = "v"
						batch = append(batch, j)
						if len(batch) == cap(batch) || i == n-1 {
							if _, err := s.JoinMany(ctx, room, batch, benchT0, lim); err != nil {
								b.Fatal(err)
							}
							batch = batch[:0]
						}
					}
				}
				fill(room + "-warm-up") // scripts and the Lua heap, paid once
				gc := func() {
					if err := admin.Eval(ctx, "collectgarbage('collect') return 0", nil).Err(); err != nil {
						b.Fatal(err)
					}
				}
				gc()
				m0 := redistest.HeldMemory(ctx, b, admin)
				fill(room)
				gc()
				m1 := redistest.HeldMemory(ctx, b, admin)
				names, err := admin.Keys(ctx, "*{"+room+"}:[js][le]*").Result()
				if err != nil {
					b.Fatal(err)
				}
				if len(names) != n {
					b.Fatalf("%d keys, want %d", len(names), n)
				}
				var sum int64
				for _, k := range names {
					v, err := admin.MemoryUsage(ctx, k).Result()
					if err != nil {
						b.Fatal(err)
					}
					sum += v
				}
				keys += float64(sum) / n
				used += float64(m1-m0) / n
			}
			b.ReportMetric(keys/float64(b.N), "key-bytes/each")
			b.ReportMetric(used/float64(b.N), "used-bytes/each")
			b.ReportMetric(0, "ns/op")
		})
	}
}
