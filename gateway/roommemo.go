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
// overrides with their version, and how far the line had gone (serving and
// the next order key), written whenever the line moved and renewed while the
// room runs (waitingroom.Memo). It outlives the node's memory and the store's
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

// memoWriter writes a room's memo to Caddy storage in the background, the
// latest memo winning, so that the room's refresh never waits on storage.
// Writing is best effort: a node that cannot keep its memo only loses what it
// would restore after a loss of everything.
type memoWriter struct {
	storage interface {
		Store(ctx context.Context, key string, value []byte) error
	}
	key     string
	mu      sync.Mutex
	next    *waitingroom.Memo
	writing bool
	wg      sync.WaitGroup
}

// newMemoWriter returns the writer of room's memo on the store storeKey, or
// nil without Caddy storage.
func newMemoWriter(ctx caddy.Context, storeKey, room string) *memoWriter {
	if ctx.Storage() == nil {
		return nil
	}
	return &memoWriter{storage: ctx.Storage(), key: roomMemoKey(storeKey, room)}
}

// remember is the room's Config.Remember: it never blocks.
func (w *memoWriter) remember(m waitingroom.Memo) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.next = &m
	if !w.writing {
		w.writing = true
		w.wg.Add(1)
		go w.write()
	}
}

func (w *memoWriter) write() {
	defer w.wg.Done()
	for {
		w.mu.Lock()
		m := w.next
		w.next = nil
		if m == nil {
			w.writing = false
			w.mu.Unlock()
			return
		}
		w.mu.Unlock()
		data, err := json.Marshal(m)
		if err != nil {
			continue
		}
		c, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = w.storage.Store(c, w.key, data)
		cancel()
	}
}

// wait returns once the memos handed over so far are written; the room must
// be stopped first.
func (w *memoWriter) wait() {
	if w != nil {
		w.wg.Wait()
	}
}

// rememberFunc is w.remember, or nil for a nil writer.
func (w *memoWriter) rememberFunc() func(waitingroom.Memo) {
	if w == nil {
		return nil
	}
	return w.remember
}
