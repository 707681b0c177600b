package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

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
	prefix := newPrefix(t, admin)
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
	opts := sharedClient(t).Options()
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
