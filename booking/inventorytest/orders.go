package inventorytest

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/booking"
)

func testCheckout(t *testing.T, f *fixture) {
	e := f.event(SmallVenue())
	h := f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "alice", Seats: []string{"A-1-1", "A-1-2"}}, Epoch)
	now := Epoch.Add(4 * time.Minute)
	extendTo := now.Add(HoldTTL)
	_, err := f.s.BeginCheckout(f.ctx, h.ID, "bob", extendTo, now, requestOf)
	wantErr(t, err, booking.KindNotFound, booking.CodeHoldNotFound)
	// A request that cannot be made opens no order and extends nothing.
	unmakeable := errors.New("no request")
	_, err = f.s.BeginCheckout(f.ctx, h.ID, "alice", extendTo, now, func(booking.Order) ([]byte, error) { return nil, unmakeable })
	if !errors.Is(err, unmakeable) {
		t.Fatalf("checkout whose request fails: %v, want its error", err)
	}
	if got, err := f.s.GetHold(f.ctx, h.ID, "alice"); err != nil || !got.ExpiresAt.Equal(h.ExpiresAt) {
		t.Fatalf("hold after a failed checkout = %+v, %v; want it unchanged", got, err)
	}
	var asked booking.Order
	o, err := f.s.BeginCheckout(f.ctx, h.ID, "alice", extendTo, now, func(o booking.Order) ([]byte, error) {
		asked = o
		return requestOf(o)
	})
	if err != nil {
		t.Fatal(err)
	}
	if o.Status != booking.OrderPendingPayment || o.Amount != 20000 || o.Currency != "EUR" || o.HoldID != h.ID ||
		!slices.Equal(o.Seats, h.Seats) || o.Payment.Status != booking.PaymentPending || o.Payment.IdempotencyKey == "" ||
		o.Payment.RefundKey == "" || o.Payment.IdempotencyKey == o.Payment.RefundKey || len(o.Tickets) != 0 {
		t.Fatalf("order = %+v", o)
	}
	// The request is made from the order being opened, and pinned with it.
	if asked.ID != o.ID || asked.Payment.ID != o.Payment.ID || asked.Amount != o.Amount || asked.Currency != o.Currency {
		t.Fatalf("request made from %+v, want the order %+v", asked, o)
	}
	wantPinned(t, "new order", o.Payment.CreateRequest, o.ID)
	again, err := f.s.BeginCheckout(f.ctx, h.ID, "alice", extendTo.Add(time.Minute), now.Add(time.Second), func(booking.Order) ([]byte, error) {
		return []byte(`{"order_id":"another process"}`), nil
	})
	if err != nil || again.ID != o.ID || again.Payment.ID != o.Payment.ID {
		t.Fatalf("second checkout = %+v, %v; want the same order", again, err)
	}
	wantPinned(t, "second checkout", again.Payment.CreateRequest, o.ID)
	// Pinned at checkout is pinned first: a later pin keeps it.
	pinned, err := f.s.PinPaymentRequest(f.ctx, o.ID, []byte(`{"order_id":"late"}`))
	if err != nil {
		t.Fatal(err)
	}
	wantPinned(t, "later pin", pinned, o.ID)
	got, err := f.s.GetHold(f.ctx, h.ID, "alice")
	if err != nil || !got.ExpiresAt.Equal(extendTo) {
		t.Fatalf("hold after checkout = %+v, %v; want expiry %v", got, err, extendTo)
	}
	// The extension is real: the seats stay held past the original expiry.
	wantErr(t, f.holdErr(booking.HoldRequest{EventID: e.ID, CustomerID: "bob", Seats: []string{"A-1-1"}}, Epoch.Add(HoldTTL+time.Minute)),
		booking.KindConflict, booking.CodeSeatUnavailable)
	// Attaching answers the order as it stands; the first payment attached
	// stays the order's.
	for _, pi := range []string{"pi_1", "pi_2"} {
		attached, err := f.s.AttachPayment(f.ctx, o.ID, pi, "http://pay/"+pi)
		if err != nil || attached.ID != o.ID || attached.Status != booking.OrderPendingPayment || !slices.Equal(attached.Seats, h.Seats) ||
			attached.Payment.ID != o.Payment.ID || attached.Payment.ProviderPaymentID != "pi_1" || attached.Payment.PayURL != "http://pay/pi_1" {
			t.Fatalf("attaching %s = %+v, %v; want the order with pi_1", pi, attached, err)
		}
		wantPinned(t, "attached order", attached.Payment.CreateRequest, o.ID)
	}
	got2, err := f.s.Order(f.ctx, o.ID, "alice")
	if err != nil || got2.Payment.ProviderPaymentID != "pi_1" || got2.Payment.PayURL != "http://pay/pi_1" {
		t.Fatalf("order after attach = %+v, %v", got2, err)
	}
	wantPinned(t, "order read", got2.Payment.CreateRequest, o.ID)
	_, err = f.s.Order(f.ctx, o.ID, "bob")
	wantErr(t, err, booking.KindNotFound, booking.CodeOrderNotFound)
	_, err = f.s.AttachPayment(f.ctx, "ord_nope", "pi", "")
	wantErr(t, err, booking.KindNotFound, booking.CodeOrderNotFound)
}

