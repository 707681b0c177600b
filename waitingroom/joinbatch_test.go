package waitingroom

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
)

func TestJoinBatcherGathersWhileACallIsInFlight(t *testing.T) {
	var b joinBatcher
	release := make(chan struct{})
	var (
		mu      sync.Mutex
		batches [][]Joiner
		next    uint64
	)
	send := func(_ context.Context, vs []Joiner) ([]JoinResult, error) {
		mu.Lock()
		first := len(batches) == 0
		batches = append(batches, append([]Joiner(nil), vs...))
		out := make([]JoinResult, len(vs))
		for i := range vs {
			out[i].Key = next
			next++
		}
		mu.Unlock()
		if first {
			<-release // the first call is slow: everyone else queues behind it
		}
		return out, nil
	}
	const n = 50
	results := make([]JoinResult, n+1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		results[0], _ = b.join(context.Background(), Joiner{Visitor: "v0"}, send)
	}()
	for {
		mu.Lock()
		started := len(batches) == 1
		mu.Unlock()
		if started {
			break
		}
	}
	for i := 1; i <= n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			results[i], err = b.join(context.Background(), Joiner{Visitor: fmt.Sprint("v", i)}, send)
			if err != nil {
				t.Error(err)
			}
		}()
	}
	for {
		b.mu.Lock()
		queued := len(b.queue)
		b.mu.Unlock()
		if queued == n {
			break
		}
	}
	close(release)
	wg.Wait()
	if len(batches) != 2 || len(batches[1]) != n {
		t.Fatalf("batches %d, sizes %v: want the first alone and the %d that queued behind it in one", len(batches), len(batches), n)
	}
	seen := map[uint64]bool{}
	for i, r := range results {
		if seen[r.Key] {
			t.Fatalf("caller %d got key %d, already given", i, r.Key)
		}
		seen[r.Key] = true
	}
	if b.busy || len(b.queue) != 0 {
		t.Fatal("the batcher did not come to rest")
	}
}

func TestJoinBatcherErrorsReachEveryone(t *testing.T) {
	var b joinBatcher
	boom := errors.New("store down")
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := b.join(context.Background(), Joiner{Visitor: fmt.Sprint(i)}, func(context.Context, []Joiner) ([]JoinResult, error) { return nil, boom })
			if !errors.Is(err, boom) {
				t.Errorf("join %d: %v, want the store's error", i, err)
			}
		}()
	}
	wg.Wait()
}
