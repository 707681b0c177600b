package inventorytest

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/booking"
)

func testHoldSeatList(t *testing.T, f *fixture) {
	e := f.event(SmallVenue())
	h := f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "alice", Seats: []string{"A-1-2", "A-1-1"}}, Epoch)
	if !slices.Equal(h.Seats, []string{"A-1-1", "A-1-2"}) || h.Quantity != 2 || h.Amount != 20000 ||
		h.Status != booking.HoldActive || !h.ExpiresAt.Equal(Epoch.Add(HoldTTL)) || h.EventID != e.ID {
		t.Fatalf("hold = %+v", h)
	}
	got, err := f.s.GetHold(f.ctx, h.ID, "alice")
	if err != nil || !slices.Equal(got.Seats, h.Seats) || got.Amount != h.Amount {
		t.Fatalf("GetHold = %+v, %v", got, err)
	}
	_, err = f.s.GetHold(f.ctx, h.ID, "mallory")
	wantErr(t, err, booking.KindNotFound, booking.CodeHoldNotFound)

	err = f.holdErr(booking.HoldRequest{EventID: e.ID, CustomerID: "bob", Seats: []string{"A-1-2", "A-1-3"}}, Epoch)
	be := wantErr(t, err, booking.KindConflict, booking.CodeSeatUnavailable)
	if !slices.Equal(be.Seats, []string{"A-1-2"}) {
		t.Fatalf("conflict names %v, want [A-1-2]", be.Seats)
	}
	m := f.seatMap(e.ID, Epoch)
	if m.Sections[0].Rows[0] != "hhaaaa" || m.Held != 2 {
		t.Fatalf("seat map row 1 = %q, held %d", m.Sections[0].Rows[0], m.Held)
	}
}

func testHoldAllOrNothing(t *testing.T, f *fixture) {
	e := f.event(SmallVenue())
	f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "alice", Seats: []string{"B-1-3"}}, Epoch)
	err := f.holdErr(booking.HoldRequest{EventID: e.ID, CustomerID: "bob", Seats: []string{"B-1-1", "B-1-2", "B-1-3", "B-1-4"}}, Epoch)
	wantErr(t, err, booking.KindConflict, booking.CodeSeatUnavailable)
	m := f.seatMap(e.ID, Epoch)
	if m.Sections[1].Rows[0] != "aaha" {
		t.Fatalf("a failed hold left seats behind: %q", m.Sections[1].Rows[0])
	}
	// The failed hold did not count against bob's cap.
	f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "bob", Seats: []string{"B-2-1", "B-2-2", "B-2-3", "B-2-4"}}, Epoch)
}

func testUnknownPlaces(t *testing.T, f *fixture) {
	e := f.event(SmallVenue())
	cases := []struct {
		req  booking.HoldRequest
		kind booking.Kind
		code string
	}{
		{booking.HoldRequest{EventID: e.ID + 1000, Seats: []string{"A-1-1"}}, booking.KindNotFound, booking.CodeEventNotFound},
		{booking.HoldRequest{EventID: e.ID, Seats: []string{"A-9-1"}}, booking.KindNotFound, booking.CodeSeatNotFound},
		{booking.HoldRequest{EventID: e.ID, Seats: []string{"Z-1-1"}}, booking.KindNotFound, booking.CodeSeatNotFound},
		{booking.HoldRequest{EventID: e.ID, Seats: []string{"A-1-01"}}, booking.KindNotFound, booking.CodeSeatNotFound},
		{booking.HoldRequest{EventID: e.ID, Seats: []string{"A-1-1", "A-1-1"}}, booking.KindInvalid, booking.CodeInvalidRequest},
		{booking.HoldRequest{EventID: e.ID, Section: "Q", Quantity: 1}, booking.KindNotFound, booking.CodeSectionNotFound},
		{booking.HoldRequest{EventID: e.ID, Zone: "ROOF", Quantity: 1}, booking.KindNotFound, booking.CodeZoneNotFound},
		{booking.HoldRequest{EventID: e.ID, Section: "A", Quantity: 0}, booking.KindInvalid, booking.CodeInvalidRequest},
		{booking.HoldRequest{EventID: e.ID, Section: "A", Quantity: 50}, booking.KindUnprocessable, booking.CodeOverLimit},
		{booking.HoldRequest{EventID: e.ID, Section: "A", Zone: "FLOOR", Quantity: 1}, booking.KindInvalid, booking.CodeInvalidRequest},
		{booking.HoldRequest{EventID: e.ID}, booking.KindInvalid, booking.CodeInvalidRequest},
	}
	for _, c := range cases {
		c.req.CustomerID = "alice"
		wantErr(t, f.holdErr(c.req, Epoch), c.kind, c.code)
	}
	if m := f.seatMap(e.ID, Epoch); m.Held != 0 {
		t.Fatalf("refused holds left %d places held", m.Held)
	}
}

