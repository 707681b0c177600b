package redistest

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/foyer-dev/foyer/internal/redisserver"
)

// Info reads one section of INFO as a map.
func Info(ctx context.Context, t testing.TB, c *redis.Client, section string) map[string]string {
	t.Helper()
	m, err := redisserver.Info(ctx, c, section)
	if err != nil {
		t.Fatalf("INFO %s: %v", section, err)
	}
	return m
}

// CommandCalls reads INFO commandstats: calls per command, lower case.
func CommandCalls(ctx context.Context, t testing.TB, c *redis.Client) map[string]int64 {
	t.Helper()
	calls, err := redisserver.CommandCalls(ctx, c)
	if err != nil {
		t.Fatalf("INFO commandstats: %v", err)
	}
	return calls
}

// HeldMemory reads how much memory the server holds for data and its own
// structures: INFO memory used_memory, less the query and output buffers of
// client connections (mem_clients_normal). Those are per connection, not per
// key, and Redis grows and shrinks them on its own schedule, by tens of
// kilobytes a connection, seconds after a burst. It waits for three equal
// readings in a row.
func HeldMemory(ctx context.Context, t testing.TB, c *redis.Client) int64 {
	t.Helper()
	var last int64 = -1
	for same, tries := 0, 0; ; tries++ {
		m := Info(ctx, t, c, "memory")
		used, err1 := strconv.ParseInt(m["used_memory"], 10, 64)
		clients, err2 := strconv.ParseInt(m["mem_clients_normal"], 10, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("INFO memory: %v %v", err1, err2)
		}
		if v := used - clients; v == last {
			if same++; same == 2 {
				return v
			}
		} else {
			last, same = v, 0
		}
		if tries == 100 {
			t.Fatal("memory use never settled")
		}
		time.Sleep(100 * time.Millisecond)
	}
}
