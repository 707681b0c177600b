package booking

import "context"

// backgroundKey marks a context whose work no fan is waiting on.
type backgroundKey struct{}

// Background marks ctx as background work: the workers' loops, the
// idempotency pruner and the payment provider's webhooks. A store across the
// network may serve such work from connections of its own, so that however
// much of it piles up, the fans' requests never queue behind it for a
// connection (docs/booking.md, "The booking service").
func Background(ctx context.Context) context.Context {
	if IsBackground(ctx) {
		return ctx
	}
	return context.WithValue(ctx, backgroundKey{}, true)
}

// IsBackground reports whether ctx was marked by Background.
func IsBackground(ctx context.Context) bool {
	b, _ := ctx.Value(backgroundKey{}).(bool)
	return b
}
