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

// DefaultAddr is the integration server; FOYER_TEST_REDIS_ADDR overrides it.
const DefaultAddr = "127.0.0.1:6379"

// New returns a client and a fresh prefix holding a hash tag. Outside CI it
// skips the test, loudly, when Redis is not there; with CI=true it fails.
func New(t testing.TB) (*redis.Client, string) {
	t.Helper()
	addr := os.Getenv("FOYER_TEST_REDIS_ADDR")
	if addr == "" {
		addr = DefaultAddr
	}
	client := redis.NewClient(&redis.Options{Addr: addr})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := client.Ping(ctx).Err(); err != nil {
		client.Close()
		if os.Getenv("CI") == "true" {
			t.Fatalf("Redis at %s is required under CI=true and is not reachable: %v", addr, err)
		}
		t.Skipf("SKIPPING integration test: Redis at %s is not reachable (%v); run scripts/services.sh, or set CI=true to make this a failure", addr, err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	prefix := "foyer:test:{" + hex.EncodeToString(b[:]) + "}:"
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		iter := client.Scan(ctx, 0, prefix+"*", 100).Iterator()
		for iter.Next(ctx) {
			client.Del(ctx, iter.Val())
		}
		client.Close()
	})
	return client, prefix
}
