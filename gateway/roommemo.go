package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/foyer-dev/foyer/waitingroom"
)

// A node keeps, in Caddy's storage, a memo of each room it runs: the runtime
// overrides with their version, renewed while the room runs
// (waitingroom.Memo). It outlives the node's memory and the store's
// data: a node that starts with a recent memo applies its overrides at once,
// and if the store has no record of the room, knows the store lost it and
// re-creates the room settling, so that the line re-announces itself before
// anyone new is placed. A room never run before, or not for a ticket
// lifetime (no ticket of its old line is still valid), has no memo that
// counts and admits its first visitor at once.
//
// A room on the memory store loses its store with its node, and every restart
// finds no record of it: it settles only when its memo says people were in
// line, so that restarting an idle node costs nothing.

// roomMemoKey is where the memo of room on the store storeKey is kept.
func roomMemoKey(storeKey, room string) string {
	sum := sha256.Sum256([]byte(storeKey))
	return "waiting_room/rooms/" + hex.EncodeToString(sum[:8]) + "/" + room + ".json"
}

// loadRoomMemo reads the memo a previous run left, and whether it is recent
// enough for tickets of the room's line to be still out there.
func loadRoomMemo(ctx caddy.Context, storeKey, room string, lifetime time.Duration) (*waitingroom.Memo, bool) {
	if ctx.Storage() == nil {
		return nil, false
	}
	data, err := ctx.Storage().Load(ctx, roomMemoKey(storeKey, room))
	if err != nil {
		return nil, false
	}
	var m waitingroom.Memo
	if json.Unmarshal(data, &m) != nil {
		return nil, false
	}
	if now().Sub(m.At) > lifetime {
		return nil, false
	}
	return &m, storeKey != "memory" || m.Waiting
}

// roomMemoWriter returns the function a room calls with its memo: it writes
// in the background, the latest memo winning, so that the room's refresh never
// waits on storage. Writing is best effort: a node that cannot keep its memo
// only loses what it would restore after a loss of everything.
func roomMemoWriter(ctx caddy.Context, storeKey, room string) func(waitingroom.Memo) {
	if ctx.Storage() == nil {
		return nil
	}
	storage, key := ctx.Storage(), roomMemoKey(storeKey, room)
	var (
		mu      sync.Mutex
		next    *waitingroom.Memo
		writing bool
	)
	write := func() {
		for {
			mu.Lock()
			m := next
			next = nil
			if m == nil {
				writing = false
				mu.Unlock()
				return
			}
			mu.Unlock()
			data, err := json.Marshal(m)
			if err != nil {
				continue
			}
			c, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_ = storage.Store(c, key, data)
			cancel()
		}
	}
	return func(m waitingroom.Memo) {
		mu.Lock()
		defer mu.Unlock()
		next = &m
		if !writing {
			writing = true
			go write()
		}
	}
}
