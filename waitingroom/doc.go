// Package waitingroom is the heart of Foyer: rooms, tickets, admission passes, the
// admission controller, the fair draw, positions and ETAs, and the Store interface.
// The backends live beside it, each in its own package written against this
// package's exported API alone: memstore (one node, in memory) and redisstore
// (many nodes, one Redis). Package storetest holds the conformance suite every
// Store must pass.
//
// A room keeps a handful of counters per room, not one entry per waiting fan. A
// fan's order key lives in their signed ticket, so answering "where am I?" needs no
// store round trip; joining costs one, claiming a session costs one.
//
// This package must never import Caddy or net/http server plumbing: it is the part
// that has to be right, and it is tested on its own with an injected clock.
package waitingroom
