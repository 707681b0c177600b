package inventorytest

import (
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/booking"
)

// refund refunds a paid order as returned, for its whole amount.
func (f *fixture) refund(o booking.Order, now time.Time) (booking.RefundResult, error) {
	return f.s.RefundOrder(f.ctx, booking.RefundRequest{OrderID: o.ID, Reason: booking.RefundReturned, Amount: o.Amount}, now)
}

// refundMessages returns the order.refunded outbox messages.
func (f *fixture) refundMessages() []booking.OrderRefundedPayload {
	f.t.Helper()
	msgs, err := f.s.PendingOutbox(f.ctx, 1000)
	if err != nil {
		f.t.Fatalf("PendingOutbox: %v", err)
	}
	var out []booking.OrderRefundedPayload
	for _, m := range msgs {
		if m.Topic != booking.TopicOrderRefunded {
			continue
		}
		var p booking.OrderRefundedPayload
		if err := json.Unmarshal(m.Payload, &p); err != nil {
			f.t.Fatalf("order.refunded payload %s: %v", m.Payload, err)
		}
		out = append(out, p)
	}
	return out
}

// wantRefunded checks a first refund of a paid order: refunded as returned,
// every ticket cancelled, n places returned.
func wantRefunded(t *testing.T, r booking.RefundResult, err error, n int) {
	t.Helper()
	o := r.Order
	if err != nil || r.AlreadyRefunded || r.Returned != n || o.Status != booking.OrderRefunded ||
		o.RefundReason != booking.RefundReturned || o.RefundedAt == nil || o.Payment.Status != booking.PaymentRefunded || len(o.Tickets) != n {
		t.Fatalf("refund = %+v, %v; want refunded, %d places returned", r, err, n)
	}
	for _, tk := range o.Tickets {
		if tk.Live() {
			t.Fatalf("ticket %+v of a refunded order is still live", tk)
		}
	}
}

func testRefundPaidSeats(t *testing.T, f *fixture) {
	e := f.event(SmallVenue())
	seats := []string{"A-1-1", "A-1-2"}
	o := f.pay(f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "alice", Seats: seats}, Epoch), Epoch)
	if m := f.seatMap(e.ID, Epoch); m.Sold != 2 || m.Sections[0].Rows[0] != "ssaaaa" {
		t.Fatalf("before the refund: sold %d, row %q", m.Sold, m.Sections[0].Rows[0])
	}
	at := Epoch.Add(time.Hour)
	r, err := f.refund(o, at)
	wantRefunded(t, r, err, 2)
	m := f.seatMap(e.ID, at)
	if m.Sold != 0 || m.Available != m.Capacity || m.Sections[0].Rows[0] != "aaaaaa" {
		t.Fatalf("after the refund: sold %d, available %d of %d, row %q", m.Sold, m.Available, m.Capacity, m.Sections[0].Rows[0])
	}
	msgs := f.refundMessages()
	if len(msgs) != 1 || msgs[0].OrderID != o.ID || msgs[0].Returned != 2 || msgs[0].Reason != booking.RefundReturned ||
		!slices.Equal(slices.Sorted(slices.Values(msgs[0].TicketIDs)), slices.Sorted(slices.Values(ticketIDs(o)))) {
		t.Fatalf("order.refunded messages = %+v; want one naming the order's tickets %v", msgs, ticketIDs(o))
	}
	// A repeat changes nothing and says so; a refund for the other reason
	// is refused.
	again, err := f.refund(o, at.Add(time.Minute))
	if err != nil || !again.AlreadyRefunded || again.Returned != 0 || again.Order.Status != booking.OrderRefunded || !again.Order.RefundedAt.Equal(at) {
		t.Fatalf("second refund = %+v, %v; want a repeat that changes nothing", again, err)
	}
	_, err = f.s.RefundOrder(f.ctx, booking.RefundRequest{OrderID: o.ID, Reason: booking.RefundPlacesLost}, at)
	wantErr(t, err, booking.KindConflict, booking.CodeOrderNotRefundable)
	if n := len(f.refundMessages()); n != 1 {
		t.Fatalf("%d order.refunded messages after the repeats, want 1", n)
	}
	if hh, _ := f.s.GetHold(f.ctx, o.HoldID, "alice"); hh.Status != booking.HoldReleased {
		t.Fatalf("hold of a refunded order = %s, want released", hh.Status)
	}
	// Alice's cap is free again, and the seats sell again, each with one
	// live ticket: bob buys one, alice buys the other back.
	f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "alice", Section: "B", Quantity: 3}, at)
	bob := f.pay(f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "bob", Seats: []string{"A-1-1"}}, at), at)
	back := f.pay(f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "alice", Seats: []string{"A-1-2"}}, at), at)
	for _, p := range []booking.Order{bob, back} {
		if p.Status != booking.OrderPaid || len(p.Tickets) != 1 || !p.Tickets[0].Live() {
			t.Fatalf("resold order = %+v; want paid with one live ticket", p)
		}
	}
	old, err := f.s.Order(f.ctx, o.ID, "alice")
	if err != nil || old.Status != booking.OrderRefunded || len(old.Tickets) != 2 || old.Tickets[0].Live() || old.Tickets[1].Live() {
		t.Fatalf("refunded order after the resale = %+v, %v; want its two tickets cancelled", old, err)
	}
	if m := f.seatMap(e.ID, at); m.Sections[0].Rows[0] != "ssaaaa" {
		t.Fatalf("after the resale: row %q", m.Sections[0].Rows[0])
	}
}

