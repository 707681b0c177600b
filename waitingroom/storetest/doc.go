// Package storetest is the conformance suite for waitingroom.Store. Every backend
// calls Run from a short test of its own; the suite drives the store with an
// injected clock and checks the semantics the gateway relies on: keys in join
// order, one controller step per second, the rate and the cap, abandonment and
// late returners, the fair draw, revocations, overrides and re-seeding after the
// store lost its data. It must never sleep to make time pass.
package storetest
