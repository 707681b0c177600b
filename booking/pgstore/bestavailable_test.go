package pgstore_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/foyer-dev/foyer/booking"
	"github.com/foyer-dev/foyer/booking/inventorytest"
	"github.com/foyer-dev/foyer/booking/pgstore"
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
