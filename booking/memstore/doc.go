// Package memstore is the embedded inventory store: the whole booking state in
// one process's memory behind one mutex. It is the default when no database is
// configured, so the demo runs with no server, and it passes the same
// conformance suite (booking/inventorytest) as the PostgreSQL store.
//
// It must never be used where more than one booking process serves the same
// event, and it keeps nothing across restarts.
package memstore
