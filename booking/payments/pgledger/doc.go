// Package pgledger keeps the fake payment provider's state in PostgreSQL, in
// tables of its own (fakepay_*), so that payments, idempotency records and
// undelivered webhooks outlive the booking process that runs the fake, as a
// real provider's would. Several processes on one database share one
// provider: a pay page opened on one is served by another, and each webhook
// delivery is claimed by one sender at a time.
package pgledger
