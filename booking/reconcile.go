package booking

import (
	"context"
	"errors"

	"github.com/foyer-dev/foyer/booking/payments"
)

// Reconcile asks the provider about every order still pending_payment
// ReconcileAfter after its checkout, and settles it as the webhook would
// have: a webhook can be lost (the process died before the provider stored
// it, or the provider gave up), and a paid order must never stay pending. It
// reports how many orders it settled.
//
// Per order, by the provider's status:
//   - succeeded: confirmed, through the webhook's idempotent path;
//   - failed or canceled: failed, and the places given back;
//   - unpaid once the hold has lapsed: the payment is canceled at the
//     provider, and whichever won (the cancel or a last-second payment)
//     is applied;
//   - processing, or unpaid within the hold: left for the next round.
//
// An order whose checkout died before it recorded the provider's payment is
// given it again with the order's idempotency key, which finds the same
// payment rather than opening a second one.
func (s *Service) Reconcile(ctx context.Context) (int, error) {
	now := s.cfg.Clock.Now()
	orders, err := s.cfg.Store.OrdersPendingPayment(ctx, now.Add(-s.cfg.ReconcileAfter), 100)
	if err != nil {
		return 0, err
	}
	settled := 0
	var errs []error
	for _, o := range orders {
		done, err := s.reconcile(ctx, o)
		if err != nil {
			s.cfg.Logger.Warn("reconciling an order", "order", o.ID, "error", err)
			errs = append(errs, err)
		}
		if done {
			settled++
		}
	}
	return settled, errors.Join(errs...)
}

func (s *Service) reconcile(ctx context.Context, o Order) (bool, error) {
	p, err := s.providerPayment(ctx, o)
	if err != nil {
		return false, err
	}
	if p.Status == payments.StatusRequiresPayment && !s.cfg.Clock.Now().Before(o.CreatedAt.Add(s.cfg.HoldTTL)) {
		// The customer had the whole hold to pay and did not: close the
		// payment so that it cannot succeed after the places are gone.
		if p, err = s.cfg.Provider.CancelPayment(ctx, p.ID); err != nil {
			return false, err
		}
	}
	// The event id is fixed per payment and outcome, so rounds that see the
	// same outcome apply it once.
	eventID := "reconcile_" + p.ID + "_" + p.Status
	switch p.Status {
	case payments.StatusSucceeded, payments.StatusRefunded:
		s.cfg.Logger.Info("reconciler: payment succeeded without a webhook", "order", o.ID, "payment", p.ID)
		return true, s.applySucceeded(ctx, eventID, p)
	case payments.StatusFailed, payments.StatusCanceled:
		s.cfg.Logger.Info("reconciler: payment closed without a webhook", "order", o.ID, "payment", p.ID, "status", p.Status)
		return true, s.applyFailed(ctx, eventID, p)
	default:
		return false, nil
	}
}

// providerPayment returns the order's payment as the provider holds it.
func (s *Service) providerPayment(ctx context.Context, o Order) (payments.Payment, error) {
	if o.Payment.ProviderPaymentID != "" {
		return s.cfg.Provider.RetrievePayment(ctx, o.Payment.ProviderPaymentID)
	}
	params, err := s.paymentRequest(ctx, o)
	if err != nil {
		return payments.Payment{}, err
	}
	p, err := s.cfg.Provider.CreatePayment(ctx, params, o.Payment.IdempotencyKey)
	if err != nil {
		return payments.Payment{}, err
	}
	if _, err := s.cfg.Store.AttachPayment(ctx, o.ID, p.ID, p.PayURL); err != nil {
		return payments.Payment{}, err
	}
	return p, nil
}
