package redistest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// SharedURL is the machine's Redis (FOYER_TEST_REDIS_URL, by default
// redis://127.0.0.1:6379/0). Other packages' tests use it at the same time:
// touch only keys under a Prefix, and never stop or flush it.
func SharedURL() string {
	if u := os.Getenv("FOYER_TEST_REDIS_URL"); u != "" {
		return u
	}
	return "redis://127.0.0.1:6379/0"
}

// Shared returns a client of the shared Redis, closed when the test ends, or
// calls Missing when it does not answer.
func Shared(t testing.TB) *redis.Client {
	t.Helper()
	opts, err := redis.ParseURL(SharedURL())
	if err != nil {
		t.Fatalf("FOYER_TEST_REDIS_URL: %v", err)
	}
	c := redis.NewClient(opts)
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		Missing(t, "no Redis at %s: %v", opts.Addr, err)
	}
	return c
}

// Prefix returns a key prefix no other test uses, and deletes its keys through
// c when the test ends (on every master, for a Cluster client). c must still be
// open then: register its Close before calling Prefix.
func Prefix(t testing.TB, c redis.UniversalClient) string {
	t.Helper()
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	prefix := "foyertest-" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		del := func(ctx context.Context, c *redis.Client) error {
			iter := c.Scan(ctx, 0, prefix+":*", 1000).Iterator()
			for iter.Next(ctx) {
				if err := c.Del(ctx, iter.Val()).Err(); err != nil {
					return err
				}
			}
			return iter.Err()
		}
		var err error
		switch c := c.(type) {
		case *redis.ClusterClient:
			err = c.ForEachMaster(ctx, del)
		case *redis.Client:
			err = del(ctx, c)
		}
		if err != nil {
			t.Logf("removing test keys %s:*: %v", prefix, err)
		}
	})
	return prefix
}
