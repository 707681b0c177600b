// Package pgstore is the PostgreSQL inventory store, the booking service's
// source of truth. Its schema is embedded and migrated at Open.
//
// How it keeps a seat from being sold twice:
//   - a hold by seat list is one conditional UPDATE over rows locked in seat-id
//     order, so overlapping holds cannot deadlock on each other and a hold that
//     gets fewer rows than it asked for rolls back whole;
//   - best available locks candidate rows with FOR UPDATE SKIP LOCKED, so
//     concurrent shoppers take different seats instead of queueing;
//   - general admission counts places on several rows per zone (shards);
//   - the per-customer cap is an upsert with a condition, in the same
//     transaction as the hold;
//   - a seat has at most one live ticket: a unique index on (event_id,
//     seat_id) of the tickets no refund cancelled.
//
// Time is always a parameter ($now); the store never asks the database for
// now() where expiry is decided, so tests drive expiry with a clock.
//
// Errors are classified by behaviour: a lost connection or a server shutting
// down is booking.KindUnavailable (retry later, nothing changed); a deadlock or
// serialization failure is retried once inside the store.
package pgstore
