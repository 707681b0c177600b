package redisstore

// The keys of one room, in the order every script expects them (lua/lib.lua
// names them). Each is "<prefix>:{<room>}:<name>": the braces are Redis
// Cluster's hash tag, so all of a room's keys live on one shard and a script
// may touch them together, while different rooms spread over the shards.
var keyNames = [...]string{
	"meta",       // hash: counters, credit, tick, draw, seed, overrides, loss watermarks; its presence is the room's
	"live",       // sorted set: live sessions by end (never more than the cap)
	"finished",   // sorted set: visitors who had a session, by when to forget them
	"batches",    // sorted set: admission batches of the grace window, by first place
	"returners",  // sorted set: late returners by when they last asked
	"revoked",    // sorted set: revoked passes by cursor
	"revokedexp", // sorted set: the same revocations by expiry, to trim them
	"history",    // list: the public history, admissions and draws, oldest first
	"lapsed",     // sorted set: admissions whose grace ended within the return window, by first place
	"seen",       // sorted set: live sessions by their last use
	"idled",      // sorted set: visitors whose sessions idled out, by when
	"hb",         // not a key: heartbeat windows are "hb:<window>:<block>" bitmaps
	"hbtmp",      // scratch bitmap of one step: the union of the windows over a block
	"livecounts", // string: live places per block from serving on, 16 bits each
	"livehead",   // string: live places bit by bit from serving on, near the front
	"idledends",  // sorted set: the same visitors by when their sessions would have ended
	"left",       // sorted set: places from serving on whose holders left the line, by place
	"requeued",   // sorted set: visitors waiting at the front after a requeue, by the order it was made in
	"requeues",   // sorted set: "<n>:<visitor>", a visitor's n-th requeue, by when to forget it
	"audit",      // list: the audit trail, "<seq> <json>" entries, oldest first
	"readmits",   // sorted set: requeued visitors the controller let in again, by when (a pending slot each)
}

// hbKey is the index of "hb" among the keys.
const hbKey = 11

// roomKeys returns the keys of room under prefix.
func roomKeys(prefix, room string) []string {
	keys := make([]string, len(keyNames))
	base := prefix + ":{" + room + "}:"
	for i, name := range keyNames {
		keys[i] = base + name
	}
	return keys
}
