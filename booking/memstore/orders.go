package memstore

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/foyer-dev/foyer/booking"
)

// BeginCheckout extends the hold and opens its order, its create request
// pinned, once.
func (s *Store) BeginCheckout(_ context.Context, holdID, customerID string, extendTo, now time.Time, request func(booking.Order) ([]byte, error)) (booking.Order, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h, ok := s.holds[holdID]
	if !ok || h.CustomerID != customerID {
		return booking.Order{}, errHoldNotFound(holdID)
	}
	if id, ok := s.orderByHold[holdID]; ok {
		return s.orderLocked(s.orders[id]), nil
	}
	if err := booking.CheckoutAllowed(*h, now); err != nil {
		return booking.Order{}, err
	}
	e := s.events[h.EventID]
	o := booking.NewOrder(*h, e.Currency, now)
	if request != nil {
		// Asked before anything changes, so that a failure leaves no order.
		req, err := request(o)
		if err != nil {
			return booking.Order{}, err
		}
		s.paymentRequests[o.ID] = slices.Clone(req)
	}
	if extendTo.After(h.ExpiresAt) {
		h.ExpiresAt = extendTo.UTC()
		for _, id := range h.Seats {
			if st := e.seats[id]; st.holdID == h.ID {
				st.heldUntil = h.ExpiresAt
			}
		}
	}
	s.orders[o.ID] = &o
	s.orderByHold[holdID] = o.ID
	return s.orderLocked(&o), nil
}

// PinPaymentRequest stores the create request unless one is stored.
func (s *Store) PinPaymentRequest(_ context.Context, orderID string, req []byte) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.orders[orderID]; !ok {
		return nil, errOrderNotFound(orderID)
	}
	if pinned, ok := s.paymentRequests[orderID]; ok {
		return slices.Clone(pinned), nil
	}
	s.paymentRequests[orderID] = slices.Clone(req)
	return slices.Clone(req), nil
}

// AttachPayment records the provider's side of the payment, once, and
// returns the order.
func (s *Store) AttachPayment(_ context.Context, orderID, providerPaymentID, payURL string) (booking.Order, error) {
	return s.changeOrder(orderID, func(o *booking.Order) {
		if o.Payment.ProviderPaymentID == "" {
			o.Payment.ProviderPaymentID = providerPaymentID
			o.Payment.PayURL = payURL
		}
	})
}

// ConfirmPayment turns a paid order's hold into tickets, once per provider
// event.
func (s *Store) ConfirmPayment(_ context.Context, c booking.PaymentConfirmation, now time.Time) (booking.Order, error) {
	return s.changeOrder(c.OrderID, func(o *booking.Order) {
		if s.providerEvents[c.ProviderEventID] {
			return
		}
		s.providerEvents[c.ProviderEventID] = true
		if o.Status == booking.OrderPendingPayment {
			s.confirmLocked(o, c, now)
		}
	})
}

// confirmLocked turns a pending order's hold into tickets, or marks the order
// refund_pending when its places cannot be secured or the amount is wrong.
func (s *Store) confirmLocked(o *booking.Order, c booking.PaymentConfirmation, now time.Time) {
	if o.Payment.ProviderPaymentID == "" {
		o.Payment.ProviderPaymentID = c.ProviderPaymentID
	}
	o.Payment.Status = booking.PaymentSucceeded
	h := s.holds[o.HoldID]
	e := s.events[o.EventID]
	if c.Amount != o.Amount || !s.secureLocked(e, h, c.MaxPerCustomer, now) {
		if h.Status == booking.HoldActive {
			s.returnPlacesLocked(e, h)
			s.setStatusLocked(h, booking.HoldExpired)
		}
		o.Status = booking.OrderRefundPending
		return
	}
	for _, id := range h.Seats {
		st := e.seats[id]
		st.status, st.holdID, st.heldUntil, st.orderID = booking.SeatSold, "", time.Time{}, o.ID
	}
	if h.Zone != "" {
		z := e.zones[h.Zone]
		z.held -= h.Quantity
		z.sold += h.Quantity
	}
	s.setStatusLocked(h, booking.HoldOrdered)
	o.Status = booking.OrderPaid
	paidAt := now.UTC()
	o.PaidAt = &paidAt
	o.Tickets = booking.NewTickets(*o)
	var ids []string
	for _, t := range o.Tickets {
		s.tickets[t.ID] = true
		if t.Seat != "" {
			e.seatTicket[t.Seat] = t.ID
		} else {
			e.zones[t.Zone].tickets++
		}
		ids = append(ids, t.ID)
	}
	payload, _ := json.Marshal(booking.OrderPaidPayload{OrderID: o.ID, EventID: o.EventID, CustomerID: o.CustomerID, TicketIDs: ids})
	s.nextOutboxID++
	s.outbox = append(s.outbox, &outboxRow{msg: booking.OutboxMessage{ID: s.nextOutboxID, Topic: booking.TopicOrderPaid, Payload: payload, CreatedAt: now.UTC()}})
}