// wantPinned fails the test unless req is a pinned request of requestOf's
// for the order orderID. Stores may keep the request in another spelling of
// the same JSON, so it is compared decoded.
func wantPinned(t *testing.T, what string, req []byte, orderID string) {
	t.Helper()
	var r struct {
		OrderID string `json:"order_id"`
	}
	if err := json.Unmarshal(req, &r); err != nil || r.OrderID != orderID {
		t.Fatalf("%s: pinned request %q (%v), want the one made for %s", what, req, err, orderID)
	}
}

// testPinPaymentRequest pins different requests for one order from many
// goroutines at once: the first one stored is the one every caller gets
// back, then and afterwards. The order is opened with no request pinned, as
// orders opened before checkouts pinned theirs were.
func testPinPaymentRequest(t *testing.T, f *fixture) {
	e := f.event(SmallVenue())
	h := f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "alice", Section: "A", Quantity: 1}, Epoch)
	o, err := f.s.BeginCheckout(f.ctx, h.ID, "alice", Epoch.Add(HoldTTL), Epoch, nil)
	if err != nil {
		t.Fatal(err)
	}
	if o.Payment.CreateRequest != nil {
		t.Fatalf("order opened without a request carries %q", o.Payment.CreateRequest)
	}
	const callers = 12
	got := make([]string, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			req := fmt.Sprintf(`{"return_url":"http://process-%d/orders/%s"}`, i, o.ID)
			pinned, err := f.s.PinPaymentRequest(f.ctx, o.ID, []byte(req))
			if err != nil {
				t.Errorf("caller %d: %v", i, err)
				return
			}
			var r struct {
				ReturnURL string `json:"return_url"`
			}
			if err := json.Unmarshal(pinned, &r); err != nil {
				t.Errorf("caller %d: pinned %q: %v", i, pinned, err)
			}
			got[i] = r.ReturnURL
		})
	}
	wg.Wait()
	for i := range got {
		if got[i] == "" || got[i] != got[0] {
			t.Fatalf("callers were given %q and %q; want one pinned request", got[0], got[i])
		}
	}
	later, err := f.s.PinPaymentRequest(f.ctx, o.ID, []byte(`{"return_url":"http://late"}`))
	if err != nil || !json.Valid(later) || string(later) == `{"return_url":"http://late"}` {
		t.Fatalf("a later pin = %s, %v; want the first request", later, err)
	}
	// The order carries what was pinned, so that a checkout retried later
	// finds it without pinning again.
	again, err := f.s.BeginCheckout(f.ctx, h.ID, "alice", Epoch.Add(HoldTTL), Epoch, requestOf)
	if err != nil || !json.Valid(again.Payment.CreateRequest) || !jsonEqual(again.Payment.CreateRequest, later) {
		t.Fatalf("checkout after the pin carries %s, %v; want %s", again.Payment.CreateRequest, err, later)
	}
	_, err = f.s.PinPaymentRequest(f.ctx, "ord_nope", []byte(`{}`))
	wantErr(t, err, booking.KindNotFound, booking.CodeOrderNotFound)
}