func ticketIDs(o booking.Order) []string {
	ids := make([]string, len(o.Tickets))
	for i, t := range o.Tickets {
		ids[i] = t.ID
	}
	return ids
}

func testRefundPaidZone(t *testing.T, f *fixture) {
	e := f.event(SmallVenue())
	alice := f.pay(f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "alice", Zone: "FLOOR", Quantity: 4}, Epoch), Epoch)
	f.pay(f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "bob", Zone: "FLOOR", Quantity: 4}, Epoch), Epoch)
	f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "carol", Zone: "FLOOR", Quantity: 2}, Epoch)
	wantErr(t, f.holdErr(booking.HoldRequest{EventID: e.ID, CustomerID: "dave", Zone: "FLOOR", Quantity: 1}, Epoch), booking.KindConflict, booking.CodeSoldOut)
	r, err := f.refund(alice, Epoch)
	wantRefunded(t, r, err, 4)
	if z := f.seatMap(e.ID, Epoch).Zones[0]; z.Available != 4 || z.Sold != 4 {
		t.Fatalf("zone after the refund = %+v; want 4 available, 4 sold", z)
	}
	// The four places sell again, and no more.
	f.pay(f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "dave", Zone: "FLOOR", Quantity: 4}, Epoch), Epoch)
	wantErr(t, f.holdErr(booking.HoldRequest{EventID: e.ID, CustomerID: "erin", Zone: "FLOOR", Quantity: 1}, Epoch), booking.KindConflict, booking.CodeSoldOut)
	if z := f.seatMap(e.ID, Epoch).Zones[0]; z.Available != 0 || z.Sold != 8 {
		t.Fatalf("zone after the resale = %+v; want 0 available, 8 sold", z)
	}
}

// testRefundRefused: only a paid order is refunded as returned, only for
// its whole amount; a refused refund changes nothing.
func testRefundRefused(t *testing.T, f *fixture) {
	e := f.event(SmallVenue())
	pending := f.checkout(f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "alice", Seats: []string{"A-1-1"}}, Epoch), Epoch)
	failed := f.checkout(f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "bob", Seats: []string{"A-1-2"}}, Epoch), Epoch)
	if _, err := f.s.FailPayment(f.ctx, failed.ID, "evt_declined", Epoch); err != nil {
		t.Fatal(err)
	}
	lost := f.checkout(f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "carol", Section: "A", Quantity: 1}, Epoch), Epoch)
	if got, err := f.s.ConfirmPayment(f.ctx, booking.PaymentConfirmation{ProviderEventID: "evt_short", OrderID: lost.ID, Amount: lost.Amount - 1}, Epoch); err != nil || got.Status != booking.OrderRefundPending {
		t.Fatalf("underpaid order = %+v, %v; want refund_pending", got, err)
	}
	paid := f.pay(f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "dave", Seats: []string{"B-1-1", "B-1-2"}}, Epoch), Epoch)
	before := f.seatMap(e.ID, Epoch)
	cases := []struct {
		name string
		req  booking.RefundRequest
		kind booking.Kind
		code string
	}{
		{"unknown order", booking.RefundRequest{OrderID: "ord_unknown", Reason: booking.RefundReturned, Amount: 100}, booking.KindNotFound, booking.CodeOrderNotFound},
		{"order awaiting its payment", booking.RefundRequest{OrderID: pending.ID, Reason: booking.RefundReturned, Amount: pending.Amount}, booking.KindConflict, booking.CodeOrderNotRefundable},
		{"order whose payment failed", booking.RefundRequest{OrderID: failed.ID, Reason: booking.RefundReturned, Amount: failed.Amount}, booking.KindConflict, booking.CodeOrderNotRefundable},
		{"refund_pending order refunded as returned", booking.RefundRequest{OrderID: lost.ID, Reason: booking.RefundReturned, Amount: lost.Amount}, booking.KindConflict, booking.CodeOrderNotRefundable},
		{"paid order refunded as places lost", booking.RefundRequest{OrderID: paid.ID, Reason: booking.RefundPlacesLost}, booking.KindConflict, booking.CodeOrderNotRefundable},
		{"part of a paid order", booking.RefundRequest{OrderID: paid.ID, Reason: booking.RefundReturned, Amount: paid.Amount / 2}, booking.KindConflict, booking.CodeRefundAmountMismatch},
		{"more than a paid order", booking.RefundRequest{OrderID: paid.ID, Reason: booking.RefundReturned, Amount: paid.Amount + 1}, booking.KindConflict, booking.CodeRefundAmountMismatch},
		{"no reason", booking.RefundRequest{OrderID: paid.ID, Amount: paid.Amount}, booking.KindInvalid, booking.CodeInvalidRequest},
	}
	for _, c := range cases {
		_, err := f.s.RefundOrder(f.ctx, c.req, Epoch)
		if be := wantErr(t, err, c.kind, c.code); be.Message == "" {
			t.Fatalf("%s: refused without a message", c.name)
		}
	}
	if after := f.seatMap(e.ID, Epoch); after.Sold != before.Sold || after.Held != before.Held || after.Available != before.Available {
		t.Fatalf("refused refunds changed the inventory: %+v -> %+v", before, after)
	}
	for _, o := range []booking.Order{pending, failed, lost, paid} {
		got, err := f.s.Order(f.ctx, o.ID, "")
		if err != nil || got.Status == booking.OrderRefunded {
			t.Fatalf("order %s after refused refunds = %+v, %v", o.ID, got, err)
		}
	}
	if n := len(f.refundMessages()); n != 0 {
		t.Fatalf("%d order.refunded messages after refused refunds, want 0", n)
	}
}