// secureLocked makes sure the hold's places are the order's: still held, or
// taken again if the hold lapsed and they are free. It changes nothing when it
// reports false.
func (s *Store) secureLocked(e *event, h *booking.Hold, maxPerCustomer int, now time.Time) bool {
	if h.Status == booking.HoldActive {
		mine := true
		for _, id := range h.Seats {
			if st := e.seats[id]; st.status != booking.SeatHeld || st.holdID != h.ID {
				mine = false
			}
		}
		if mine {
			return true // places are ours, even past expiry if nobody took them
		}
		// Some seats went to someone else after the hold lapsed: let go of the
		// rest and try again from scratch below.
		s.returnPlacesLocked(e, h)
		s.setStatusLocked(h, booking.HoldExpired)
	}
	if maxPerCustomer <= 0 {
		maxPerCustomer = booking.DefaultMaxPerCustomer
	}
	if e.quotas[h.CustomerID]+h.Quantity > maxPerCustomer {
		return false
	}
	for _, id := range h.Seats {
		if effectiveStatus(e.seats[id], now) != booking.SeatAvailable {
			return false
		}
	}
	if h.Zone != "" {
		z := e.zones[h.Zone]
		if z.capacity-z.held-z.sold < h.Quantity {
			s.reclaimZoneLocked(e, h.Zone, now)
		}
		if z.capacity-z.held-z.sold < h.Quantity {
			return false
		}
		z.held += h.Quantity
	}
	for _, id := range h.Seats {
		st := e.seats[id]
		st.status, st.holdID, st.heldUntil = booking.SeatHeld, h.ID, now
	}
	e.quotas[h.CustomerID] += h.Quantity
	s.setStatusLocked(h, booking.HoldActive)
	return true
}

// FailPayment releases a pending order's hold after a declined payment.
func (s *Store) FailPayment(_ context.Context, orderID, providerEventID string, _ time.Time) (booking.Order, error) {
	return s.changeOrder(orderID, func(o *booking.Order) {
		if s.providerEvents[providerEventID] || o.Status != booking.OrderPendingPayment {
			return
		}
		s.providerEvents[providerEventID] = true
		if h := s.holds[o.HoldID]; h.Status == booking.HoldActive {
			s.returnPlacesLocked(s.events[o.EventID], h)
			s.setStatusLocked(h, booking.HoldReleased)
		}
		o.Status = booking.OrderPaymentFailed
		o.Payment.Status = booking.PaymentFailed
	})
}