// jsonEqual reports whether a and b are the same JSON value, however spelt.
func jsonEqual(a, b []byte) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}

func testCheckoutExpired(t *testing.T, f *fixture) {
	e := f.event(SmallVenue())
	h := f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "alice", Section: "A", Quantity: 1}, Epoch)
	at := Epoch.Add(HoldTTL)
	_, err := f.s.BeginCheckout(f.ctx, h.ID, "alice", at.Add(HoldTTL), at, requestOf)
	wantErr(t, err, booking.KindGone, booking.CodeHoldExpired)
}

func testConfirmPayment(t *testing.T, f *fixture) {
	e := f.event(SmallVenue())
	h := f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "alice", Seats: []string{"B-1-1", "B-1-2"}}, Epoch)
	hz := f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "alice", Zone: "FLOOR", Quantity: 2}, Epoch)
	now := Epoch.Add(time.Minute)
	o := f.pay(h, now)
	if o.Status != booking.OrderPaid || o.PaidAt == nil || !o.PaidAt.Equal(now) || o.Payment.Status != booking.PaymentSucceeded ||
		len(o.Tickets) != 2 || o.Tickets[0].Seat != "B-1-1" || o.Tickets[1].Seat != "B-1-2" || o.Tickets[0].OrderID != o.ID {
		t.Fatalf("paid order = %+v", o)
	}
	oz := f.pay(hz, now)
	if oz.Status != booking.OrderPaid || len(oz.Tickets) != 2 || oz.Tickets[0].Zone != "FLOOR" || oz.Tickets[0].Seat != "" {
		t.Fatalf("paid zone order = %+v", oz)
	}
	if hh, _ := f.s.GetHold(f.ctx, h.ID, "alice"); hh.Status != booking.HoldOrdered {
		t.Fatalf("hold after payment = %s", hh.Status)
	}
	// Sold is sold: long after the hold time, and after a sweep.
	later := Epoch.Add(24 * time.Hour)
	if _, err := f.s.SweepExpiredHolds(f.ctx, later, 100); err != nil {
		t.Fatal(err)
	}
	m := f.seatMap(e.ID, later)
	if m.Sold != 4 || m.Sections[1].Rows[0] != "ssaa" || m.Zones[0].Sold != 2 || m.Zones[0].Held != 0 {
		t.Fatalf("seat map after sale = %+v", m)
	}
	wantErr(t, f.holdErr(booking.HoldRequest{EventID: e.ID, CustomerID: "bob", Seats: []string{"B-1-1"}}, later),
		booking.KindConflict, booking.CodeSeatUnavailable)
	if _, err := f.s.ReleaseHold(f.ctx, h.ID, "alice", later); booking.KindOf(err) != booking.KindConflict {
		t.Fatalf("releasing a paid hold: %v", err)
	}
	msgs, err := f.s.PendingOutbox(f.ctx, 10)
	if err != nil || len(msgs) != 2 {
		t.Fatalf("outbox = %+v, %v; want 2 messages", msgs, err)
	}
	var p booking.OrderPaidPayload
	if err := json.Unmarshal(msgs[0].Payload, &p); err != nil {
		t.Fatal(err)
	}
	if msgs[0].Topic != booking.TopicOrderPaid || p.OrderID != o.ID || p.CustomerID != "alice" || len(p.TicketIDs) != 2 || p.EventID != e.ID {
		t.Fatalf("outbox message = %+v %+v", msgs[0], p)
	}
}