func testBestAvailableAdjacent(t *testing.T, f *fixture) {
	e := f.event(SmallVenue())
	// Break row 1 so that no three adjacent seats remain in it.
	f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "x", Seats: []string{"A-1-3"}}, Epoch)
	f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "y", Seats: []string{"A-1-5"}}, Epoch)
	h := f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "alice", Section: "A", Quantity: 3}, Epoch)
	if !slices.Equal(h.Seats, []string{"A-2-1", "A-2-2", "A-2-3"}) || h.Amount != 30000 {
		t.Fatalf("best available = %v (amount %v), want A-2-1..3", h.Seats, h.Amount)
	}
	h2 := f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "bob", Section: "A", Quantity: 2}, Epoch)
	if !slices.Equal(h2.Seats, []string{"A-1-1", "A-1-2"}) {
		t.Fatalf("best available pair = %v, want A-1-1, A-1-2", h2.Seats)
	}
}

func testBestAvailableSoldOut(t *testing.T, f *fixture) {
	e := f.event(SmallVenue())
	for i, c := range []string{"a", "b"} {
		h := f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: c, Section: "B", Quantity: 4}, Epoch)
		if len(h.Seats) != 4 || h.Seats[0] != booking.SeatID("B", i+1, 1) {
			t.Fatalf("hold %d = %v", i, h.Seats)
		}
	}
	err := f.holdErr(booking.HoldRequest{EventID: e.ID, CustomerID: "c", Section: "B", Quantity: 1}, Epoch)
	wantErr(t, err, booking.KindConflict, booking.CodeSoldOut)
}

func testGeneralAdmission(t *testing.T, f *fixture) {
	e := f.event(SmallVenue())
	total := 0
	for _, c := range []string{"a", "b", "c"} {
		h := f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: c, Zone: "FLOOR", Quantity: 3}, Epoch)
		if h.Zone != "FLOOR" || h.Quantity != 3 || len(h.Seats) != 0 || h.Amount != 12000 {
			t.Fatalf("zone hold = %+v", h)
		}
		total += 3
	}
	err := f.holdErr(booking.HoldRequest{EventID: e.ID, CustomerID: "d", Zone: "FLOOR", Quantity: 2}, Epoch)
	wantErr(t, err, booking.KindConflict, booking.CodeSoldOut)
	f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "d", Zone: "FLOOR", Quantity: 1}, Epoch)
	m := f.seatMap(e.ID, Epoch)
	if z := m.Zones[0]; z.Held != 10 || z.Available != 0 {
		t.Fatalf("zone map = %+v", z)
	}
}

func testGeneralAdmissionReclaim(t *testing.T, f *fixture) {
	e := f.event(SmallVenue())
	for _, c := range []string{"a", "b"} {
		f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: c, Zone: "FLOOR", Quantity: 4}, Epoch)
	}
	f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "c", Zone: "FLOOR", Quantity: 2}, Epoch.Add(time.Minute))
	// Full. Once a and b lapse, their places are free again without a sweep.
	wantErr(t, f.holdErr(booking.HoldRequest{EventID: e.ID, CustomerID: "d", Zone: "FLOOR", Quantity: 4}, Epoch.Add(HoldTTL-time.Second)),
		booking.KindConflict, booking.CodeSoldOut)
	f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "d", Zone: "FLOOR", Quantity: 4}, Epoch.Add(HoldTTL))
	f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "e", Zone: "FLOOR", Quantity: 4}, Epoch.Add(HoldTTL))
}

