package pgstore_test

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/foyer-dev/foyer/booking"
	"github.com/foyer-dev/foyer/booking/inventorytest"
	"github.com/foyer-dev/foyer/booking/pgstore"
	"github.com/foyer-dev/foyer/booking/pgstore/pgtest"
)

// TestBackgroundWorkNeverTakesTheRequestsConnections fills the background
// pool with work that cannot finish (idempotency prunes blocked on a table
// lock taken from outside the store), with more such work queued behind it,
// and shows that a fan's hold still gets a connection and is made, that the
// background work never touched the requests' pool, and that it never held
// more connections than BackgroundConns.
func TestBackgroundWorkNeverTakesTheRequestsConnections(t *testing.T) {
	ctx := context.Background()
	const app = "foyer_bulkhead_test"
	const requestConns, backgroundConns, prunes = 2, 2, 6
	dbURL := pgtest.NewDatabase(t)
	s, err := pgstore.Open(ctx, withApplicationName(t, dbURL, app), pgstore.Options{MaxConns: requestConns, BackgroundConns: backgroundConns})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	e, err := s.CreateEvent(ctx, booking.EventSpec{
		Name: "Bulkhead", StartsAt: now.Add(24 * time.Hour), Currency: "EUR",
		Zones: []booking.ZoneSpec{{ID: "FLOOR", Capacity: 100, Price: 3000}},
	}, now)
	if err != nil {
		t.Fatal(err)
	}

	// Outside the store: a session that locks the idempotency table until
	// the test lets go, and one that watches pg_stat_activity (outside any
	// transaction, whose snapshot of it would never change).
	locker := connect(t, dbURL)
	lock, err := locker.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lock.Exec(ctx, "LOCK TABLE idempotency_keys IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	watcher := connect(t, dbURL)
	backends := func(filter string) int {
		t.Helper()
		var n int
		if err := watcher.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1"+filter, app).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	requestAcquires := s.Pool().Stat().AcquireCount()
	bg := booking.Background(ctx)
	done := make(chan error, prunes)
	for range prunes {
		go func() {
			_, err := s.PruneIdempotency(bg, now, 10)
			done <- err
		}()
	}
	// The background pool fills: its connections wait on the lock, the
	// other prunes wait for one of them.
	waitUntil(t, "the background connections to block on the lock", func() bool {
		return backends(" AND wait_event_type = 'Lock'") == backgroundConns
	})

	// A fan's hold is made meanwhile, from the requests' pool. With one pool
	// it would wait for a connection until the lock is gone.
	hctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	h, err := s.Hold(hctx, booking.HoldRequest{EventID: e.ID, CustomerID: "fan", Zone: "FLOOR", Quantity: 2, TTL: inventorytest.HoldTTL}, now)
	if err != nil {
		t.Fatalf("hold while the background pool is full: %v", err)
	}
	if h.Quantity != 2 {
		t.Fatalf("hold = %+v", h)
	}
	select {
	case err := <-done:
		t.Fatalf("a prune finished while the table was locked (%v): the test proves nothing", err)
	default:
	}
	if got := s.Pool().Stat().AcquireCount() - requestAcquires; got < 1 {
		t.Errorf("the hold took %d connections from the requests' pool; want it there", got)
	}
	if n := backends(" AND wait_event_type = 'Lock'"); n != backgroundConns {
		t.Errorf("%d backends of the store wait on the lock; want the background pool's %d, and the rest queued in it", n, backgroundConns)
	}
	if st := s.BackgroundPool().Stat(); st.TotalConns() != backgroundConns || st.AcquiredConns() != backgroundConns {
		t.Errorf("background pool: %d connections, %d acquired; want %d and %d", st.TotalConns(), st.AcquiredConns(), backgroundConns, backgroundConns)
	}

	if err := lock.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	for range prunes {
		if err := <-done; err != nil {
			t.Errorf("prune: %v", err)
		}
	}
	// Every prune went through the background pool, never beyond its bound,
	// and none through the requests' pool.
	if st := s.BackgroundPool().Stat(); st.AcquireCount() < prunes || st.TotalConns() > backgroundConns || st.MaxConns() != backgroundConns {
		t.Errorf("background pool: %d acquires, %d connections, bound %d; want at least %d, at most %d, %d",
			st.AcquireCount(), st.TotalConns(), st.MaxConns(), prunes, backgroundConns, backgroundConns)
	}
	if got := s.Pool().Stat().AcquireCount() - requestAcquires; got != 1 {
		t.Errorf("the requests' pool served %d acquires since the prunes began; want the hold's 1", got)
	}
	if n := backends(""); n > requestConns+backgroundConns {
		t.Errorf("%d backends of the store; want at most %d", n, requestConns+backgroundConns)
	}
}

// TestBackgroundConnsDefault: a quarter of the requests' pool, at least 2.
func TestBackgroundConnsDefault(t *testing.T) {
	dbURL := pgtest.NewDatabase(t)
	for _, c := range []struct{ max, want int32 }{{2, 2}, {8, 2}, {12, 3}, {40, 10}} {
		s, err := pgstore.Open(context.Background(), dbURL, pgstore.Options{MaxConns: c.max})
		if err != nil {
			t.Fatal(err)
		}
		if got := s.BackgroundPool().Stat().MaxConns(); got != c.want {
			t.Errorf("MaxConns %d: background pool of %d; want %d", c.max, got, c.want)
		}
		if got := s.Pool().Stat().MaxConns(); got != c.max {
			t.Errorf("MaxConns %d: requests' pool of %d", c.max, got)
		}
		s.Close()
	}
}

func withApplicationName(t *testing.T, raw, name string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("application_name", name)
	u.RawQuery = q.Encode()
	return u.String()
}

func connect(t *testing.T, dbURL string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// waitUntil polls the database's own view of what the store's connections
// are doing: that is another process, so there is nothing to inject.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
