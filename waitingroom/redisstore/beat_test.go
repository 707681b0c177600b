package redisstore_test

import (
	"context"
	_ "embed"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/foyer-dev/foyer/internal/redistest"
	"github.com/foyer-dev/foyer/waitingroom"
	"github.com/foyer-dev/foyer/waitingroom/memstore"
	"github.com/foyer-dev/foyer/waitingroom/redisstore"
)

// beatLine is a line of places and its polling fans, spread evenly over it:
// dense when they are most of its places, scattered when they are few and
// far between, which touches the most heartbeat blocks for their number.
type beatLine struct {
	name     string
	places   uint64
	fans     int
	sessions int // admitted fans whose sessions a node saw used
}

var beatLines = []beatLine{
	{name: "dense-1e4", places: 10_000, fans: 10_000},
	{name: "scattered-1e6", places: 1_000_000, fans: 10_000},
	{name: "scattered-1e7", places: 10_000_000, fans: 10_000},
	{name: "dense-1e4+sessions", places: 10_000, fans: 10_000, sessions: 5_000},
}

func (l beatLine) polling() []uint64 {
	out := make([]uint64, l.fans)
	for i := range out {
		out[i] = uint64(i) * l.places / uint64(l.fans)
	}
	return out
}

func (l beatLine) visitors() []string {
	out := make([]string, l.sessions)
	for i := range out {
		out[i] = "s" + strconv.Itoa(i)
	}
	return out
}

// newBeatRoom creates a room of l.places waiting places and l.sessions live
// sessions, and returns its name and the limits of its steps.
func newBeatRoom(tb testing.TB, s *redisstore.Store, l beatLine) (string, waitingroom.Limits) {
	tb.Helper()
	room := fmt.Sprintf("beat-%s-%d", l.name, time.Now().UnixNano())
	seed := waitingroom.Recall{Counters: waitingroom.Counters{Seq: l.places}}
	for _, v := range l.visitors() {
		seed.Sessions = append(seed.Sessions, waitingroom.HeldSession{Visitor: v, Until: benchT0.Add(time.Hour), Forget: benchT0.Add(2 * time.Hour)})
	}
	if err := s.Init(context.Background(), room, seed); err != nil {
		tb.Fatal(err)
	}
	lim := benchLimits()
	lim.Open = false
	lim.Cap = max(lim.Cap, l.sessions)
	lim.WaitingIdle = time.Minute
	return room, lim
}

// beatSeconds has one node send, each second for seconds, a Beat of every
// polling fan of l (in the random order a node's map gives them) and every
// session: the most one node can send for that line. The windows are 15 s,
// so a minute creates every block anew four times. send is Store.Beat, or
// the baseline.
func beatSeconds(tb testing.TB, send beatFunc, room string, lim waitingroom.Limits, l beatLine, seconds int) {
	tb.Helper()
	ctx := context.Background()
	places, visitors := l.polling(), l.visitors()
	rng := rand.New(rand.NewPCG(uint64(l.places), uint64(l.fans)))
	for sec := range seconds {
		rng.Shuffle(len(places), func(i, j int) { places[i], places[j] = places[j], places[i] })
		b := waitingroom.Beats{Places: places, Sessions: visitors}
		if err := send(ctx, room, b, benchT0.Add(time.Duration(sec)*time.Second), lim); err != nil {
			tb.Fatal(err)
		}
	}
}

type beatFunc func(ctx context.Context, room string, b waitingroom.Beats, now time.Time, lim waitingroom.Limits) error

//go:embed testdata/beat_setbit.lua
var setbitBeatSrc string

// setbitBeat is the baseline: the heartbeat script as it was, one SETBIT per
// place and every place in one call.
var setbitBeat = redisstore.ScriptOf(setbitBeatSrc)

func setbitBeats(c *redis.Client) beatFunc {
	return func(ctx context.Context, room string, b waitingroom.Beats, now time.Time, lim waitingroom.Limits) error {
		args := []any{now.UnixMicro(), waitingroom.BeatWindow(lim.WaitingIdle).Microseconds(), len(b.Places)}
		for _, p := range b.Places {
			args = append(args, p)
		}
		for _, v := range b.Sessions {
			args = append(args, v)
		}
		return setbitBeat.Run(ctx, c, redisstore.RoomKeys(redisstore.DefaultPrefix, room), args...).Err()
	}
}