// RefundOrder records an order's refund: a paid order's tickets are
// cancelled and its places return to sale, with an order.refunded outbox
// message, under the store's lock.
func (s *Store) RefundOrder(_ context.Context, req booking.RefundRequest, now time.Time) (booking.RefundResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.orders[req.OrderID]
	if !ok {
		return booking.RefundResult{}, errOrderNotFound(req.OrderID)
	}
	already, err := booking.RefundAllowed(*o, req)
	if err != nil || already {
		return booking.RefundResult{Order: s.orderLocked(o), AlreadyRefunded: already}, err
	}
	paid := o.Status == booking.OrderPaid
	at := now.UTC()
	o.Status, o.RefundReason, o.RefundedAt = booking.OrderRefunded, req.Reason, &at
	o.Payment.Status = booking.PaymentRefunded
	if !paid {
		return booking.RefundResult{Order: s.orderLocked(o)}, nil
	}
	e := s.events[o.EventID]
	var ids []string
	for i, t := range o.Tickets {
		if !t.Live() {
			continue
		}
		o.Tickets[i].CancelledAt = &at
		ids = append(ids, t.ID)
		if t.Seat != "" {
			st := e.seats[t.Seat]
			st.status, st.orderID = booking.SeatAvailable, ""
			delete(e.seatTicket, t.Seat)
		} else {
			z := e.zones[t.Zone]
			z.sold--
			z.tickets--
		}
	}
	h := s.holds[o.HoldID]
	e.quotas[h.CustomerID] -= h.Quantity
	if e.quotas[h.CustomerID] == 0 {
		delete(e.quotas, h.CustomerID)
	}
	s.setStatusLocked(h, booking.HoldReleased)
	payload, _ := json.Marshal(booking.OrderRefundedPayload{
		OrderID: o.ID, EventID: o.EventID, CustomerID: o.CustomerID, Reason: req.Reason, TicketIDs: ids, Returned: len(ids),
	})
	s.nextOutboxID++
	s.outbox = append(s.outbox, &outboxRow{msg: booking.OutboxMessage{ID: s.nextOutboxID, Topic: booking.TopicOrderRefunded, Payload: payload, CreatedAt: at}})
	return booking.RefundResult{Order: s.orderLocked(o), Returned: len(ids)}, nil
}

// Order returns an order with its tickets and deliveries.
func (s *Store) Order(_ context.Context, id, customerID string) (booking.Order, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.orders[id]
	if !ok || (customerID != "" && o.CustomerID != customerID) {
		return booking.Order{}, errOrderNotFound(id)
	}
	return s.orderLocked(o), nil
}

// OrdersAwaitingRefund lists refund_pending orders.
func (s *Store) OrdersAwaitingRefund(_ context.Context, limit int) ([]booking.Order, error) {
	return s.listOrders(limit, func(o *booking.Order) bool { return o.Status == booking.OrderRefundPending },
		func(a, b booking.Order) int { return cmp.Compare(a.ID, b.ID) }), nil
}

// OrdersPendingPayment lists orders still awaiting their payment.
func (s *Store) OrdersPendingPayment(_ context.Context, createdBefore time.Time, limit int) ([]booking.Order, error) {
	return s.listOrders(limit, func(o *booking.Order) bool {
		return o.Status == booking.OrderPendingPayment && o.CreatedAt.Before(createdBefore)
	}, func(a, b booking.Order) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	}), nil
}

// listOrders returns the first limit orders that keep accepts, sorted by
// order, taken under the store's lock.
func (s *Store) listOrders(limit int, keep func(*booking.Order) bool, order func(a, b booking.Order) int) []booking.Order {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []booking.Order
	for _, o := range s.orders {
		if keep(o) {
			out = append(out, s.orderLocked(o))
		}
	}
	slices.SortFunc(out, order)
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}

// changeOrder runs change on the order under the store's lock and returns the
// order as change left it.
func (s *Store) changeOrder(id string, change func(*booking.Order)) (booking.Order, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.orders[id]
	if !ok {
		return booking.Order{}, errOrderNotFound(id)
	}
	change(o)
	return s.orderLocked(o), nil
}

func (s *Store) orderLocked(o *booking.Order) booking.Order {
	c := *o
	c.Seats = slices.Clone(o.Seats)
	c.Payment.CreateRequest = slices.Clone(s.paymentRequests[o.ID])
	c.Tickets = make([]booking.Ticket, len(o.Tickets))
	for i, t := range o.Tickets {
		if d, ok := s.deliveries[t.ID]; ok {
			t.Delivery = &d
		}
		c.Tickets[i] = t
	}
	return c
}

func errOrderNotFound(id string) error {
	return booking.Errorf(booking.KindNotFound, booking.CodeOrderNotFound, "no order %q", id)
}
