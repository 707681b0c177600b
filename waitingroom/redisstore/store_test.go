package redisstore_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/foyer-dev/foyer/internal/redistest"
	"github.com/foyer-dev/foyer/waitingroom"
	"github.com/foyer-dev/foyer/waitingroom/redisstore"
	"github.com/foyer-dev/foyer/waitingroom/storetest"
)

// harness runs the conformance suite on the Redis that dial reaches. Every
// store is a new client, so Pair is two gateway nodes' worth of connections;
// all of a run's keys carry one fresh prefix.
func harness(t *testing.T, dial func() redis.UniversalClient) storetest.Harness {
	admin := dial()
	t.Cleanup(func() { admin.Close() })
	prefix := redistest.Prefix(t, admin)
	open := func(t *testing.T) *redisstore.Store {
		c := dial()
		t.Cleanup(func() { c.Close() })
		s, err := redisstore.New(c, redisstore.WithPrefix(prefix), redisstore.WithTTL(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	return storetest.Harness{
		New:  func(t *testing.T) waitingroom.Store { return open(t) },
		Pair: func(t *testing.T) (waitingroom.Store, waitingroom.Store) { return open(t), open(t) },
		Wipe: func(t *testing.T, s waitingroom.Store, room string) {
			if err := s.(*redisstore.Store).Drop(context.Background(), room); err != nil {
				t.Fatal(err)
			}
		},
	}
}

func TestConformance(t *testing.T) {
	opts := redistest.Shared(t).Options()
	storetest.Run(t, harness(t, func() redis.UniversalClient { return redis.NewClient(opts) }))
}

func TestNewRejectsBadOptions(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer c.Close()
	for _, tc := range []struct {
		name string
		opts []redisstore.Option
	}{
		{"empty prefix", []redisstore.Option{redisstore.WithPrefix("")}},
		{"hash tag in prefix", []redisstore.Option{redisstore.WithPrefix("a{b}")}},
		{"ttl too short", []redisstore.Option{redisstore.WithTTL(time.Millisecond)}},
	} {
		if _, err := redisstore.New(c, tc.opts...); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
	if _, err := redisstore.New(nil); err == nil {
		t.Error("nil client: accepted")
	}
}

// TestWaitingFansCostNoMemory: a fan who waits is a number in their ticket,
// not an entry in Redis. Twenty thousand joins must leave the server's memory
// where it was, give or take the digits of the order-key counter.
func TestWaitingFansCostNoMemory(t *testing.T) {
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
	ctx := context.Background()
	if err := s.Init(ctx, "r", waitingroom.Recall{}); err != nil {
		t.Fatal(err)
	}
	lim := waitingroom.Limits{Rate: 600, Cap: 10, Session: time.Minute, Grace: 30 * time.Second, Retention: time.Hour, Open: true}
	s.Join(ctx, "r", "first", time.Unix(1e9, 0), lim) // walks in; the others wait
	const fans = 20_000
	before := redistest.HeldMemory(ctx, t, c)
	for i := range fans {
		if _, err := s.Join(ctx, "r", fmt.Sprintf("fan-%d", i), time.Unix(1e9, 0), lim); err != nil {
			t.Fatal(err)
		}
	}
	after := redistest.HeldMemory(ctx, t, c)
	if per := float64(after-before) / fans; per > 0.1 {
		t.Fatalf("%d waiting fans took %d bytes, %.3f a fan: waiting fans must cost counters, not entries", fans, after-before, per)
	}
}

// TestEveryKeyExpires: a room nobody serves any more must vanish on its own,
// so no key the store writes may be left without a TTL, whichever operation
// created it.
func TestEveryKeyExpires(t *testing.T) {
	c := redistest.Shared(t)
	prefix := redistest.Prefix(t, c)
	const ttl = time.Hour
	s, err := redisstore.New(c, redisstore.WithPrefix(prefix), redisstore.WithTTL(ttl))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	t0 := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	lim := waitingroom.Limits{Rate: 60, Cap: 1, Session: time.Minute, Grace: 5 * time.Second, Retention: time.Hour, Open: true, ReturnWindow: time.Minute,
		WaitingIdle: 2 * time.Minute, SessionIdle: time.Minute}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// Every key comes to exist, with no controller step after the last write.
	must(s.Init(ctx, "r", waitingroom.Recall{Held: 1, HeldUntil: t0.Add(time.Second)}))
	for i := range 3 {
		_, err := s.Join(ctx, "r", fmt.Sprint(i), t0, lim)
		must(err)
	}
	must(s.Advance(ctx, "r", t0.Add(2*time.Second), lim))  // the held slot ends; place 0 admitted
	must(s.Advance(ctx, "r", t0.Add(10*time.Second), lim)) // place 0 lapsed, place 1 admitted
	res, err := s.Claim(ctx, "r", "1", 1, t0.Add(11*time.Second), lim)
	must(err)
	if c, err := s.Claim(ctx, "r", "0", 0, t0.Add(12*time.Second), lim); err != nil || c.Status != waitingroom.Full {
		t.Fatalf("late returner: %v %v, want full", c.Status, err)
	}
	// A pass revoked for a visitor whose session is gone already: the
	// revocation is written, the live session of visitor 1 stays.
	must(s.Release(ctx, "r", "2", "pass-2", res.Expires, t0.Add(13*time.Second), lim))
	// A heartbeat window is written, and what a fan was told.
	must(s.Beat(ctx, "r", waitingroom.Beats{Places: []uint64{2}, Told: []waitingroom.PlaceTold{{Place: 2, Marks: waitingroom.MarkUnlikely}}}, t0.Add(14*time.Second), lim))
	// A waiting fan leaves the line: their place is recorded as left.
	must(s.Leave(ctx, "r", "2", 2, t0.Add(14*time.Second), lim))
	// An operator pauses the room: the audit trail is written.
	_, err = s.AppendAudit(ctx, "r", waitingroom.AuditEntry{At: t0.Add(14 * time.Second), Who: "127.0.0.1", Action: waitingroom.AuditPause})
	must(err)
	// In another room, a session idles out.
	must(s.Init(ctx, "i", waitingroom.Recall{}))
	long := lim
	long.Session = 10 * time.Minute
	if res, err := s.Join(ctx, "i", "a", t0, long); err != nil || !res.Admitted {
		t.Fatalf("first visitor of room i: %+v %v, want admitted", res, err)
	}
	must(s.Advance(ctx, "i", t0.Add(61*time.Second), long))
	// In a third room, the origin fails a session: its visitor is requeued.
	must(s.Init(ctx, "q", waitingroom.Recall{}))
	requeue := lim
	requeue.Requeues = 1
	if res, err := s.Join(ctx, "q", "a", t0, requeue); err != nil || !res.Admitted {
		t.Fatalf("first visitor of room q: %+v %v, want admitted", res, err)
	}
	if r, err := s.Requeue(ctx, "q", "a", "pass-a", t0.Add(time.Minute), t0.Add(time.Second), requeue); err != nil || r.Status != waitingroom.RequeueDone {
		t.Fatalf("requeue: %+v %v, want requeued", r, err)
	}
	// In a fourth, a requeued visitor is let in again by the controller.
	must(s.Init(ctx, "w", waitingroom.Recall{}))
	if res, err := s.Join(ctx, "w", "a", t0, requeue); err != nil || !res.Admitted {
		t.Fatalf("first visitor of room w: %+v %v, want admitted", res, err)
	}
	if r, err := s.Requeue(ctx, "w", "a", "pass-a", t0.Add(time.Minute), t0.Add(time.Second), requeue); err != nil || r.Status != waitingroom.RequeueDone {
		t.Fatalf("requeue: %+v %v, want requeued", r, err)
	}
	must(s.Advance(ctx, "w", t0.Add(2*time.Second), requeue))

	acct := waitingroom.AccountJoin{Account: waitingroom.NewAccountKey("r", "alice"), Joiner: waitingroom.Joiner{Visitor: waitingroom.NewVisitorID().String()}}
	_, err = s.JoinAccount(ctx, "r", acct, t0.Add(14*time.Second), lim)
	must(err)

	keys := redisstore.RoomKeys(prefix, "r")
	windows, err := c.Keys(ctx, keyNamed(keys, "hb")+":*").Result()
	must(err)
	if len(windows) == 0 {
		t.Error("no heartbeat window was written")
	}
	other := redisstore.RoomKeys(prefix, "i")
	third := redisstore.RoomKeys(prefix, "q")
	fourth := redisstore.RoomKeys(prefix, "w")
	idled := []string{keyNamed(other, "idled"), keyNamed(other, "idledends"), keyNamed(third, "requeued"), keyNamed(third, "requeues"), keyNamed(fourth, "readmits")}
	told, err := c.Keys(ctx, strings.TrimSuffix(keyNamed(keys, "meta"), "meta")+"told:*").Result()
	must(err)
	if len(told) != 1 {
		t.Errorf("bitmaps of what fans were told: %q, want the general lane's", told)
	}
	for _, k := range append(append(append(append(keys, windows...), told...), idled...), redisstore.AccountBucket(prefix, "r", acct.Account)) {
		if strings.HasSuffix(k, "{r}:hb") || strings.HasSuffix(k, ":hbtmp") || strings.HasSuffix(k, "{r}:idled") || strings.HasSuffix(k, "{r}:idledends") ||
			strings.HasSuffix(k, "{r}:requeued") || strings.HasSuffix(k, "{r}:requeues") || strings.HasSuffix(k, "{r}:readmits") {
			continue // a name, a scratch key deleted by the step that makes it, and the other rooms'
		}
		d, err := c.PTTL(ctx, k).Result()
		must(err)
		switch {
		case d == -2*time.Nanosecond:
			t.Errorf("%s: never written; the test should make every key exist", k)
		case d < 0:
			t.Errorf("%s: no TTL", k)
		case d > ttl:
			t.Errorf("%s: TTL %v, above %v", k, d, ttl)
		}
	}
}

// keyNamed is the key of keys whose name (after the room's tag) is name.
func keyNamed(keys []string, name string) string {
	for _, k := range keys {
		if strings.HasSuffix(k, "}:"+name) {
			return k
		}
	}
	panic("no key named " + name)
}
