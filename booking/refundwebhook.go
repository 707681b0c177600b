package booking

import (
	"context"

	"github.com/foyer-dev/foyer/booking/payments"
)

// applyRefunded records the provider's refund of a payment. Which refund it
// is follows from the order: a refund_pending order (or one already
// refunded for that) lost its places, and this is the refund the service
// asked for; any other order is refunded as returned, which only a paid
// order may be, for its whole amount. An order's path to one or the other
// is fixed once its payment applied (a paid order never becomes
// refund_pending), so reading it before the store's own check, under the
// order's lock, cannot choose wrong.
//
// Bad input is refused: no order named or no amount refunded (400), an
// unknown order (404), an order that is not paid or a refund of part of it
// (409).
func (s *Service) applyRefunded(ctx context.Context, p payments.Payment) (RefundResult, error) {
	orderID := p.Metadata["order_id"]
	if orderID == "" {
		return RefundResult{}, Errorf(KindInvalid, CodeInvalidRequest, "the refunded payment names no order (metadata.order_id)")
	}
	if p.AmountRefunded <= 0 {
		return RefundResult{}, Errorf(KindInvalid, CodeInvalidRequest, "the refunded payment has no refunded amount (amount_refunded)")
	}
	o, err := s.cfg.Store.Order(ctx, orderID, "")
	if err != nil {
		return RefundResult{}, err
	}
	reason := RefundReturned
	if o.Status == OrderRefundPending || o.RefundReason == RefundPlacesLost {
		reason = RefundPlacesLost
	}
	r, err := s.cfg.Store.RefundOrder(ctx, RefundRequest{OrderID: orderID, Reason: reason, Amount: Money(p.AmountRefunded)}, s.cfg.Clock.Now())
	if err != nil {
		return RefundResult{}, err
	}
	s.cfg.Logger.Info("refund recorded", "order", orderID, "reason", reason, "returned", r.Returned, "repeat", r.AlreadyRefunded)
	return r, nil
}
