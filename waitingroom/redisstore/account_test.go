package redisstore_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/foyer-dev/foyer/internal/redistest"
	"github.com/foyer-dev/foyer/waitingroom"
	"github.com/foyer-dev/foyer/waitingroom/redisstore"
)

// TestAccountMemory measures what one place per account costs Redis: 100,000
// accounts join a room on a private server, and both INFO memory and the sum
// of MEMORY USAGE over the account hashes must stay within 64 bytes an
// account (docs/configuration.md, "The account block").
func TestAccountMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a redis-server and joins 100,000 accounts")
	}
	perInfo, perUsage, _ := accountMemory(t)
	if perInfo > 64 || perUsage > 64 {
		t.Fatalf("an account costs %.1f B (INFO) / %.1f B (MEMORY USAGE), want at most 64", perInfo, perUsage)
	}
}

// BenchmarkMemoryPerAccount reports the same figures for make bench, and
// their ratio to the obvious layout (one plain hash a room) in the same run.
func BenchmarkMemoryPerAccount(b *testing.B) {
	var info, usage, naive float64
	for range b.N {
		i, u, n := accountMemory(b)
		info += i
		usage += u
		naive += n
	}
	b.ReportMetric(info/float64(b.N), "bytes/account")
	b.ReportMetric(usage/float64(b.N), "usage-bytes/account")
	b.ReportMetric(info/naive, "x-of-one-hash")
}

// accountMemory joins 100,000 accounts to a room on a private redis-server
// and returns what each costs by INFO memory and by the sum of MEMORY USAGE
// over the account hashes.
func accountMemory(tb testing.TB) (perInfo, perUsage, perNaive float64) {
	srv := redistest.StartServer(tb, nil)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, PoolSize: 8})
	defer c.Close()
	s, err := redisstore.New(c)
	if err != nil {
		tb.Fatal(err)
	}
	ctx := context.Background()
	if err := s.Init(ctx, "r", waitingroom.Recall{}); err != nil {
		tb.Fatal(err)
	}
	now := time.Unix(1.8e9, 0)
	lim := waitingroom.Limits{Rate: 600, Cap: 10, Session: time.Minute, Grace: 30 * time.Second, Retention: 12 * time.Hour, Open: true}
	if _, err := s.Join(ctx, "r", "first", now, lim); err != nil { // walks in; the accounts wait
		tb.Fatal(err)
	}
	before := redistest.HeldMemory(ctx, tb, c)
	const accounts, workers = 100_000, 8
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			for i := w; i < accounts; i += workers {
				req := waitingroom.AccountJoin{
					Account: waitingroom.NewAccountKey("r", fmt.Sprintf("user-%d@example.com", i)),
					Joiner:  waitingroom.Joiner{Visitor: waitingroom.NewVisitorID().String()},
				}
				if _, err := s.JoinAccount(ctx, "r", req, now, lim); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		tb.Fatal(err)
	}
	after := redistest.HeldMemory(ctx, tb, c)
	var usage int64
	encodings := map[string]int{}
	for _, k := range redisstore.AccountKeys("foyer", "r") {
		n, err := c.MemoryUsage(ctx, k, 0).Result()
		if err == redis.Nil {
			continue
		}
		if err != nil {
			tb.Fatal(err)
		}
		usage += n
		enc, err := c.ObjectEncoding(ctx, k).Result()
		if err != nil {
			tb.Fatal(err)
		}
		encodings[enc]++
	}
	perInfo = float64(after-before) / accounts
	perUsage = float64(usage) / accounts

	// The baseline, in the same run: the obvious layout, one hash a room
	// from account id to "visitor:key:joined".
	naive := "naive:{r}:accounts"
	for lo := 0; lo < accounts; lo += 1000 {
		pipe := c.Pipeline()
		for i := lo; i < min(lo+1000, accounts); i++ {
			pipe.HSet(ctx, naive, fmt.Sprintf("user-%d@example.com", i), fmt.Sprintf("%s:%d:%d", waitingroom.NewVisitorID(), i+1, now.Unix()))
		}
		if _, err := pipe.Exec(ctx); err != nil {
			tb.Fatal(err)
		}
	}
	perNaive = float64(redistest.HeldMemory(ctx, tb, c)-after) / accounts
	tb.Logf("%d accounts: INFO memory %.1f B an account, MEMORY USAGE of the buckets %.1f B an account (bucket encodings %v); one plain hash: %.1f B",
		accounts, perInfo, perUsage, encodings, perNaive)
	return perInfo, perUsage, perNaive
}
