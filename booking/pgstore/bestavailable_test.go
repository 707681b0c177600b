package pgstore_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/foyer-dev/foyer/booking"
	"github.com/foyer-dev/foyer/booking/inventorytest"
	"github.com/foyer-dev/foyer/booking/pgstore"
	"github.com/foyer-dev/foyer/booking/pgstore/pgtest"
)

// lockSeats opens a transaction that locks the seats the way a concurrent
// best-available shopper's window does, and keeps it open until the caller
// ends it.
func lockSeats(t *testing.T, s *pgstore.Store, eventID int64, seats []string) pgx.Tx {
	t.Helper()
	ctx := context.Background()
	tx, err := s.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback(ctx) })
	var n int
	if err := tx.QueryRow(ctx, `
		WITH l AS (SELECT id FROM seats WHERE event_id = $1 AND id = ANY($2) ORDER BY id FOR UPDATE)
		SELECT count(*) FROM l`, eventID, seats).Scan(&n); err != nil || n != len(seats) {
		t.Fatalf("locking %v: %d locked, %v", seats, n, err)
	}
	return tx
}

type holdResult struct {
	h   booking.Hold
	err error
}

func holdAsync(s *pgstore.Store, req booking.HoldRequest) <-chan holdResult {
	ch := make(chan holdResult, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		h, err := s.Hold(ctx, req, inventorytest.Epoch)
		ch <- holdResult{h, err}
	}()
	return ch
}

// waitingOnLock reports whether some session of the store's database is
// waiting for a row lock.
func waitingOnLock(t *testing.T, s *pgstore.Store) bool {
	t.Helper()
	var n int
	if err := s.Pool().QueryRow(context.Background(), `
		SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n > 0
}

func oneRowSection(t *testing.T, s *pgstore.Store, seats int) booking.Event {
	t.Helper()
	e, err := s.CreateEvent(context.Background(), booking.EventSpec{
		Name: "last seats", StartsAt: inventorytest.Epoch,
		Sections: []booking.SectionSpec{{ID: "C", Rows: 1, SeatsPerRow: seats, Price: 3000}},
	}, inventorytest.Epoch)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func checkInvariants(t *testing.T, s *pgstore.Store) {
	t.Helper()
	if rep, err := s.CheckInvariants(context.Background()); err != nil || !rep.OK() {
		t.Fatalf("invariants: %+v, %v", rep, err)
	}
}

// TestBestAvailableWaitsForLockedSeats: the last free seats sit in another
// shopper's window, whose transaction then gives them back. A shopper asking
// meanwhile must wait and get them, not hear "sold out" while they are free.
func TestBestAvailableWaitsForLockedSeats(t *testing.T) {
	s := open(t, pgstore.Options{})
	e := oneRowSection(t, s, 6)
	other := lockSeats(t, s, e.ID, []string{"C-1-1", "C-1-2", "C-1-3", "C-1-4", "C-1-5"})

	res := holdAsync(s, booking.HoldRequest{EventID: e.ID, CustomerID: "fan", Section: "C", Quantity: 2, TTL: inventorytest.HoldTTL})
	deadline := time.Now().Add(10 * time.Second)
	for !waitingOnLock(t, s) {
		select {
		case r := <-res:
			t.Fatalf("hold answered %+v, %v while the other shopper was still deciding; all 6 seats were free", r.h.Seats, r.err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the shopper neither waited for the locked seats nor answered within 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := other.Rollback(context.Background()); err != nil {
		t.Fatal(err)
	}
	r := <-res
	if r.err != nil {
		t.Fatalf("hold after the other shopper gave up: %v", r.err)
	}
	if want := []string{"C-1-1", "C-1-2"}; !slices.Equal(r.h.Seats, want) {
		t.Fatalf("seats %v, want the best two %v", r.h.Seats, want)
	}
	checkInvariants(t, s)
}

// TestBestAvailableSoldOutDoesNotWait: when fewer seats than asked are free
// even counting those in other shoppers' windows, the answer is "sold out" at
// once, without waiting for those shoppers.
func TestBestAvailableSoldOutDoesNotWait(t *testing.T) {
	s := open(t, pgstore.Options{})
	e := oneRowSection(t, s, 3)
	other := lockSeats(t, s, e.ID, []string{"C-1-1", "C-1-2"})

	r := <-holdAsync(s, booking.HoldRequest{EventID: e.ID, CustomerID: "fan", Section: "C", Quantity: 4, TTL: inventorytest.HoldTTL})
	if booking.KindOf(r.err) != booking.KindConflict {
		t.Fatalf("4 seats of 3: %+v, %v; want sold out", r.h.Seats, r.err)
	}
	if err := other.Rollback(context.Background()); err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, s)
}

// TestBestAvailableAndListedSeatsDoNotDeadlock: shoppers waiting for the last
// seats and fans picking seats from the map lock the same rows; both lock in
// seat id order, so PostgreSQL never has to break a deadlock between them.
// Seat numbers 1..12 make id order ("C-1-10" < "C-1-2") differ from seat
// order on purpose.
func TestBestAvailableAndListedSeatsDoNotDeadlock(t *testing.T) {
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	s, err := pgstore.Open(ctx, url, pgstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for round := range 12 {
		e, err := s.CreateEvent(ctx, booking.EventSpec{
			Name: "mixed", StartsAt: inventorytest.Epoch,
			Sections: []booking.SectionSpec{{ID: "C", Rows: 2, SeatsPerRow: 12, Price: 3000}},
		}, inventorytest.Epoch)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make(chan error, 64)
		start := make(chan struct{})
		for i := range 32 {
			req := booking.HoldRequest{EventID: e.ID, CustomerID: fmt.Sprintf("c%d", i), TTL: inventorytest.HoldTTL}
			if i%2 == 0 {
				req.Section, req.Quantity = "C", 1+i%3
			} else {
				// Three seats from the back of the row forward, one row
				// or the other.
				n := 12 - i%10
				row := 1 + i%4/2
				req.Seats = []string{booking.SeatID("C", row, n), booking.SeatID("C", row, n-1), booking.SeatID("C", row, n-2)}
			}
			wg.Go(func() {
				<-start
				cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
				defer cancel()
				if _, err := s.Hold(cctx, req, inventorytest.Epoch); err != nil && booking.KindOf(err) != booking.KindConflict {
					errs <- fmt.Errorf("round %d, %s: %w", round, req.CustomerID, err)
				}
			})
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	}
	checkInvariants(t, s)
	if n := deadlocksBroken(t, s, url); n > 0 {
		t.Fatalf("PostgreSQL broke %d deadlocks", n)
	}
}

// deadlocksBroken closes the store and returns how many deadlocks PostgreSQL
// broke in its database. Sessions report that count when they end, so it
// waits (bounded) for the store's sessions to be gone first.
func deadlocksBroken(t *testing.T, s *pgstore.Store, url string) int64 {
	t.Helper()
	ctx := context.Background()
	s.Close()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var others int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND pid <> pg_backend_pid()`).Scan(&others); err != nil {
			t.Fatal(err)
		}
		if others == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions still open 10s after closing the store", others)
		}
	}
	var n int64
	if err := conn.QueryRow(ctx, `SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
