package redisstore_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/foyer-dev/foyer/internal/redistest"
	"github.com/foyer-dev/foyer/waitingroom"
	"github.com/foyer-dev/foyer/waitingroom/redisstore"
)

// A batch travels as one packed argument; visitors whose names look like the
// packing itself (digits and colons) must come out whole, in order, when the
// script admits them.
func TestJoinManyKeepsVisitorNamesWhole(t *testing.T) {
	ctx := context.Background()
	c := redis.NewClient(redistest.Shared(t).Options())
	t.Cleanup(func() { c.Close() })
	prefix := redistest.Prefix(t, c)
	s, err := redisstore.New(c, redisstore.WithPrefix(prefix), redisstore.WithTTL(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	const room = "packed"
	if err := s.Init(ctx, room, waitingroom.Recall{}); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	lim := waitingroom.Limits{Rate: 6000, Cap: 4, Session: 10 * time.Minute, Grace: 30 * time.Second, Retention: time.Hour, Open: true}
	for sec := range 3 {
		if err := s.Advance(ctx, room, t0.Add(time.Duration(sec)*time.Second), lim); err != nil {
			t.Fatal(err)
		}
	}
	now := t0.Add(2 * time.Second)
	visitors := []string{"12:3", ":", "7:ab:cd", "é:9", "22:xxxxxxxxxxxxxxxxxxxxxx", "w1", "w2"}
	res, err := s.JoinMany(ctx, room, joinersOf(visitors), now, lim)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != len(visitors) {
		t.Fatalf("%d results for %d visitors", len(res), len(visitors))
	}
	var admitted []string
	for i, r := range res {
		if r.Key != uint64(i) {
			t.Fatalf("visitor %d got key %d, want %d: keys run on in order", i, r.Key, i)
		}
		if r.Admitted {
			if len(admitted) != i {
				t.Fatalf("visitor %d admitted after one who was not", i)
			}
			if want := now.Add(lim.Session); !r.Expires.Equal(want) {
				t.Fatalf("visitor %d: session ends %v, want %v", i, r.Expires, want)
			}
			admitted = append(admitted, visitors[i])
		} else if !r.Expires.IsZero() {
			t.Fatalf("visitor %d waits but has a session end %v", i, r.Expires)
		}
	}
	if len(admitted) != lim.Cap {
		t.Fatalf("%d admitted, want the cap's %d: the case must admit some and keep some waiting", len(admitted), lim.Cap)
	}
	live, err := c.ZRange(ctx, prefix+":{"+room+"}:live", 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(live)
	slices.Sort(admitted)
	if !slices.Equal(live, admitted) {
		t.Fatalf("live sessions %q, want exactly the admitted visitors %q", live, admitted)
	}
}

// joinersOf are visitors joined unweighed.
func joinersOf(visitors []string) []waitingroom.Joiner {
	out := make([]waitingroom.Joiner, len(visitors))
	for i, v := range visitors {
		out[i].Visitor = v
	}
	return out
}
