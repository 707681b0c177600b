package redisstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/foyer-dev/foyer/waitingroom"
)

// Heartbeats on Redis (see waitingroom/liveness.go and lua/beat.lua).
//
// Redis runs one script at a time and nothing else meanwhile, so a script's
// time is every other client's wait. A node's beats of a second may be tens of
// thousands of places (and more after an outage: it keeps what it could not
// send), so a Beat is split here into calls whose work is bounded whatever the
// node sends, and the calls go in one round trip (a pipeline).
//
// What a call costs is its commands inside Redis and the bytes of its
// arguments (Redis makes each a Lua string, at a nanosecond or two a byte).
// A command there costs a microsecond or so, and more for a write (Redis 7
// records each for replication, and a script of thousands of writes slows
// down more than in proportion), so the places are never written one by one:
// this side groups them by heartbeat block and sends each block's bits
// ready-made, from its first place seen to its last, and the script ORs them
// into the window with BITOP, four commands a block however many of its
// places were seen. A block of a few places far apart goes as their offsets
// instead (two bytes each, set with one BITFIELD), when that is cheaper for
// the script: an offset costs it about what offsetWeight bytes of bits do.
// A call carries at most maxBeatBlocks blocks, maxBeatWeight of bits (or
// their offsets' weight) and maxBeatSessions sessions (two commands for all
// of them), hence at most 4*maxBeatBlocks+6 commands and about 20 KB of
// arguments. Each such call takes Redis about 50-150 µs on a loaded 2-core
// machine (BenchmarkBeatScript); TestBeatCallsAreBounded checks the bound.
//
// Alternatives: calls of a bounded number of places each, SETBIT per place,
// would bound a call too, but cost Redis 7 to 1,000 times more time per fan
// (the same benchmark's baseline, one SETBIT per place); smaller heartbeat blocks would cut what a lone fan far back
// costs in memory, but every controller step would then union and count
// more keys (lua/advance.lua).
const (
	// beatBlock is how many places one heartbeat bitmap holds: BEAT_BLOCK in
	// lua/lib.lua.
	beatBlock = 31 * waitingroom.LiveBlock
	// offsetWeight is what an offset costs the script, in bytes of bits: its
	// share of building and running the BITFIELD command.
	offsetWeight = 512
	// maxBeatBlocks, maxBeatWeight and maxBeatSessions bound what one call
	// carries.
	maxBeatBlocks   = 16
	maxBeatWeight   = 16 << 10
	maxBeatSessions = 32
)

// beatBits are the places of one heartbeat block a node saw: bits from byte
// first of the block on, bit 7 of a byte first; or, when offsets is set,
// their offsets in the block, two bytes each.
type beatBits struct {
	block   uint64
	first   int
	bits    []byte
	offsets bool
}

// weight is what sending b costs a call, in bytes of bits.
func (b beatBits) weight() int {
	if b.offsets {
		return len(b.bits) / 2 * offsetWeight
	}
	return len(b.bits)
}

// beatCall is one script call's share of a Beat.
type beatCall struct {
	blocks   []beatBits
	sessions []string
}

// blocksOf groups sorted places by heartbeat block, each as bits or offsets,
// whichever costs less.
func blocksOf(ps []uint64) []beatBits {
	var blocks []beatBits
	for i := 0; i < len(ps); {
		blk := ps[i] / beatBlock
		j := i
		for j < len(ps) && ps[j]/beatBlock == blk {
			j++
		}
		first, last := int(ps[i]%beatBlock/8), int(ps[j-1]%beatBlock/8)
		b := beatBits{block: blk, first: first}
		if (j-i)*offsetWeight < last-first+1 {
			b.first, b.offsets = -1, true
			for _, p := range ps[i:j] {
				b.bits = binary.BigEndian.AppendUint16(b.bits, uint16(p%beatBlock))
			}
		} else {
			b.bits = make([]byte, last-first+1)
			for _, p := range ps[i:j] {
				off := int(p%beatBlock) - 8*first
				b.bits[off/8] |= 0x80 >> (off % 8)
			}
		}
		blocks = append(blocks, b)
		i = j
	}
	return blocks
}