func testConfirmIdempotent(t *testing.T, f *fixture) {
	e := f.event(SmallVenue())
	h := f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "alice", Section: "A", Quantity: 2}, Epoch)
	o := f.checkout(h, Epoch)
	c := booking.PaymentConfirmation{ProviderEventID: "evt_1", ProviderPaymentID: "pi_1", OrderID: o.ID, Amount: o.Amount}
	first, err := f.s.ConfirmPayment(f.ctx, c, Epoch)
	if err != nil || first.Status != booking.OrderPaid {
		t.Fatalf("confirm = %+v, %v", first, err)
	}
	for _, id := range []string{"evt_1", "evt_2"} { // the same event again, and another event for the same payment
		c.ProviderEventID = id
		again, err := f.s.ConfirmPayment(f.ctx, c, Epoch.Add(time.Minute))
		if err != nil || again.Status != booking.OrderPaid || len(again.Tickets) != 2 || again.Tickets[0].ID != first.Tickets[0].ID {
			t.Fatalf("repeat confirm %s = %+v, %v", id, again, err)
		}
	}
	if msgs, _ := f.s.PendingOutbox(f.ctx, 10); len(msgs) != 1 {
		t.Fatalf("outbox has %d messages, want 1", len(msgs))
	}
	_, err = f.s.ConfirmPayment(f.ctx, booking.PaymentConfirmation{ProviderEventID: "evt_x", OrderID: "ord_unknown"}, Epoch)
	wantErr(t, err, booking.KindNotFound, booking.CodeOrderNotFound)
}

func testLatePaymentRetakes(t *testing.T, f *fixture) {
	e := f.event(SmallVenue())
	h := f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "alice", Seats: []string{"A-3-1", "A-3-2"}}, Epoch)
	o := f.checkout(h, Epoch)
	late := Epoch.Add(time.Hour)
	if n, err := f.s.SweepExpiredHolds(f.ctx, late, 100); err != nil || n != 1 {
		t.Fatalf("sweep = %d, %v", n, err)
	}
	got, err := f.confirm(o, "evt_late", late)
	if err != nil || got.Status != booking.OrderPaid || len(got.Tickets) != 2 {
		t.Fatalf("late payment with free seats = %+v, %v; want paid", got, err)
	}
	// Re-taken seats count against the cap again.
	f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "alice", Section: "B", Quantity: 2}, late)
	wantErr(t, f.holdErr(booking.HoldRequest{EventID: e.ID, CustomerID: "alice", Section: "B", Quantity: 1}, late),
		booking.KindUnprocessable, booking.CodeOverLimit)
}

func testLatePaymentRefund(t *testing.T, f *fixture) {
	e := f.event(SmallVenue())
	h := f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "alice", Seats: []string{"A-3-1", "A-3-2"}}, Epoch)
	o := f.checkout(h, Epoch)
	// Not swept: bob takes one of the lapsed seats directly.
	late := Epoch.Add(time.Hour)
	f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "bob", Seats: []string{"A-3-2"}}, late)
	got, err := f.confirm(o, "evt_late", late)
	if err != nil || got.Status != booking.OrderRefundPending || len(got.Tickets) != 0 || got.Payment.Status != booking.PaymentSucceeded {
		t.Fatalf("late payment with a taken seat = %+v, %v; want refund_pending", got, err)
	}
	m := f.seatMap(e.ID, late)
	if m.Sections[0].Rows[2] != "ahaaaa" || m.Sold != 0 {
		t.Fatalf("seats after refused payment: %q sold %d", m.Sections[0].Rows[2], m.Sold)
	}
	pending, err := f.s.OrdersAwaitingRefund(f.ctx, 10)
	if err != nil || len(pending) != 1 || pending[0].ID != o.ID || pending[0].Payment.RefundKey == "" {
		t.Fatalf("awaiting refund = %+v, %v", pending, err)
	}
	for i := range 2 {
		r, err := f.s.RefundOrder(f.ctx, booking.RefundRequest{OrderID: o.ID, Reason: booking.RefundPlacesLost}, late)
		if err != nil || r.Order.Status != booking.OrderRefunded || r.Order.Payment.Status != booking.PaymentRefunded ||
			r.Order.RefundReason != booking.RefundPlacesLost || r.Returned != 0 || r.AlreadyRefunded != (i == 1) {
			t.Fatalf("refund %d of a refund_pending order = %+v, %v", i+1, r, err)
		}
	}
	if pending, _ := f.s.OrdersAwaitingRefund(f.ctx, 10); len(pending) != 0 {
		t.Fatalf("still awaiting refund: %+v", pending)
	}
	// Alice's cap is free again: she paid for nothing she kept.
	f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "alice", Section: "A", Quantity: 4}, late)
}

