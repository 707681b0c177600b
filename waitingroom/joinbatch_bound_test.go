package waitingroom

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// blockedBatcher has one join in flight on a send that blocks until release
// is closed, and returns the send, which fails with err once released.
func blockedBatcher(t *testing.T, b *joinBatcher, err error) (send func(context.Context, []Joiner) ([]JoinResult, error), release chan struct{}, done chan error) {
	t.Helper()
	release = make(chan struct{})
	started := make(chan struct{}, 1)
	send = func(_ context.Context, vs []Joiner) ([]JoinResult, error) {
		select {
		case started <- struct{}{}:
		default:
		}
		<-release
		if err != nil {
			return nil, err
		}
		return make([]JoinResult, len(vs)), nil
	}
	done = make(chan error, 1)
	go func() {
		_, err := b.join(context.Background(), Joiner{Visitor: "leader"}, send)
		done <- err
	}()
	<-started
	return send, release, done
}

// waitQueued waits until n joins wait in b's queue.
func waitQueued(t *testing.T, b *joinBatcher, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		b.mu.Lock()
		q := len(b.queue)
		b.mu.Unlock()
		if q == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d joins queued, want %d", q, n)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestJoinBatcherQueueIsBounded(t *testing.T) {
	var b joinBatcher
	send, release, done := blockedBatcher(t, &b, nil)
	var wg sync.WaitGroup
	for i := range MaxJoinQueue {
		wg.Go(func() {
			if _, err := b.join(context.Background(), Joiner{Visitor: fmt.Sprint(i)}, send); err != nil {
				t.Errorf("queued join %d: %v", i, err)
			}
		})
	}
	waitQueued(t, &b, MaxJoinQueue)
	if _, err := b.join(context.Background(), Joiner{Visitor: "one too many"}, send); !errors.Is(err, ErrJoinQueueFull) {
		t.Fatalf("join beyond the queue's bound: %v, want ErrJoinQueueFull at once", err)
	}
	close(release)
	wg.Wait()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestJoinBatcherWaitingJoinerHonoursItsContext(t *testing.T) {
	var b joinBatcher
	send, release, done := blockedBatcher(t, &b, nil)
	ctx, cancel := context.WithCancel(context.Background())
	gone := make(chan error, 1)
	go func() {
		_, err := b.join(ctx, Joiner{Visitor: "impatient"}, send)
		gone <- err
	}()
	waitQueued(t, &b, 1)
	cancel()
	select {
	case err := <-gone:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled joiner: %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a cancelled joiner still waits for the batch in flight")
	}
	waitQueued(t, &b, 0)
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if b.busy {
		t.Fatal("the batcher did not come to rest")
	}
}

func TestJoinBatcherFailedBatchFailsTheQueue(t *testing.T) {
	var b joinBatcher
	boom := errors.New("store hung")
	var calls sync.Map
	send, release, done := blockedBatcher(t, &b, boom)
	counting := func(ctx context.Context, vs []Joiner) ([]JoinResult, error) {
		calls.Store(vs[0], true)
		return send(ctx, vs)
	}
	const n = 300 // more than a batch: the queue would need two more calls
	errs := make(chan error, n)
	for i := range n {
		go func() {
			_, err := b.join(context.Background(), Joiner{Visitor: fmt.Sprint(i)}, counting)
			errs <- err
		}()
	}
	waitQueued(t, &b, n)
	close(release)
	for range n {
		if err := <-errs; !errors.Is(err, boom) {
			t.Fatalf("queued join: %v, want the failed batch's error", err)
		}
	}
	if err := <-done; !errors.Is(err, boom) {
		t.Fatal(err)
	}
	calls.Range(func(k, _ any) bool {
		t.Errorf("a queued join %v was sent after the batch in flight failed", k)
		return true
	})
}
