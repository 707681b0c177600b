package stream_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/foyer-dev/foyer/booking/stream"
	"github.com/foyer-dev/foyer/internal/redistest"
)

// TestFaultStreamAfterEmptyRestart kills a private redis-server under a
// running consumer and starts it again empty: the consumer recreates its
// group (the restart answers NOGROUP) and handles what is published
// afterwards, including a message published again because the first copy
// was lost with the server.
func TestFaultStreamAfterEmptyRestart(t *testing.T) {
	srv := redistest.StartServer(t, nil)
	client := redis.NewClient(&redis.Options{Addr: srv.Addr, DialTimeout: time.Second})
	defer client.Close()
	s := stream.NewRedis(client, "")
	s.Block = 50 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	var mu sync.Mutex
	handled := map[int64]int{}
	go func() {
		_ = s.Consume(ctx, "delivery", "c1", func(_ context.Context, m stream.Message) error {
			mu.Lock()
			handled[m.ID]++
			mu.Unlock()
			return nil
		})
	}()
	waitHandled := func(id int64, within time.Duration) time.Duration {
		t.Helper()
		start := time.Now()
		for time.Since(start) < within {
			mu.Lock()
			n := handled[id]
			mu.Unlock()
			if n > 0 {
				return time.Since(start)
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("message %d not handled within %s", id, within)
		return 0
	}
	if _, err := s.Publish(ctx, stream.Message{ID: 1, Topic: "order.paid"}); err != nil {
		t.Fatal(err)
	}
	waitHandled(1, 5*time.Second)

	srv.Stop(t)
	srv.Restart(t)
	start := time.Now()
	for _, id := range []int64{1, 2} { // 1 again: the relay republishes what was lost
		deadline := time.Now().Add(5 * time.Second)
		for {
			_, err := s.Publish(ctx, stream.Message{ID: id, Topic: "order.paid"})
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("publishing after the restart: %v", err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	waitHandled(2, 10*time.Second)
	mu.Lock()
	defer mu.Unlock()
	if handled[1] != 2 {
		t.Fatalf("message 1 handled %d times; want twice, before and after the loss", handled[1])
	}
	t.Logf("consumer back %s after Redis restarted empty", time.Since(start).Round(time.Millisecond))
}