func testCapPerCustomer(t *testing.T, f *fixture) {
	e := f.event(SmallVenue())
	f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "alice", Seats: []string{"A-1-1"}}, Epoch)
	f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "alice", Section: "B", Quantity: 2}, Epoch)
	f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "alice", Zone: "FLOOR", Quantity: 1}, Epoch)
	// The fifth seat is refused whichever way she asks.
	for _, req := range []booking.HoldRequest{
		{Seats: []string{"A-3-3"}},
		{Section: "A", Quantity: 1},
		{Zone: "FLOOR", Quantity: 1},
	} {
		req.EventID, req.CustomerID = e.ID, "alice"
		wantErr(t, f.holdErr(req, Epoch), booking.KindUnprocessable, booking.CodeOverLimit)
	}
	// Another customer is not affected, nor is another event.
	f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "bob", Section: "A", Quantity: 4}, Epoch)
	e2 := f.event(SmallVenue())
	f.hold(booking.HoldRequest{EventID: e2.ID, CustomerID: "alice", Section: "A", Quantity: 4}, Epoch)
	// A custom cap is honoured.
	f.hold(booking.HoldRequest{EventID: e2.ID, CustomerID: "carol", Section: "A", Quantity: 2, MaxPerCustomer: 2}, Epoch)
	wantErr(t, f.holdErr(booking.HoldRequest{EventID: e2.ID, CustomerID: "carol", Section: "A", Quantity: 1, MaxPerCustomer: 2}, Epoch),
		booking.KindUnprocessable, booking.CodeOverLimit)
}

func testCapCountsOrders(t *testing.T, f *fixture) {
	e := f.event(SmallVenue())
	h := f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "alice", Section: "A", Quantity: 3}, Epoch)
	f.pay(h, Epoch.Add(time.Minute))
	// Paid seats still count, long after the hold time.
	later := Epoch.Add(time.Hour)
	f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "alice", Section: "B", Quantity: 1}, later)
	wantErr(t, f.holdErr(booking.HoldRequest{EventID: e.ID, CustomerID: "alice", Zone: "FLOOR", Quantity: 1}, later),
		booking.KindUnprocessable, booking.CodeOverLimit)
}

func testExpiryByClock(t *testing.T, f *fixture) {
	e := f.event(SmallVenue())
	f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "alice", Seats: []string{"A-2-2", "A-2-3"}}, Epoch)
	justBefore := Epoch.Add(HoldTTL - time.Millisecond)
	wantErr(t, f.holdErr(booking.HoldRequest{EventID: e.ID, CustomerID: "bob", Seats: []string{"A-2-2"}}, justBefore),
		booking.KindConflict, booking.CodeSeatUnavailable)
	if m := f.seatMap(e.ID, justBefore); m.Held != 2 {
		t.Fatalf("held before expiry = %d", m.Held)
	}
	at := Epoch.Add(HoldTTL)
	if m := f.seatMap(e.ID, at); m.Held != 0 || m.Sections[0].Rows[1] != "aaaaaa" {
		t.Fatalf("seat map at expiry = %+v", m.Sections[0])
	}
	h := f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "bob", Seats: []string{"A-2-2"}}, at)
	if !slices.Equal(h.Seats, []string{"A-2-2"}) {
		t.Fatalf("bob's hold = %v", h.Seats)
	}
	// Alice's lapsed hold no longer counts against her cap.
	f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "alice", Section: "A", Quantity: 4}, at)
}

