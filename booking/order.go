package booking

import (
	"slices"
	"time"
)

// CheckoutAllowed reports whether a hold may start a checkout now: it must be
// active and not yet expired. Both stores call it so the rule is one rule.
func CheckoutAllowed(h Hold, now time.Time) error {
	switch {
	case h.Status == HoldActive && now.Before(h.ExpiresAt):
		return nil
	case h.Status == HoldActive, h.Status == HoldExpired:
		return Errorf(KindGone, CodeHoldExpired, "hold %s has expired", h.ID)
	default:
		return Errorf(KindConflict, CodeHoldNotActive, "hold %s is %s", h.ID, h.Status)
	}
}

// NewOrder makes the pending order (and its payment record) for a hold. The
// payment's idempotency keys are derived from the order id, so a retried
// checkout or refund can never charge or refund twice at the provider.
func NewOrder(h Hold, currency string, now time.Time) Order {
	id := NewID("ord")
	return Order{
		ID: id, HoldID: h.ID, EventID: h.EventID, CustomerID: h.CustomerID,
		Status: OrderPendingPayment, Amount: h.Amount, Currency: currency,
		Seats: slices.Clone(h.Seats), Zone: h.Zone, Quantity: h.Quantity,
		CreatedAt: now.UTC(),
		Payment: Payment{
			ID: NewID("pay"), Status: PaymentPending, Amount: h.Amount,
			IdempotencyKey: "checkout-" + id, RefundKey: "refund-" + id,
		},
		Tickets: []Ticket{},
	}
}

// NewTickets issues one ticket per place of a paid order.
func NewTickets(o Order) []Ticket {
	tickets := make([]Ticket, 0, o.Quantity)
	for _, seat := range o.Seats {
		tickets = append(tickets, Ticket{ID: NewID("tkt"), OrderID: o.ID, EventID: o.EventID, Seat: seat})
	}
	if o.Zone != "" {
		for range o.Quantity {
			tickets = append(tickets, Ticket{ID: NewID("tkt"), OrderID: o.ID, EventID: o.EventID, Zone: o.Zone})
		}
	}
	return tickets
}
