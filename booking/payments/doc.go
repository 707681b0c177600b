// Package payments is the booking service's view of a payment provider, and a
// fake provider that behaves like Stripe where it matters to a booking system:
// idempotency keys (at most 255 characters; a replay returns the first
// response; a key reused with other parameters is an error), webhooks signed
// "t=<unix>,v1=<hex HMAC-SHA256 of t.body>" and checked with a 300 s
// tolerance, and, on request, deliveries that are late, duplicated or out of
// order. The fake also serves the pay page a fan's browser is sent to.
//
// This package knows nothing of seats or orders: it moves amounts and
// metadata. It must never treat a webhook as authentic without its signature.
package payments
