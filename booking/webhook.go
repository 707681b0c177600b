package booking

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/foyer-dev/foyer/booking/payments"
)

// WebhookResult is what applying one provider event did, for its answer.
type WebhookResult struct {
	// Refund is set for a charge.refunded event: the order refunded and the
	// places it returned.
	Refund *RefundResult
}

// HandleWebhook verifies and applies one provider event. Its error decides
// the provider's next move: nil (2xx) ends delivery, KindInvalid (400) is a
// forged or stale request, anything retryable makes the provider deliver
// again later, which is how a payment that landed during a database outage is
// not lost. A refund that cannot apply (404, 409) is delivered again too:
// one that overtook its order's payment applies once the payment has.
func (s *Service) HandleWebhook(ctx context.Context, signature string, body []byte) (WebhookResult, error) {
	now := s.cfg.Clock.Now()
	if err := payments.Verify(s.cfg.WebhookSecret, signature, body, now, s.cfg.WebhookTolerance); err != nil {
		return WebhookResult{}, &Error{Kind: KindInvalid, Code: CodeInvalidSignature, Message: "the webhook signature is missing, wrong or stale", Err: err}
	}
	var ev payments.Event
	if err := json.Unmarshal(body, &ev); err != nil || ev.ID == "" || ev.Type == "" {
		return WebhookResult{}, Errorf(KindInvalid, CodeInvalidJSON, "the webhook body is not an event")
	}
	p, err := ev.Payment()
	if err != nil {
		return WebhookResult{}, Errorf(KindInvalid, CodeInvalidJSON, "the webhook event has no payment object")
	}
	log := s.cfg.Logger.With("event", ev.ID, "type", ev.Type, "order", p.Metadata["order_id"])
	switch ev.Type {
	case payments.EventPaymentSucceeded:
		return WebhookResult{}, s.applySucceeded(ctx, ev.ID, p)
	case payments.EventChargeRefunded:
		r, err := s.applyRefunded(ctx, p)
		if err != nil {
			return WebhookResult{}, err
		}
		return WebhookResult{Refund: &r}, nil
	case payments.EventPaymentFailed, payments.EventPaymentCanceled:
		return WebhookResult{}, s.applyFailed(ctx, ev.ID, p)
	default:
		// processing and anything new: nothing to do.
		log.Debug("webhook event ignored")
		return WebhookResult{}, nil
	}
}

// applySucceeded confirms the order of a succeeded payment. eventID makes it
// idempotent: the webhook passes the provider's event id, the reconciler one
// of its own, and an order that is no longer pending is left as it is.
func (s *Service) applySucceeded(ctx context.Context, eventID string, p payments.Payment) error {
	orderID := p.Metadata["order_id"]
	log := s.cfg.Logger.With("event", eventID, "order", orderID)
	o, err := s.cfg.Store.ConfirmPayment(ctx, PaymentConfirmation{
		ProviderEventID: eventID, ProviderPaymentID: p.ID, OrderID: orderID,
		Amount: Money(p.Amount), MaxPerCustomer: s.cfg.MaxPerCustomer,
	}, s.cfg.Clock.Now())
	if KindOf(err) == KindNotFound {
		log.Warn("payment for an unknown order ignored")
		return nil // not ours: retrying will not make it ours
	}
	if err != nil {
		return err
	}
	log.Info("payment confirmed", "status", o.Status)
	if o.Status == OrderRefundPending {
		return s.refund(ctx, o)
	}
	return nil
}

// applyFailed gives the places of a declined or canceled payment back now,
// rather than when the hold lapses. Like applySucceeded it is idempotent.
func (s *Service) applyFailed(ctx context.Context, eventID string, p payments.Payment) error {
	_, err := s.cfg.Store.FailPayment(ctx, p.Metadata["order_id"], eventID, s.cfg.Clock.Now())
	if KindOf(err) == KindNotFound {
		return nil
	}
	return err
}

// refund gives back the money of an order whose places are gone. The refund's
// idempotency key is fixed per order, so retries never refund twice.
func (s *Service) refund(ctx context.Context, o Order) error {
	_, err := s.cfg.Provider.Refund(ctx, payments.RefundParams{PaymentID: o.Payment.ProviderPaymentID}, o.Payment.RefundKey)
	if err != nil {
		s.cfg.Logger.Warn("refund failed; will retry", "order", o.ID, "error", err)
		if errors.Is(err, payments.ErrUnavailable) {
			return Unavailable(err)
		}
		return &Error{Kind: KindUnavailable, Code: CodePaymentFailed, Message: "the refund did not go through", Err: err}
	}
	_, err = s.cfg.Store.RefundOrder(ctx, RefundRequest{OrderID: o.ID, Reason: RefundPlacesLost}, s.cfg.Clock.Now())
	return err
}

// RetryRefunds issues refunds still owed, for example after the provider was
// down when the late payment arrived. It reports how many went through.
func (s *Service) RetryRefunds(ctx context.Context) (int, error) {
	orders, err := s.cfg.Store.OrdersAwaitingRefund(ctx, 100)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, o := range orders {
		if err := s.refund(ctx, o); err == nil {
			n++
		}
	}
	return n, nil
}