// scriptTimes reads SLOWLOG (which the caller had log every command) for the
// calls of the script sha: how long Redis ran each, blocking every other
// client meanwhile.
func scriptTimes(tb testing.TB, admin *redis.Client, sha string) []time.Duration {
	tb.Helper()
	log, err := admin.SlowLogGet(context.Background(), -1).Result()
	if err != nil {
		tb.Fatal(err)
	}
	var out []time.Duration
	for _, e := range log {
		if len(e.Args) >= 2 && strings.EqualFold(e.Args[0], "evalsha") && e.Args[1] == sha {
			out = append(out, e.Duration)
		}
	}
	return out
}

// slowlogFrom has the server's SLOWLOG keep every command that takes
// micros µs or more from now on (negative: none), and clears it and INFO
// commandstats.
func slowlogFrom(tb testing.TB, admin *redis.Client, micros int) {
	tb.Helper()
	ctx := context.Background()
	for _, err := range []error{
		admin.ConfigSet(ctx, "slowlog-log-slower-than", strconv.Itoa(micros)).Err(),
		admin.ConfigSet(ctx, "slowlog-max-len", "1000000").Err(),
		admin.SlowLogReset(ctx).Err(),
		admin.ConfigResetStat(ctx).Err(),
	} {
		if err != nil {
			tb.Fatal(err)
		}
	}
}

// scriptStats reads INFO commandstats: the EVALSHA calls and their µs per
// call, and the commands the scripts ran inside Redis.
func scriptStats(tb testing.TB, admin *redis.Client) (calls int64, usPerCall float64, inner int64) {
	tb.Helper()
	m := redistest.Info(context.Background(), tb, admin, "commandstats")
	for name, stats := range m {
		var n int64
		for _, kv := range strings.Split(stats, ",") {
			k, v, _ := strings.Cut(kv, "=")
			switch {
			case k == "calls":
				n, _ = strconv.ParseInt(v, 10, 64)
			case k == "usec_per_call" && name == "cmdstat_evalsha":
				usPerCall, _ = strconv.ParseFloat(v, 64)
			}
		}
		switch name {
		case "cmdstat_evalsha":
			calls = n
		case "cmdstat_info", "cmdstat_config", "cmdstat_slowlog":
		default:
			inner += n
		}
	}
	return calls, usPerCall, inner
}

// windowBytes is what the heartbeat windows of room hold in Redis (MEMORY
// USAGE of each, key and allocations included), per window.
func windowBytes(tb testing.TB, admin *redis.Client, room string) float64 {
	tb.Helper()
	ctx := context.Background()
	names, err := admin.Keys(ctx, "*{"+room+"}:hb:*").Result()
	if err != nil {
		tb.Fatal(err)
	}
	windows := map[string]bool{}
	var sum int64
	for _, k := range names {
		n, err := admin.MemoryUsage(ctx, k, 0).Result()
		if err != nil {
			tb.Fatal(err)
		}
		sum += n
		parts := strings.Split(k, ":")
		windows[parts[len(parts)-2]] = true
	}
	if len(windows) == 0 {
		tb.Fatal("no heartbeat window")
	}
	return float64(sum) / float64(len(windows))
}

func percentile(d []time.Duration, q float64) float64 {
	s := slices.Clone(d)
	slices.Sort(s)
	i := int(q * float64(len(s)-1))
	return float64(s[i].Nanoseconds()) / 1e3
}

