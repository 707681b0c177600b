package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/caddyserver/caddy/v2"
)

// A node marks, in Caddy's storage, each room it ran on a shared store. The
// mark outlives the node's memory (and the store's data): a node that starts
// and finds its mark while the store has no record of the room knows the
// store lost it, and re-creates the room settling, so that the line can
// re-announce itself before anyone new is placed (see the waitingroom
// package's recovery.go). A room never run before has no mark and admits its
// first visitor at once.
//
// Only shared stores are marked: rooms on the memory store start afresh with
// their node, as the README says.

// roomMarkKey is where the mark of room on the store storeKey is kept.
func roomMarkKey(storeKey, room string) string {
	sum := sha256.Sum256([]byte(storeKey))
	return "waiting_room/rooms/" + hex.EncodeToString(sum[:8]) + "/" + room
}

// roomRanBefore reports whether this node (or one sharing its storage) ran
// room on the store storeKey before.
func roomRanBefore(ctx caddy.Context, storeKey, room string) bool {
	if storeKey == "memory" || ctx.Storage() == nil {
		return false
	}
	return ctx.Storage().Exists(ctx, roomMarkKey(storeKey, room))
}

// markRoomRan records that room runs on the store storeKey. Best effort: a
// node that cannot write its storage only loses the settling after a loss.
func markRoomRan(ctx caddy.Context, storeKey, room string) {
	if storeKey == "memory" || ctx.Storage() == nil {
		return
	}
	c, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = ctx.Storage().Store(c, roomMarkKey(storeKey, room), []byte(time.Now().UTC().Format(time.RFC3339)))
}