func testSweeper(t *testing.T, f *fixture) {
	e := f.event(SmallVenue())
	h1 := f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "a", Seats: []string{"A-1-1"}}, Epoch)
	f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "b", Zone: "FLOOR", Quantity: 3}, Epoch)
	h3 := f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "c", Seats: []string{"A-1-2"}}, Epoch.Add(time.Minute))
	n, err := f.s.SweepExpiredHolds(f.ctx, Epoch.Add(HoldTTL-time.Second), 100)
	if err != nil || n != 0 {
		t.Fatalf("early sweep = %d, %v", n, err)
	}
	n, err = f.s.SweepExpiredHolds(f.ctx, Epoch.Add(HoldTTL), 100)
	if err != nil || n != 2 {
		t.Fatalf("sweep = %d, %v; want 2", n, err)
	}
	got, err := f.s.GetHold(f.ctx, h1.ID, "a")
	if err != nil || got.Status != booking.HoldExpired {
		t.Fatalf("swept hold = %+v, %v", got, err)
	}
	if got, _ := f.s.GetHold(f.ctx, h3.ID, "c"); got.Status != booking.HoldActive {
		t.Fatalf("unexpired hold swept: %+v", got)
	}
	m := f.seatMap(e.ID, Epoch.Add(HoldTTL))
	if m.Zones[0].Held != 0 || m.Held != 1 {
		t.Fatalf("after sweep: zone %+v, held %d", m.Zones[0], m.Held)
	}
	if n, _ := f.s.SweepExpiredHolds(f.ctx, Epoch.Add(HoldTTL), 100); n != 0 {
		t.Fatalf("second sweep found %d", n)
	}
}

func testRelease(t *testing.T, f *fixture) {
	e := f.event(SmallVenue())
	h := f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "alice", Section: "A", Quantity: 4}, Epoch)
	_, err := f.s.ReleaseHold(f.ctx, h.ID, "bob", Epoch)
	wantErr(t, err, booking.KindNotFound, booking.CodeHoldNotFound)
	r, err := f.s.ReleaseHold(f.ctx, h.ID, "alice", Epoch)
	if err != nil || r.Status != booking.HoldReleased {
		t.Fatalf("ReleaseHold = %+v, %v", r, err)
	}
	if r, err := f.s.ReleaseHold(f.ctx, h.ID, "alice", Epoch); err != nil || r.Status != booking.HoldReleased {
		t.Fatalf("second ReleaseHold = %+v, %v", r, err)
	}
	if m := f.seatMap(e.ID, Epoch); m.Held != 0 {
		t.Fatalf("released seats still held: %d", m.Held)
	}
	// The released seats no longer count against the cap.
	f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "alice", Seats: h.Seats}, Epoch)
	_, err = f.s.BeginCheckout(f.ctx, h.ID, "alice", Epoch.Add(HoldTTL), Epoch, requestOf)
	wantErr(t, err, booking.KindConflict, booking.CodeHoldNotActive)
}

// testLapsedHoldsEndedByTheirCustomer: a customer's lapsed holds of every
// kind are ended by their next hold, before the sweeper comes: their seats
// and zone places go back and they stop counting against the cap, and a
// refusal over the cap says how many the customer holds.
func testLapsedHoldsEndedByTheirCustomer(t *testing.T, f *fixture) {
	e := f.event(SmallVenue())
	f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "alice", Seats: []string{"A-1-1"}}, Epoch)
	f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "alice", Section: "B", Quantity: 1}, Epoch)
	f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "alice", Zone: "FLOOR", Quantity: 2}, Epoch)
	err := f.holdErr(booking.HoldRequest{EventID: e.ID, CustomerID: "alice", Zone: "FLOOR", Quantity: 1}, Epoch)
	wantErr(t, err, booking.KindUnprocessable, booking.CodeOverLimit)
	if !strings.Contains(err.Error(), "you already have 4") {
		t.Fatalf("over the cap: %q, want it to say she holds 4", err)
	}
	at := Epoch.Add(HoldTTL)
	h := f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "alice", Seats: []string{"A-1-1", "A-1-2", "A-1-3", "A-1-4"}}, at)
	if len(h.Seats) != 4 {
		t.Fatalf("her next hold: %+v", h)
	}
	if m := f.seatMap(e.ID, at); m.Zones[0].Held != 0 || m.Held != 4 {
		t.Fatalf("after her lapsed holds ended: zone %+v, held %d; want the zone free and only her new 4 held", m.Zones[0], m.Held)
	}
	// Nothing was swept: her new hold ended the old ones.
	if n, err := f.s.SweepExpiredHolds(f.ctx, at, 100); err != nil || n != 0 {
		t.Fatalf("sweep after her hold: %d, %v; want nothing left to sweep", n, err)
	}
}