func testLateZonePayment(t *testing.T, f *fixture) {
	e := f.event(SmallVenue())
	h := f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "alice", Zone: "FLOOR", Quantity: 4}, Epoch)
	o := f.checkout(h, Epoch)
	late := Epoch.Add(time.Hour)
	f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "bob", Zone: "FLOOR", Quantity: 4}, late)
	got, err := f.confirm(o, "evt_1", late)
	if err != nil || got.Status != booking.OrderPaid || len(got.Tickets) != 4 {
		t.Fatalf("late zone payment with room left = %+v, %v", got, err)
	}
	h2 := f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "carol", Zone: "FLOOR", Quantity: 2}, late)
	o2 := f.checkout(h2, late)
	later := late.Add(time.Hour)
	f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "dave", Zone: "FLOOR", Quantity: 4}, later)
	f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "erin", Zone: "FLOOR", Quantity: 2}, later)
	got, err = f.confirm(o2, "evt_2", later)
	if err != nil || got.Status != booking.OrderRefundPending {
		t.Fatalf("late zone payment with the zone full = %+v, %v", got, err)
	}
}

func testAmountMismatch(t *testing.T, f *fixture) {
	e := f.event(SmallVenue())
	h := f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "alice", Section: "A", Quantity: 1}, Epoch)
	o := f.checkout(h, Epoch)
	got, err := f.s.ConfirmPayment(f.ctx, booking.PaymentConfirmation{ProviderEventID: "evt_1", OrderID: o.ID, Amount: o.Amount - 1}, Epoch)
	if err != nil || got.Status != booking.OrderRefundPending {
		t.Fatalf("underpaid order = %+v, %v; want refund_pending", got, err)
	}
	if m := f.seatMap(e.ID, Epoch); m.Held != 0 || m.Sold != 0 {
		t.Fatalf("underpaid order kept seats: %+v", m)
	}
}

func testOutboxAndDelivery(t *testing.T, f *fixture) {
	e := f.event(SmallVenue())
	var orders []booking.Order
	for _, c := range []string{"a", "b", "c"} {
		h := f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: c, Section: "A", Quantity: 1}, Epoch)
		orders = append(orders, f.pay(h, Epoch))
	}
	msgs, err := f.s.PendingOutbox(f.ctx, 2)
	if err != nil || len(msgs) != 2 || msgs[0].ID >= msgs[1].ID {
		t.Fatalf("PendingOutbox(2) = %+v, %v", msgs, err)
	}
	if err := f.s.MarkPublished(f.ctx, []int64{msgs[0].ID}, Epoch); err != nil {
		t.Fatal(err)
	}
	rest, err := f.s.PendingOutbox(f.ctx, 10)
	if err != nil || len(rest) != 2 || rest[0].ID != msgs[1].ID {
		t.Fatalf("after publishing one: %+v, %v", rest, err)
	}
	tk := orders[0].Tickets[0]
	first, err := f.s.RecordDelivery(f.ctx, booking.Delivery{TicketID: tk.ID, Code: "code-1", DeliveredAt: Epoch})
	if err != nil || !first {
		t.Fatalf("first delivery = %v, %v", first, err)
	}
	again, err := f.s.RecordDelivery(f.ctx, booking.Delivery{TicketID: tk.ID, Code: "code-2", DeliveredAt: Epoch.Add(time.Second)})
	if err != nil || again {
		t.Fatalf("second delivery = %v, %v; want false", again, err)
	}
	o, err := f.s.Order(f.ctx, orders[0].ID, "a")
	if err != nil || o.Tickets[0].Delivery == nil || o.Tickets[0].Delivery.Code != "code-1" || !o.Tickets[0].Delivery.DeliveredAt.Equal(Epoch) {
		t.Fatalf("order with delivery = %+v, %v", o, err)
	}
	_, err = f.s.RecordDelivery(f.ctx, booking.Delivery{TicketID: "tkt_unknown", Code: "x", DeliveredAt: Epoch})
	wantErr(t, err, booking.KindNotFound, booking.CodeNotFound)
}

