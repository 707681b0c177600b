package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/foyer-dev/foyer/waitingroom"
)

// DefaultPrefix begins every key the store writes.
const DefaultPrefix = "foyer"

// DefaultTTL is how long a room's keys outlive the last controller step. The
// controller steps every second while any node serves the room, so only a room
// nobody serves any more ever reaches it.
const DefaultTTL = 7 * 24 * time.Hour

// Store is a waitingroom.Store kept in Redis: a single node, Sentinel or
// Cluster, whichever client it is given. It is safe for concurrent use, and any
// number of Stores (one per gateway node) may share one Redis.
type Store struct {
	client redis.UniversalClient
	prefix string
	ttl    time.Duration
}

var _ waitingroom.Store = (*Store)(nil)

// Option configures a Store.
type Option func(*Store)

// WithPrefix sets the prefix of every key (default "foyer"), so that several
// deployments, or tests, can share one Redis. It must not contain braces: they
// would change the Cluster hash tag.
func WithPrefix(prefix string) Option { return func(s *Store) { s.prefix = prefix } }

// WithTTL sets how long a room's keys survive once no controller steps it any
// more (default DefaultTTL). Keep it well above the ticket lifetime.
func WithTTL(ttl time.Duration) Option { return func(s *Store) { s.ttl = ttl } }

// New returns a Store that keeps its rooms through client. The client is the
// caller's: the Store never closes it.
func New(client redis.UniversalClient, opts ...Option) (*Store, error) {
	s := &Store{client: client, prefix: DefaultPrefix, ttl: DefaultTTL}
	for _, opt := range opts {
		opt(s)
	}
	switch {
	case client == nil:
		return nil, errors.New("redisstore: nil client")
	case s.prefix == "" || strings.ContainsAny(s.prefix, "{}"):
		return nil, fmt.Errorf("redisstore: key prefix %q must be non-empty and free of braces", s.prefix)
	case s.ttl < time.Second:
		return nil, fmt.Errorf("redisstore: ttl %v is under a second", s.ttl)
	}
	return s, nil
}

// LoadScripts caches the store's scripts on the server (on every shard of a
// Cluster), so that the first operations after a start cost one round trip
// too. It is optional: an operation whose script is not cached sends it.
func (s *Store) LoadScripts(ctx context.Context) error {
	for _, sc := range allScripts {
		if err := sc.Load(ctx, s.client).Err(); err != nil {
			return fmt.Errorf("redisstore: loading scripts: %w", err)
		}
	}
	return nil
}

// Drop deletes every key of room, as a server restarted without persistence
// would lose them. Nodes then get waitingroom.ErrNoRoom and re-seed the room.
func (s *Store) Drop(ctx context.Context, room string) error {
	keys := roomKeys(s.prefix, room)
	// The heartbeat windows are keys of their own, named after the hb key,
	// and so are the networks and seeds joins are weighed by, and the
	// bitmaps of what fans were told.
	for _, match := range []string{keys[hbKey] + ":*", roomKey(s.prefix, room, limitKeyName, "*"), roomKey(s.prefix, room, seedKeyName, "*"), roomKey(s.prefix, room, toldKeyName, "*")} {
		iter := s.client.Scan(ctx, 0, match, 1000).Iterator()
		for iter.Next(ctx) {
			keys = append(keys, iter.Val())
		}
		if err := iter.Err(); err != nil {
			return err
		}
	}
	if err := s.client.Del(ctx, keys...).Err(); err != nil {
		return err
	}
	return s.dropAccounts(ctx, room)
}

// run runs script on room's keys, mapping the scripts' nil reply (the room's
// counters are missing) to waitingroom.ErrNoRoom.
func (s *Store) run(ctx context.Context, op string, script *redis.Script, room string, args ...any) (any, error) {
	return s.runOn(ctx, op, script, room, roomKeys(s.prefix, room), args...)
}

// runOn is run with keys of the room's beyond roomKeys, which come first.
func (s *Store) runOn(ctx context.Context, op string, script *redis.Script, room string, keys []string, args ...any) (any, error) {
	v, err := script.Run(ctx, s.client, keys, args...).Result()
	if errors.Is(err, redis.Nil) {
		return nil, waitingroom.ErrNoRoom
	}
	if err != nil {
		s.reloadTopology(err)
		return nil, fmt.Errorf("redisstore: %s %s: %w", op, room, err)
	}
	return v, nil
}

// reloadTopology asks a Cluster client to read the slot map again after a
// failure: a dead master refuses connections until the client learns which
// replica took its slots, and go-redis reloads on its own only on MOVED or on
// its timer. The reload is asynchronous and coalesced, so a burst of failures
// costs one CLUSTER SLOTS.
func (s *Store) reloadTopology(err error) {
	c, ok := s.client.(*redis.ClusterClient)
	if !ok || errors.Is(err, context.Canceled) {
		return
	}
	c.ReloadState(context.Background())
}

func (s *Store) ttlMillis() int64 { return s.ttl.Milliseconds() }
