// Command booking runs the reference booking service behind a Foyer waiting
// room: the storefront, the JSON API, the fake payment provider and the
// background workers (sweeper, outbox relay and republisher, ticket
// delivery, payment reconciler, refund retrier). Run "booking -h" for its flags; each has an environment twin.
//
// It must never be reachable by fans except through the gateway in
// production: the admission pass in X-Waiting-Room-Pass is its only proof of
// who a customer is. -dev-passes (it signs its own passes) is for a demo
// without a gateway only.
package main
