package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/foyer-dev/foyer/waitingroom"
)

// What fans were told, on Redis (waitingroom.Beats.Told, lua/told.lua): a
// bitmap per lane, "<prefix>:{<room>}:told:<lane>", four bits a place. Half a
// byte per place told anything, for the room's life: a sale of two million
// places keeps a megabyte, and the fairness report reads it whole, once per
// report a node builds. A hash of places would cost Redis some sixty bytes a
// place, and a set per outcome could not say which places were told two.

const (
	// toldKeyName names the bitmaps.
	toldKeyName = "told"
	// maxToldMarks bounds the places one call carries: four BITFIELD
	// operations of four arguments each at most per place, well inside
	// what Lua's unpack takes at once.
	maxToldMarks = 256
)

// toldKey is the bitmap of lane's places.
func (s *Store) toldKey(room string, lane int) string {
	return roomKey(s.prefix, room, toldKeyName, strconv.Itoa(lane))
}

// toldCall is one call of lua/told.lua: its keys beyond the room's, and its
// arguments.
type toldCall struct {
	keys []string
	args []any
}

// toldCalls splits marks into calls of at most maxToldMarks places.
func (s *Store) toldCalls(room string, marks []waitingroom.PlaceTold) []toldCall {
	var calls []toldCall
	var c *toldCall
	index := map[int]int{} // lane -> index of its key in the call, from 1
	for _, t := range marks {
		lane, n := waitingroom.LaneOfPlace(t.Place)
		if n >= waitingroom.MaxToldPlace || t.Marks == 0 {
			continue
		}
		if c == nil || len(c.args) == 1+3*maxToldMarks {
			calls = append(calls, toldCall{keys: roomKeys(s.prefix, room), args: []any{s.ttlMillis()}})
			c = &calls[len(calls)-1]
			clear(index)
		}
		k, ok := index[lane]
		if !ok {
			c.keys = append(c.keys, s.toldKey(room, lane))
			k = len(c.keys) - len(keyNames)
			index[lane] = k
		}
		c.args = append(c.args, k, n, int(t.Marks&0xF))
	}
	return calls
}

// ToldTally implements waitingroom.Store: one round trip reads every lane's
// bitmap, and the nibbles are counted here rather than in a script, which
// would hold Redis for the length of the bitmaps.
func (s *Store) ToldTally(ctx context.Context, room string) (waitingroom.ToldTally, error) {
	var t waitingroom.ToldTally
	keys := roomKeys(s.prefix, room)
	var exists *redis.IntCmd
	gets := make([]*redis.StringCmd, waitingroom.MaxLanes)
	_, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		exists = p.Exists(ctx, keys[0])
		for lane := range gets {
			gets[lane] = p.Get(ctx, s.toldKey(room, lane))
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		s.reloadTopology(err)
		return t, fmt.Errorf("redisstore: told %s: %w", room, err)
	}
	if exists.Val() == 0 {
		return t, waitingroom.ErrNoRoom
	}
	for _, g := range gets {
		t.AddBitmap([]byte(g.Val()))
	}
	return t, nil
}
