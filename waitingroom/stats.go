package waitingroom

import "sync/atomic"

// Stats count what happened on this node, for metrics. They are plain atomics so
// the core needs no metrics library; the gateway exports them.
type Stats struct {
	Joins          atomic.Uint64 // visitors given a ticket
	JoinsLimited   atomic.Uint64 // newcomers refused by join_limit
	DirectAdmits   atomic.Uint64 // visitors let straight in on joining
	Polls          atomic.Uint64 // status answers
	Claims         atomic.Uint64 // sessions opened by a claim
	PassesRejected atomic.Uint64 // passes that failed verification or were revoked
	Revokes        atomic.Uint64 // sessions ended by the origin
	Requeues       atomic.Uint64 // sessions the origin failed, their fans put back at the front
	RequeuesSpent  atomic.Uint64 // failures of sessions whose tickets had spent their requeues
	StoreErrors    atomic.Uint64 // store calls that failed
	Reseeds        atomic.Uint64 // times the store was found to have lost the room
	Reclaims       atomic.Uint64 // sessions from before a loss the store took over, through this node
	Beats          atomic.Uint64 // heartbeat flushes sent to the store
	Challenges     atomic.Uint64 // proof-of-work seeds handed to newcomers
	AnswersRefused atomic.Uint64 // answers to seeds refused (wrong, stale, replayed, malformed)
}
