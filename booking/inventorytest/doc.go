// Package inventorytest is the conformance suite every booking.Store must
// pass: the memory store and the PostgreSQL store run the very same tests,
// with time injected through the now parameter, never slept.
//
// A backend's test is three lines:
//
//	func TestConformance(t *testing.T) {
//		inventorytest.Run(t, func(t *testing.T) booking.Store { return newStore(t) })
//	}
//
// newStore must return an empty store that no other test uses. This package
// must never be imported by non-test code.
package inventorytest