// BenchmarkBeatScript measures how long Redis runs the heartbeat script
// while one node sends the beats of 10,000 polling fans every second, on a
// dense line and on scattered ones, from Redis's own figures, against the
// script as it was (one SETBIT per place, all in one call) in the same run on
// the same server:
//
//	go test -run '^$' -bench BeatScript -benchtime 1x ./waitingroom/redisstore
//
// usec/call is INFO commandstats' usec_per_call of EVALSHA (only the
// heartbeat script runs), and cmds/call the commands a call runs inside
// Redis, over a minute of room time with SLOWLOG off. p50/p99/max-µs are per
// call, from SLOWLOG over a second minute with slowlog-log-slower-than 0.
// (Redis 7 logs the commands a script runs too, which adds about half a
// microsecond to each of them: the baseline's SLOWLOG figures are inflated
// by some 10%.) calls/beat is how many script calls one Beat made (in one
// round trip), and usec/beat their time together: Redis's time per second
// for the node's fans. The base- figures are the baseline's, over ten seconds each
// (its SLOWLOG would hold a million entries over a minute), and x-p99 and
// x-usec how many times the baseline's p99 and usec/call are the store's.
// B/fan and B/place are what the heartbeat windows a store keeps (five)
// hold in Redis (MEMORY USAGE), per polling fan and per place of the line,
// every fan seen in each window; base-B/fan the baseline's.
func BenchmarkBeatScript(b *testing.B) {
	for _, l := range beatLines {
		b.Run(l.name, func(b *testing.B) {
			s, admin := benchStore(b)
			if err := setbitBeat.Load(context.Background(), admin).Err(); err != nil {
				b.Fatal(err)
			}
			type figures struct {
				times        []time.Duration
				calls, inner int64
				us, windows  float64
			}
			measure := func(f *figures, send beatFunc, sha string, seconds int) {
				room, lim := newBeatRoom(b, s, l)
				slowlogFrom(b, admin, -1)
				beatSeconds(b, send, room, lim, l, seconds)
				c, u, in := scriptStats(b, admin)
				f.calls, f.us, f.inner = f.calls+c, f.us+u*float64(c), f.inner+in
				f.windows += windowBytes(b, admin, room)
				room, lim = newBeatRoom(b, s, l)
				slowlogFrom(b, admin, 0)
				beatSeconds(b, send, room, lim, l, seconds)
				f.times = append(f.times, scriptTimes(b, admin, sha)...)
			}
			const seconds, baseSeconds = 60, 10
			var ours, base figures
			for range b.N {
				measure(&base, setbitBeats(admin), setbitBeat.Hash(), baseSeconds)
				measure(&ours, s.Beat, redisstore.BeatSHA, seconds)
			}
			if len(ours.times) == 0 || len(base.times) == 0 {
				b.Fatal("SLOWLOG holds no call of the heartbeat script")
			}
			b.ReportMetric(ours.us/float64(ours.calls), "usec/call")
			b.ReportMetric(float64(ours.inner)/float64(ours.calls), "cmds/call")
			b.ReportMetric(float64(ours.calls)/float64(seconds*b.N), "calls/beat")
			b.ReportMetric(percentile(ours.times, 0.5), "p50-µs")
			b.ReportMetric(percentile(ours.times, 0.99), "p99-µs")
			b.ReportMetric(percentile(ours.times, 1), "max-µs")
			b.ReportMetric(ours.us/float64(seconds*b.N), "usec/beat")
			b.ReportMetric(base.us/float64(baseSeconds*b.N), "base-usec/beat")
			b.ReportMetric(base.us/float64(base.calls), "base-usec/call")
			b.ReportMetric(percentile(base.times, 0.99), "base-p99-µs")
			b.ReportMetric(percentile(base.times, 0.99)/percentile(ours.times, 0.99), "x-p99")
			b.ReportMetric((base.us/float64(base.calls))/(ours.us/float64(ours.calls)), "x-usec")
			// The windows a store keeps, every fan seen in each.
			kept := float64(waitingroom.BeatWindows) / float64(b.N)
			b.ReportMetric(kept*ours.windows/float64(l.fans), "B/fan")
			b.ReportMetric(kept*ours.windows/float64(l.places), "B/place")
			b.ReportMetric(kept*base.windows/float64(l.fans), "base-B/fan")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// TestBeatMatchesMemoryOverALongLine: beats over a line of 200,000 places,
// in every shape a node sends them (dense runs, places far apart, places
// around serving and past the end of the line, more than one call holds),
// leave the Redis store's live counts exactly as the memory store's. The
// differential test's lines are too short to reach most of these shapes.
func TestBeatMatchesMemoryOverALongLine(t *testing.T) {
	c := redistest.Shared(t)
	red, err := redisstore.New(c, redisstore.WithPrefix(redistest.Prefix(t, c)), redisstore.WithTTL(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	mem := memstore.New()
	ctx := context.Background()
	const n, serving = 200_000, 40_003 // serving inside a byte of the second block
	room := fmt.Sprintf("long-%d", time.Now().UnixNano())
	seed := waitingroom.Recall{Counters: waitingroom.Counters{Seq: n, Serving: serving, Admitted: serving}}
	for _, s := range []waitingroom.Store{mem, red} {
		if err := s.Init(ctx, room, seed); err != nil {
			t.Fatal(err)
		}
	}
	lim := benchLimits()
	lim.Open = false
	lim.WaitingIdle = time.Minute
	win := waitingroom.BeatWindow(lim.WaitingIdle)
	rng := rand.New(rand.NewPCG(3, 4))
	for w := range waitingroom.BeatWindows + 1 {
		var places []uint64
		// A dense run around serving (a few places far apart there every
		// other window), another at the end of the line and beyond it, a few
		// places far apart in every block, and a run that fills blocks
		// enough to need several calls.
		for p := uint64(serving - 300); w%2 == 0 && p < serving+300; p++ {
			if rng.IntN(3) == 0 {
				places = append(places, p)
			}
		}
		for p := uint64(n - 200); p < n+50; p++ {
			if rng.IntN(2) == 0 {
				places = append(places, p)
			}
		}
		for range 40 {
			places = append(places, rng.Uint64N(n+100))
		}
		places = append(places, serving-1, serving, serving+23_000, serving+31_000, 1<<40)
		if w%2 == 0 {
			for p := uint64(60_000); p < 190_000; p += 1 + rng.Uint64N(7) {
				places = append(places, p)
			}
		}
		places = append(places, places[:10]...) // seen twice
		now := benchT0.Add(time.Duration(w) * win)
		for _, s := range []waitingroom.Store{mem, red} {
			if err := s.Beat(ctx, room, waitingroom.Beats{Places: places}, now, lim); err != nil {
				t.Fatal(err)
			}
			if err := s.Advance(ctx, room, now, lim); err != nil {
				t.Fatal(err)
			}
		}
	}
	now := benchT0.Add(waitingroom.BeatWindows * win)
	a, err := mem.Snapshot(ctx, room, now, 0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := red.Snapshot(ctx, room, now, 0)
	if err != nil {
		t.Fatal(err)
	}
	if a.Live.Young != n || a.Live.From != serving/waitingroom.LiveBlock*waitingroom.LiveBlock {
		t.Fatalf("memory store judged from %d to %d; want the whole line", a.Live.From, a.Live.Young)
	}
	if b.Live.From != a.Live.From || b.Live.Young != a.Live.Young || !slices.Equal(a.Live.Counts, b.Live.Counts) || !slices.Equal(a.Live.Head, b.Live.Head) {
		for i := range min(len(a.Live.Counts), len(b.Live.Counts)) {
			if a.Live.Counts[i] != b.Live.Counts[i] {
				t.Errorf("block %d: memory %d, redis %d", i, a.Live.Counts[i], b.Live.Counts[i])
			}
		}
		t.Fatalf("live counts differ: memory from %d young %d (%d counts), redis from %d young %d (%d counts)",
			a.Live.From, a.Live.Young, len(a.Live.Counts), b.Live.From, b.Live.Young, len(b.Live.Counts))
	}
}

// TestBeatCallsAreBounded: however many places and sessions a node sends,
// no heartbeat script call runs more than a fixed number of commands inside
// Redis or carries more than a fixed number of bytes, which is what bounds
// the time it holds Redis (BenchmarkBeatScript measures that time). Each
// line's beats go in one Beat; INFO commandstats counts the script calls and
// the commands they ran, and the largest call is found by sending each call
// of the split on its own.
func TestBeatCallsAreBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a redis-server")
	}
	srv := redistest.StartServer(t, nil)
	admin := redis.NewClient(&redis.Options{Addr: srv.Addr, PoolSize: 1})
	defer admin.Close()
	s, err := redisstore.New(admin)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.LoadScripts(context.Background()); err != nil {
		t.Fatal(err)
	}
	// A call's commands: four per block, 16 blocks at most, and at most six
	// besides (the room's check, ended sessions, serving and the end of the
	// line, the sessions' two); its bytes of places, 16 KiB and one block.
	// These are the bounds docs/ARCHITECTURE.md states, not the constants
	// of beat.go, so that a change of those that breaks them fails here.
	const maxCommands, maxBytes = 70, 20 << 10
	lines := append(slices.Clone(beatLines),
		beatLine{name: "scattered-1e8", places: 100_000_000, fans: 100_000},
		beatLine{name: "dense-1e6", places: 1_000_000, fans: 1_000_000, sessions: 20_000})
	for _, l := range lines {
		t.Run(l.name, func(t *testing.T) {
			room, lim := newBeatRoom(t, s, l)
			b := waitingroom.Beats{Places: l.polling(), Sessions: l.visitors()}
			var most, bytes int64
			for _, part := range redisstore.SplitBeats(b, true) {
				slowlogFrom(t, admin, -1)
				if err := s.Beat(context.Background(), room, part, benchT0, lim); err != nil {
					t.Fatal(err)
				}
				calls, _, inner := scriptStats(t, admin)
				if calls != 1 {
					t.Fatalf("a part of the split took %d calls", calls)
				}
				most = max(most, inner)
				bytes = max(bytes, redisstore.BeatBytes(part))
			}
			t.Logf("%d polling fans, %d sessions: at most %d commands and %d bytes of places a call", l.fans, l.sessions, most, bytes)
			if most > maxCommands {
				t.Errorf("a heartbeat call ran %d commands inside Redis; at most %d", most, maxCommands)
			}
			if bytes > maxBytes {
				t.Errorf("a heartbeat call carried %d bytes of places; at most %d", bytes, maxBytes)
			}
			// The whole Beat, in one go: as many calls as the split made.
			slowlogFrom(t, admin, -1)
			if err := s.Beat(context.Background(), room, b, benchT0, lim); err != nil {
				t.Fatal(err)
			}
			calls, _, inner := scriptStats(t, admin)
			if want := int64(len(redisstore.SplitBeats(b, true))); calls != want || inner > calls*maxCommands {
				t.Errorf("the whole Beat: %d calls running %d commands; want %d calls, at most %d commands each", calls, inner, want, maxCommands)
			}
		})
	}
}

// TestSplitBeatsKeepsEveryMark: the calls of a split carry every place once
// (in order, as bits or offsets) and every session, each within a call's
// bounds.
func TestSplitBeatsKeepsEveryMark(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for round := range 200 {
		var b waitingroom.Beats
		span := uint64(1) << rng.IntN(30)
		for range rng.IntN(20_000) {
			b.Places = append(b.Places, rng.Uint64N(span)+uint64(round)*1_000_003)
		}
		for i := range rng.IntN(1_000) {
			b.Sessions = append(b.Sessions, "v"+strconv.Itoa(i))
		}
		parts := redisstore.SplitBeats(b, true)
		var places []uint64
		var sessions []string
		for _, p := range parts {
			places = append(places, p.Places...)
			sessions = append(sessions, p.Sessions...)
			if again := redisstore.SplitBeats(p, true); len(again) != 1 {
				t.Fatalf("round %d: a part splits into %d calls", round, len(again))
			}
		}
		want := slices.Compact(slices.Sorted(slices.Values(b.Places)))
		if !slices.Equal(places, want) || !slices.Equal(sessions, b.Sessions) {
			t.Fatalf("round %d: %d places and %d sessions came out of %d and %d", round, len(places), len(sessions), len(want), len(b.Sessions))
		}
		if len(b.Places) > 0 && len(redisstore.SplitBeats(b, false)) != max(1, (len(b.Sessions)+redisstore.MaxBeatSessions-1)/redisstore.MaxBeatSessions) {
			t.Fatalf("round %d: places went out while they are not tracked", round)
		}
	}
}
