// Package memstore keeps Foyer's waiting rooms in the gateway's own memory: a
// waitingroom.Store for a single node, with nothing to run beside it. It is the
// default backend (`store memory`), the one the demo, the rehearsal and most
// tests use, and the reference the Redis store is compared with operation by
// operation (redisstore's differential test). Like every backend it passes the
// conformance suite in waitingroom/storetest, and it is written against the
// exported API of package waitingroom only, as a third party's backend would be.
//
// # Data
//
// Per room: the counters (seq, serving, admitted, claimed, abandoned), the rate
// credit and the last controller tick, the admission batches still within their
// grace window and those that lapsed within the return window, the live
// sessions in a heap ordered by end, the visitors who had a session until
// their tickets expire, the late returners holding a slot,
// the revoked passes until they would have expired, the draw and its rolling
// epochs, the draw seed, the runtime overrides with their version, and what a
// re-created room keeps of the one it replaced; for liveness, a bitmap per
// heartbeat window over the places from serving on, the counter at each
// window's first step, each live session's last use, and the sessions that
// idled out. A fan who waits is the number in their ticket and a bit per
// window: joining bumps a counter and stores no entry.
//
// # Costs
//
// Every operation takes the room's mutex once (and the store's, briefly, to
// find the room): no I/O, no allocation per waiting fan. Advance runs on the
// node every second; the tick it records makes a second call within the same
// second a no-op, as on a shared store.
//
// # What it must never do
//
// It must never read the clock: every time comes from the caller, so tests
// inject it and the Redis store can be held to the same answers. It must never
// create a room outside Init: after Drop (a restart, as the gateway sees it) an
// operation answers waitingroom.ErrNoRoom, and the node re-seeds the room from
// what it last saw. It must never keep an entry per waiting fan, never sleep
// or block beyond its own mutexes, and never answer differently from the Redis
// store for the same history: a change here is a change to the contract, made
// to both.
//
// Its state lives and dies with the process. One gateway node on it is the
// whole deployment; nodes that must share a room use the Redis store.
package memstore