// splitBeats makes the calls that send b: the places grouped by block (none
// when places are not tracked), within the bounds of a call. There is always
// at least one call, so that a Beat on an unknown room is answered
// ErrNoRoom.
func splitBeats(b waitingroom.Beats, tracked bool) []beatCall {
	calls := []beatCall{{}}
	if tracked && len(b.Places) > 0 {
		ps := slices.Clone(b.Places)
		slices.Sort(ps)
		weight := 0
		for _, blk := range blocksOf(slices.Compact(ps)) {
			c := &calls[len(calls)-1]
			if len(c.blocks) == maxBeatBlocks || (len(c.blocks) > 0 && weight+blk.weight() > maxBeatWeight) {
				calls = append(calls, beatCall{})
				c, weight = &calls[len(calls)-1], 0
			}
			c.blocks = append(c.blocks, blk)
			weight += blk.weight()
		}
	}
	for i := 0; i < len(b.Sessions); i += maxBeatSessions {
		n := i / maxBeatSessions
		if n == len(calls) {
			calls = append(calls, beatCall{})
		}
		calls[n].sessions = b.Sessions[i:min(i+maxBeatSessions, len(b.Sessions))]
	}
	return calls
}

// args are the call's arguments as lua/beat.lua reads them.
func (c beatCall) args(now time.Time, window time.Duration) []any {
	args := make([]any, 0, 3+3*len(c.blocks)+len(c.sessions))
	args = append(args, now.UnixMicro(), window.Microseconds(), len(c.blocks))
	for _, b := range c.blocks {
		args = append(args, strconv.FormatUint(b.block, 10), b.first, b.bits)
	}
	for _, v := range c.sessions {
		args = append(args, v)
	}
	return args
}

// Beat implements waitingroom.Store: one round trip for everything a node saw
// since its last, in as many script calls as keep each one's work bounded.
// Each call is atomic and a mark only ever adds to what the store knows, so a
// step that runs between two of them sees some marks a step later, which the
// windows' slack (a place is judged over five of them) absorbs.
func (s *Store) Beat(ctx context.Context, room string, b waitingroom.Beats, now time.Time, lim waitingroom.Limits) error {
	if len(b.Places) == 0 && len(b.Sessions) == 0 && len(b.Told) == 0 {
		return nil
	}
	win := beatWindow(lim)
	calls := splitBeats(b, win > 0)
	told := s.toldCalls(room, b.Told)
	if len(calls) == 1 && len(told) == 0 {
		_, err := s.run(ctx, "beat", beatScript, room, calls[0].args(now, win)...)
		return err
	}
	// Every call, the beats' and the marks', in one pipeline: each is
	// (script, keys, args), sent again on its own if the server lost its
	// scripts.
	type call struct {
		script *redis.Script
		keys   []string
		args   []any
	}
	all := make([]call, 0, len(calls)+len(told))
	keys := roomKeys(s.prefix, room)
	for _, c := range calls {
		all = append(all, call{beatScript, keys, c.args(now, win)})
	}
	for _, c := range told {
		all = append(all, call{toldScript, c.keys, c.args})
	}
	cmds, _ := s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, c := range all {
			c.script.EvalSha(ctx, p, c.keys, c.args...)
		}
		return nil
	})
	var first error // the same failure, most likely, for every call
	for i, cmd := range cmds {
		err := cmd.Err()
		if redis.HasErrorPrefix(err, "NOSCRIPT") {
			// The server lost its script cache (a restart, a failover):
			// runOn sends the script itself.
			_, err = s.runOn(ctx, "beat", all[i].script, room, all[i].keys, all[i].args...)
		} else if errors.Is(err, redis.Nil) {
			err = waitingroom.ErrNoRoom
		} else if err != nil {
			s.reloadTopology(err)
			err = fmt.Errorf("redisstore: beat %s: %w", room, err)
		}
		if first == nil {
			first = err
		}
	}
	return first
}
