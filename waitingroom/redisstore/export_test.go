package redisstore

import (
	"github.com/redis/go-redis/v9"

	"github.com/foyer-dev/foyer/waitingroom"
)

// RoomKeys lets the external tests check where a room's keys land.
var RoomKeys = roomKeys

// AccountBucket lets the external tests find an account's bucket.
var AccountBucket = accountBucket

// AccountKeys lists a room's account buckets.
var AccountKeys = accountKeys

// BeatSHA names the heartbeat script in SLOWLOG and MONITOR.
var BeatSHA = beatScript.Hash()

// MaxBeatSessions is how many sessions one heartbeat script call carries.
const MaxBeatSessions = maxBeatSessions

// SplitBeats splits b as Beat does, each part a Beats that Beat sends in one
// call.
func SplitBeats(b waitingroom.Beats, tracked bool) []waitingroom.Beats {
	var out []waitingroom.Beats
	for _, c := range splitBeats(b, tracked) {
		var part waitingroom.Beats
		for _, blk := range c.blocks {
			part.Places = append(part.Places, blk.places()...)
		}
		part.Sessions = c.sessions
		out = append(out, part)
	}
	return out
}

// BeatBytes is the bytes of places the one call that sends b carries.
func BeatBytes(b waitingroom.Beats) int64 {
	var n int64
	for _, c := range splitBeats(b, true) {
		for _, blk := range c.blocks {
			n += int64(len(blk.bits))
		}
	}
	return n
}

// places are the places b stands for.
func (b beatBits) places() []uint64 {
	base := b.block * beatBlock
	var out []uint64
	if b.offsets {
		for i := 0; i+1 < len(b.bits); i += 2 {
			out = append(out, base+uint64(b.bits[i])<<8|uint64(b.bits[i+1]))
		}
		return out
	}
	for i, c := range b.bits {
		for j := range 8 {
			if c&(0x80>>j) != 0 {
				out = append(out, base+uint64(8*(b.first+i)+j))
			}
		}
	}
	return out
}

// ScriptOf makes a script of body as the store's are made (lib.lua in front),
// for the benchmarks' baselines.
func ScriptOf(body string) *redis.Script { return newScript(body) }
