// Package booking is the reference origin behind a Foyer waiting room: events
// built from a venue description, a live seat map, holds (by seat, best available
// or general admission), checkout through a payment provider, orders with
// tickets, an outbox relayed to Redis Streams, ticket delivery, a sweeper for
// expired holds and an invariant checker.
//
// The one rule it exists to keep is that a seat is never sold twice. Every path
// that changes inventory goes through a Store, whose backends (memstore and
// pgstore) pass the same conformance suite (booking/inventorytest). The HTTP
// layer only parses, authenticates and translates errors.
//
// The customer is always the subject of the admission pass the gateway forwards
// in X-Waiting-Room-Pass; this package must never take a customer id from the
// client, never decide expiry from a clock other than the injected one, and never
// write half of a change: bad input is refused before anything is written.
package booking
