package booking

// RefundReason says why an order was refunded, and so what its refund did.
type RefundReason string

// Refund reasons.
const (
	// RefundReturned: a paid order whose money the provider gave back (the
	// buyer returned the tickets, or the organiser refunded them). Its
	// tickets are cancelled and its places go back on sale.
	RefundReturned RefundReason = "returned"
	// RefundPlacesLost: a payment that landed when the order's places were
	// gone (refund_pending); there is nothing to give back but the money.
	RefundPlacesLost RefundReason = "places_lost"
)

// RefundRequest asks a store to record the refund of an order.
type RefundRequest struct {
	OrderID string
	Reason  RefundReason
	// Amount is what the provider gave back. A returned order is refunded
	// whole: its amount must be the order's, as its places come back whole.
	// A places_lost refund gives back whatever was paid, which may differ
	// (the payment that made the order refund_pending may have been of
	// another amount), so its amount is not checked.
	Amount Money
}

// RefundResult is what a refund did.
type RefundResult struct {
	// Order is the order afterwards, its tickets cancelled.
	Order Order
	// Returned is the number of places this call put back on sale: the
	// order's quantity for a returned order, 0 otherwise and on a repeat.
	Returned int
	// AlreadyRefunded: the order had been refunded for the same reason
	// before; this call changed nothing.
	AlreadyRefunded bool
}

// RefundAllowed decides whether an order may be refunded for req, under the
// caller's lock of the order. It reports already when the order was
// refunded for the same reason before (a repeat, which changes nothing).
// Both stores call it, so the rule is one rule:
//
//   - returned: only a paid order, for its whole amount;
//   - places_lost: only a refund_pending order;
//   - an order refunded for the other reason, or in any other state
//     (pending_payment, payment_failed), is refused with 409
//     order_not_refundable.
func RefundAllowed(o Order, req RefundRequest) (already bool, err error) {
	if req.Reason != RefundReturned && req.Reason != RefundPlacesLost {
		return false, Errorf(KindInvalid, CodeInvalidRequest, "refund reason %s is neither %q nor %q", quote(string(req.Reason)), RefundReturned, RefundPlacesLost)
	}
	if req.Reason == RefundReturned && req.Amount != o.Amount {
		return false, Errorf(KindConflict, CodeRefundAmountMismatch, "order %s is of %s; a refund of %s would return part of it", o.ID, o.Amount, req.Amount)
	}
	switch {
	case o.Status == OrderRefunded && o.RefundReason == req.Reason:
		return true, nil
	case o.Status == OrderRefunded:
		return false, Errorf(KindConflict, CodeOrderNotRefundable, "order %s was already refunded (%s), not %s", o.ID, o.RefundReason, req.Reason)
	case o.Status == OrderPaid && req.Reason == RefundReturned,
		o.Status == OrderRefundPending && req.Reason == RefundPlacesLost:
		return false, nil
	}
	return false, Errorf(KindConflict, CodeOrderNotRefundable, "order %s is %s; a %s refund needs a %s order", o.ID, o.Status, req.Reason, refundableStatus[req.Reason])
}

var refundableStatus = map[RefundReason]OrderStatus{RefundReturned: OrderPaid, RefundPlacesLost: OrderRefundPending}
