// Package clientlimit limits how often each client address may do one
// thing, in memory that stays bounded however many addresses call: a waiting
// room uses it to cap the new places one address takes (join_limit, see the
// docs/bots.md, "Bots and abuse").
//
// Each address (an IPv6 address by its /64, the block one subscriber is
// usually given) has a token bucket from golang.org/x/time/rate. The table
// holds at most a fixed number of them, spread over shards that each keep
// their own least-recently-used order: when a shard is full, the address
// seen longest ago in it is forgotten, and comes back with a full bucket. An
// address that keeps calling stays, unless a shard's worth of others land in
// its shard between two of its calls.
//
// It must stay free of HTTP and of any notion of rooms: the caller says
// which address asked and when, and what the limit is.
package clientlimit
