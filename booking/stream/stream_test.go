package stream_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/booking/stream"
	"github.com/foyer-dev/foyer/internal/redistest"
)

func TestMemory(t *testing.T) {
	s := stream.NewMemory()
	s.RetryAfter = 50 * time.Millisecond
	exercise(t, s)
}

func TestRedis(t *testing.T) {
	client := redistest.Shared(t)
	// The stream's keys share one hash tag, as a Cluster needs.
	prefix := redistest.Prefix(t, client) + ":{stream}:"
	s := stream.NewRedis(client, prefix)
	s.RetryAfter = 50 * time.Millisecond
	s.Block = 50 * time.Millisecond
	exercise(t, s)
}

// exercise checks deduplicated publishing, delivery to a group, and
// redelivery of a message whose handler failed.
func exercise(t *testing.T, s stream.Stream) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, id := range []int64{1, 2, 1, 3, 2} {
		if _, err := s.Publish(ctx, stream.Message{ID: id, Topic: "order.paid", Payload: []byte(`{"n":1}`)}); err != nil {
			t.Fatal(err)
		}
	}
	if ok, err := s.Publish(ctx, stream.Message{ID: 1, Topic: "order.paid"}); ok || err != nil {
		t.Fatalf("republishing id 1 = %v, %v; want false", ok, err)
	}
	var mu sync.Mutex
	handled := map[int64]int{}
	failedOnce := false
	done := make(chan struct{})
	cctx, stop := context.WithCancel(ctx)
	go func() {
		_ = s.Consume(cctx, "delivery", "c1", func(_ context.Context, m stream.Message) error {
			mu.Lock()
			defer mu.Unlock()
			if m.ID == 2 && !failedOnce {
				failedOnce = true
				return errors.New("transient")
			}
			handled[m.ID]++
			if string(m.Payload) != `{"n":1}` || m.Topic != "order.paid" {
				t.Errorf("message %d = %+v", m.ID, m)
			}
			if len(handled) == 3 {
				close(done)
			}
			return nil
		})
	}()
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatalf("not every message was handled: %v", handled)
	}
	stop()
	mu.Lock()
	defer mu.Unlock()
	for id, n := range handled {
		if n != 1 {
			t.Errorf("message %d handled %d times", id, n)
		}
	}
}