// testConcurrentRefunds refunds one paid order from many callers at once:
// exactly one returns the places, the others are told it was refunded.
func testConcurrentRefunds(t *testing.T, f *fixture) {
	e := f.event(SmallVenue())
	o := f.pay(f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "alice", Seats: []string{"A-2-1", "A-2-2", "A-2-3"}}, Epoch), Epoch)
	const callers = 8
	results := make([]booking.RefundResult, callers)
	errs := make([]error, callers)
	race(callers, func(i int) { results[i], errs[i] = f.refund(o, Epoch.Add(time.Duration(i)*time.Second)) })
	won := 0
	for i, r := range results {
		if errs[i] != nil {
			t.Fatalf("refund %d: %v", i, errs[i])
		}
		switch {
		case !r.AlreadyRefunded && r.Returned == 3:
			won++
		case r.AlreadyRefunded && r.Returned == 0:
		default:
			t.Fatalf("refund %d = %+v; want a win (3 returned) or a repeat", i, r)
		}
		if r.Order.Status != booking.OrderRefunded {
			t.Fatalf("refund %d answered the order %+v", i, r.Order)
		}
	}
	if won != 1 {
		t.Fatalf("%d refunds won, want exactly 1", won)
	}
	if n := len(f.refundMessages()); n != 1 {
		t.Fatalf("%d order.refunded messages, want 1", n)
	}
	if m := f.seatMap(e.ID, Epoch); m.Sold != 0 || m.Available != m.Capacity {
		t.Fatalf("after the refunds: sold %d, available %d of %d", m.Sold, m.Available, m.Capacity)
	}
}

// testRefundResaleRace sells, refunds and sells one seat again several
// times, the resales raced by several buyers each time: the seat keeps one
// live ticket at most, whoever wins, and every refunded order keeps its
// tickets, cancelled.
func testRefundResaleRace(t *testing.T, f *fixture) {
	e := f.event(SmallVenue())
	seat := []string{"B-2-4"}
	var refunded []booking.Order
	o := f.pay(f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "first", Seats: seat}, Epoch), Epoch)
	for round := range 3 {
		at := Epoch.Add(time.Duration(round+1) * time.Minute)
		r, err := f.refund(o, at)
		wantRefunded(t, r, err, 1)
		refunded = append(refunded, r.Order)
		const buyers = 6
		var mu sync.Mutex
		var paid []booking.Order
		race(buyers, func(i int) {
			h, err := f.s.Hold(f.ctx, booking.HoldRequest{EventID: e.ID, CustomerID: fanName(round, i), Seats: seat, TTL: HoldTTL}, at)
			if err != nil {
				return // another buyer holds the seat
			}
			p, err := f.s.BeginCheckout(f.ctx, h.ID, h.CustomerID, at.Add(HoldTTL), at, requestOf)
			if err == nil {
				p, err = f.s.ConfirmPayment(f.ctx, booking.PaymentConfirmation{ProviderEventID: "evt_" + p.ID, OrderID: p.ID, Amount: p.Amount}, at)
			}
			if err != nil {
				t.Errorf("buyer %d: %v", i, err)
				return
			}
			mu.Lock()
			paid = append(paid, p)
			mu.Unlock()
		})
		if len(paid) != 1 || paid[0].Status != booking.OrderPaid {
			t.Fatalf("round %d: %d buyers paid (%+v); want exactly one", round, len(paid), paid)
		}
		o = paid[0]
		f.checkInvariants()
	}
	for _, r := range refunded {
		got, err := f.s.Order(f.ctx, r.ID, "")
		if err != nil || got.Status != booking.OrderRefunded || len(got.Tickets) != 1 || got.Tickets[0].Live() {
			t.Fatalf("refunded order %s = %+v, %v; want its ticket kept, cancelled", r.ID, got, err)
		}
	}
	if m := f.seatMap(e.ID, Epoch.Add(time.Hour)); m.Sold != 1 {
		t.Fatalf("sold %d after the last resale, want 1", m.Sold)
	}
}

func fanName(round, i int) string { return string(rune('a'+round)) + string(rune('0'+i)) }
