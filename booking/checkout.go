package booking

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/foyer-dev/foyer/booking/payments"
)

// Checkout extends the hold by HoldTTL, opens its order and creates the
// provider payment the customer completes on the pay page. It is safe to
// repeat: the order is one per hold and the provider call carries the order's
// idempotency key, so a retry after a timeout finds the same payment.
func (s *Service) Checkout(ctx context.Context, customerID, holdID string) (Order, error) {
	if !ValidID("hold", holdID) {
		return Order{}, Errorf(KindNotFound, CodeHoldNotFound, "no hold %s", quote(holdID))
	}
	now := s.cfg.Clock.Now()
	o, err := s.cfg.Store.BeginCheckout(ctx, holdID, customerID, now.Add(s.cfg.HoldTTL), now, s.marshalPaymentParams)
	if err != nil {
		return Order{}, err
	}
	if o.Payment.ProviderPaymentID != "" || o.Status != OrderPendingPayment {
		return o, nil
	}
	params, err := s.paymentRequest(ctx, o)
	if err != nil {
		return Order{}, err
	}
	p, err := s.cfg.Provider.CreatePayment(ctx, params, o.Payment.IdempotencyKey)
	if err != nil {
		s.cfg.Logger.Warn("creating payment failed", "order", o.ID, "error", err)
		if errors.Is(err, payments.ErrUnavailable) {
			return Order{}, &Error{Kind: KindUnavailable, Code: CodeUnavailable, Message: "the payment provider is unavailable, try again shortly", Err: err}
		}
		return Order{}, &Error{Kind: KindUnavailable, Code: CodePaymentFailed, Message: "the payment could not be started", Err: err}
	}
	// Two processes checking out one hold at once may each have created a
	// payment (with a provider that does not share idempotency keys across
	// them). The first attached is the order's payment; every caller answers
	// with it, so a customer is never shown a second payment to make.
	cur, err := s.cfg.Store.AttachPayment(ctx, o.ID, p.ID, p.PayURL)
	if err != nil {
		return Order{}, err
	}
	if cur.Payment.ProviderPaymentID != p.ID {
		s.cfg.Logger.Warn("another process attached its payment first; this one is never shown", "order", o.ID, "unused_payment", p.ID)
	}
	return cur, nil
}

// paymentRequest returns the provider parameters of an order's payment: the
// ones pinned with the order by its first attempt, whichever process made
// it. A provider refuses an idempotency key sent again with other parameters,
// and what this process would send is not always what the first attempt
// sent: processes behind one balancer may each know the storefront by their
// own address, and a new release may word the description differently.
//
// A checkout pins the request with the order it opens, so the order carries
// it; only an order opened before requests were pinned that way costs a
// round trip to pin one now.
func (s *Service) paymentRequest(ctx context.Context, o Order) (payments.CreateParams, error) {
	pinned := o.Payment.CreateRequest
	if pinned == nil {
		mine, err := s.marshalPaymentParams(o)
		if err != nil {
			return payments.CreateParams{}, err
		}
		if pinned, err = s.cfg.Store.PinPaymentRequest(ctx, o.ID, mine); err != nil {
			return payments.CreateParams{}, err
		}
	}
	var p payments.CreateParams
	if err := json.Unmarshal(pinned, &p); err != nil {
		return payments.CreateParams{}, fmt.Errorf("order %s: pinned payment request: %w", o.ID, err)
	}
	return p, nil
}

// marshalPaymentParams is the create request this process would pin for an
// order's payment.
func (s *Service) marshalPaymentParams(o Order) ([]byte, error) {
	return json.Marshal(s.paymentParams(o))
}

// paymentParams are the provider parameters this process would send for an
// order's payment.
func (s *Service) paymentParams(o Order) payments.CreateParams {
	return payments.CreateParams{
		Amount:      int64(o.Amount),
		Currency:    o.Currency,
		Description: fmt.Sprintf("Order %s", o.ID),
		Metadata:    map[string]string{"order_id": o.ID, "payment_id": o.Payment.ID},
		ReturnURL:   s.cfg.PublicURL + "/orders/" + o.ID,
	}
}