func testIdempotency(t *testing.T, f *fixture) {
	k := booking.IdempotencyKey{Scope: "alice", Key: "k1", Fingerprint: "fp1"}
	begin := func(k booking.IdempotencyKey, now time.Time) booking.IdempotencyResult {
		t.Helper()
		r, err := f.s.BeginIdempotent(f.ctx, k, now)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := begin(k, Epoch); r.State != booking.IdempotencyNew {
		t.Fatalf("first claim = %v", r.State)
	}
	if r := begin(k, Epoch); r.State != booking.IdempotencyInFlight {
		t.Fatalf("claim while in flight = %v", r.State)
	}
	other := k
	other.Fingerprint = "fp2"
	if r := begin(other, Epoch); r.State != booking.IdempotencyMismatch {
		t.Fatalf("claim with other parameters = %v", r.State)
	}
	if r := begin(booking.IdempotencyKey{Scope: "bob", Key: "k1", Fingerprint: "fp2"}, Epoch); r.State != booking.IdempotencyNew {
		t.Fatalf("another scope's key = %v", r.State)
	}
	if err := f.s.CompleteIdempotent(f.ctx, k, booking.SavedResponse{Status: 201, Body: []byte(`{"id":"x"}`)}); err != nil {
		t.Fatal(err)
	}
	r := begin(k, Epoch.Add(time.Hour))
	if r.State != booking.IdempotencyReplay || r.Response.Status != 201 || string(r.Response.Body) != `{"id":"x"}` {
		t.Fatalf("replay = %+v", r)
	}
	if r := begin(other, Epoch.Add(time.Hour)); r.State != booking.IdempotencyMismatch {
		t.Fatalf("mismatch after completion = %v", r.State)
	}
	if r := begin(k, Epoch.Add(booking.IdempotencyKeyTTL)); r.State != booking.IdempotencyNew {
		t.Fatalf("claim after the key's lifetime = %v", r.State)
	}
	// Abandoned claims free the key at once; stuck claims after the timeout.
	k2 := booking.IdempotencyKey{Scope: "alice", Key: "k2", Fingerprint: "fp"}
	begin(k2, Epoch)
	if err := f.s.AbandonIdempotent(f.ctx, k2); err != nil {
		t.Fatal(err)
	}
	if r := begin(k2, Epoch); r.State != booking.IdempotencyNew {
		t.Fatalf("claim after abandon = %v", r.State)
	}
	if r := begin(k2, Epoch.Add(booking.IdempotencyClaimTimeout-time.Second)); r.State != booking.IdempotencyInFlight {
		t.Fatalf("claim before timeout = %v", r.State)
	}
	if r := begin(k2, Epoch.Add(booking.IdempotencyClaimTimeout)); r.State != booking.IdempotencyNew {
		t.Fatalf("claim after timeout = %v", r.State)
	}
}

func testPaymentFailed(t *testing.T, f *fixture) {
	e := f.event(SmallVenue())
	h := f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "alice", Seats: []string{"A-1-1", "A-1-2"}}, Epoch)
	o := f.checkout(h, Epoch)
	for range 2 { // the same event twice
		got, err := f.s.FailPayment(f.ctx, o.ID, "evt_declined", Epoch)
		if err != nil || got.Status != booking.OrderPaymentFailed || got.Payment.Status != booking.PaymentFailed {
			t.Fatalf("FailPayment = %+v, %v", got, err)
		}
	}
	if hh, _ := f.s.GetHold(f.ctx, h.ID, "alice"); hh.Status != booking.HoldReleased {
		t.Fatalf("hold after a declined payment = %s, want released", hh.Status)
	}
	if m := f.seatMap(e.ID, Epoch); m.Held != 0 {
		t.Fatalf("declined payment kept %d seats held", m.Held)
	}
	f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "alice", Section: "A", Quantity: 4}, Epoch)
	_, err := f.s.FailPayment(f.ctx, "ord_unknown", "evt_x", Epoch)
	wantErr(t, err, booking.KindNotFound, booking.CodeOrderNotFound)

	// A decline never undoes a paid order.
	h2 := f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "bob", Section: "B", Quantity: 1}, Epoch)
	paid := f.pay(h2, Epoch)
	got, err := f.s.FailPayment(f.ctx, paid.ID, "evt_late_decline", Epoch)
	if err != nil || got.Status != booking.OrderPaid || len(got.Tickets) != 1 {
		t.Fatalf("decline after payment = %+v, %v", got, err)
	}
}
