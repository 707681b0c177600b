package redisstore_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/foyer-dev/foyer/internal/redistest"
	"github.com/foyer-dev/foyer/waitingroom"
	"github.com/foyer-dev/foyer/waitingroom/redisstore"
)

// tripCounter is a go-redis hook that records every command or pipeline the
// client sends: one entry is one round trip.
type tripCounter struct {
	mu    sync.Mutex
	trips []string
}

func (h *tripCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *tripCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.record(cmd.FullName())
		return next(ctx, cmd)
	}
}

func (h *tripCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		names := make([]string, len(cmds))
		for i, c := range cmds {
			names[i] = c.FullName()
		}
		h.record("pipeline(" + strings.Join(names, ",") + ")")
		return next(ctx, cmds)
	}
}

func (h *tripCounter) record(name string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.trips = append(h.trips, name)
}

// take returns what was sent since the last call.
func (h *tripCounter) take() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	t := h.trips
	h.trips = nil
	return t
}

// TestOneRoundTrip proves the costs the design promises: a join, a claim, a
// snapshot, a controller step and a release are each one round trip, whatever
// path they take inside the script, once the scripts are on the server.
func TestOneRoundTrip(t *testing.T) {
	shared := redistest.Shared(t)
	opts := shared.Options()
	opts.PoolSize = 1 // no dial in the middle of a count
	c := redis.NewClient(opts)
	defer c.Close()
	h := &tripCounter{}
	c.AddHook(h)
	s, err := redisstore.New(c, redisstore.WithPrefix(redistest.Prefix(t, shared)), redisstore.WithTTL(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.LoadScripts(ctx); err != nil {
		t.Fatal(err)
	}
	room := "trips"
	if err := s.Init(ctx, room, waitingroom.Recall{}); err != nil {
		t.Fatal(err)
	}
	h.take()

	t0 := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	lim := waitingroom.Limits{Rate: 60, Cap: 2, Session: time.Minute, Grace: 5 * time.Second, Retention: time.Hour, Open: true}
	closed := lim
	closed.Open = false
	var pass time.Time
	account := waitingroom.AccountJoin{Account: waitingroom.NewAccountKey(room, "alice"), Joiner: waitingroom.Joiner{Visitor: waitingroom.NewVisitorID().String()}}
	steps := []struct {
		name string
		do   func() error
	}{
		{"join, admitted on the spot", func() error {
			res, err := s.Join(ctx, room, "a", t0, lim)
			if err == nil && !res.Admitted {
				t.Error("first join not admitted")
			}
			pass = res.Expires
			return err
		}},
		{"join, waiting", func() error { _, err := s.Join(ctx, room, "b", t0, lim); return err }},
		{"join, room closed", func() error { _, err := s.Join(ctx, room, "c", t0, closed); return err }},
		{"claim, not yet", func() error { _, err := s.Claim(ctx, room, "c", 2, t0, lim); return err }},
		{"claim, live session", func() error { _, err := s.Claim(ctx, room, "a", 0, t0, lim); return err }},
		{"advance", func() error { return s.Advance(ctx, room, t0.Add(time.Second), lim) }},
		{"advance, same second", func() error { return s.Advance(ctx, room, t0.Add(1500*time.Millisecond), lim) }},
		{"claim, admitted", func() error { _, err := s.Claim(ctx, room, "b", 1, t0.Add(2*time.Second), lim); return err }},
		{"release", func() error { return s.Release(ctx, room, "a", "pass-a", pass, t0.Add(3*time.Second), lim) }},
		{"snapshot", func() error { _, err := s.Snapshot(ctx, room, t0.Add(3*time.Second), 0); return err }},
		{"draw seed", func() error { _, _, err := s.DrawSeed(ctx, room, []byte("seed"), t0); return err }},
		{"overrides", func() error { _, _, err := s.Overrides(ctx, room); return err }},
		{"save overrides", func() error { _, err := s.SaveOverrides(ctx, room, []byte("{}"), 0); return err }},
		{"join account, new place", func() error { _, err := s.JoinAccount(ctx, room, account, t0, lim); return err }},
		{"join account, its place", func() error { _, err := s.JoinAccount(ctx, room, account, t0, lim); return err }},
	}
	for _, st := range steps {
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if trips := h.take(); len(trips) != 1 {
			t.Errorf("%s: %d round trips %v, want 1", st.name, len(trips), trips)
		}
	}
}

// TestUnreachable checks that a store whose server is gone fails fast with an
// error, not ErrNoRoom: the gateway must tell "Redis is down" (keep tickets,
// admit nobody) from "Redis lost the room" (re-seed it).
func TestUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	defer c.Close()
	s, err := redisstore.New(c)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = s.Join(ctx, "r", "v", time.Now(), waitingroom.Limits{Cap: 1, Open: true})
	if err == nil || errors.Is(err, waitingroom.ErrNoRoom) {
		t.Fatalf("join with Redis down: %v, want a connection error", err)
	}
}
