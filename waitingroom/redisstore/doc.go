// Package redisstore keeps Foyer's waiting rooms in Redis, so that any number of
// gateway nodes can serve one room: a waitingroom.Store with exactly the
// semantics of the memory store (waitingroom/memstore), held to them by the same
// conformance suite (waitingroom/storetest) run against a real server and a real
// Cluster, and by a differential test that replays random histories on both.
//
// It takes a redis.UniversalClient, so one code path serves a single server,
// Sentinel and Cluster; NewClient builds one from a URL (redis://, rediss://,
// redis+cluster://, redis+sentinel://).
//
// # Data
//
// A room is a dozen keys, "<prefix>:{<room>}:<name>" (see keys.go), and its
// heartbeat windows. The braces are
// the Cluster hash tag: a room lives on one shard, rooms spread over shards.
// The meta hash holds the counters (seq, serving, admitted, claimed, abandoned),
// the rate credit, the last controller tick, the draw, the seed, the runtime
// overrides with their version, and what a re-created room keeps of the one
// it replaced (the forgotten places, a settling deadline, whether it was
// created blank); its presence is the room's existence. Sorted
// sets hold what is bounded by the cap or by time: live sessions by end,
// finished visitors by when to forget them, the admission batches of the grace
// window, the admissions that lapsed within the return window (one member per
// controller step that left places unclaimed: at most 120, about 4 KB, with
// the default two minutes; 3,600, about 450 KB, with the longest window of an
// hour), late returners, revoked passes (and sessions that idled out), and
// each live session's last use. A session's pass id is derived from its end
// (waitingroom.SessionPassID), so no key holds it. A list holds the public
// history, one entry per controller step. A fan who waits is the number in
// their ticket and, while liveness is on, one bit per heartbeat window:
// "hb:<window>:<block>" bitmaps of 31,744 places, each as long as its last
// place seen, written only from serving on and expiring once no controller
// step looks at them (lua/lib.lua, beat.go); joining
// bumps a counter and stores no entry. Each controller step leaves the live
// counts for the nodes in two small strings. What joins are weighed by is a
// small string each while it matters (joinchecks.go): "jl:<network>", a
// client network's join_limit allowance, and "seed:<id>", a seed that bought
// a place, each expiring once it no longer counts.
//
// # Costs
//
// Every operation is one Lua script, hence atomic and one round trip: Join,
// Claim, Release, Advance, Snapshot, DrawSeed and SaveOverrides. Beat (one a
// second per node, for every fan it saw) is one round trip too, but as many
// script calls as keep each one's work bounded (beat.go): Redis serves nobody
// else while a script runs. Overrides is a
// single HMGET. Scripts go by EVALSHA and fall back to EVAL; LoadScripts puts
// them on every shard ahead of time. Advance runs on every node every second;
// the tick it records makes all but the first call of a second a no-op, so no
// node is leader.
//
// # Time
//
// Every time comes from the caller, as the Store interface passes it; the store
// keeps it to the microsecond. Nothing here reads the Redis clock.
//
// # What it must never do
//
// It must never create a room outside Init: after Redis lost its data an
// operation answers waitingroom.ErrNoRoom, and the gateway re-seeds the room
// from what it last saw, so that no new ticket is placed ahead of an old one
// and serving does not jump. It must never keep an entry per waiting fan,
// never touch a key outside its prefix or two rooms in one command, never
// flush, and never close the client it was given.
//
// # Operating Redis
//
// Every key carries a TTL (DefaultTTL, refreshed by each controller step), so
// a room nobody serves any more vanishes on its own. Run Redis with
// maxmemory-policy noeviction: an eviction policy would drop the keys of live
// rooms. Persistence is optional; a restart without it is a data loss the
// gateways recover from as above.
//
// On a Cluster, a client from NewClient reloads its slot map every second
// (ClusterStateReload) and the store asks for a reload after every failed
// call, so that after a master dies the nodes reach the promoted replica
// within about a second of its promotion rather than go-redis's minute.
package redisstore
