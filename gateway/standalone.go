package gateway

import (
	"context"
	"errors"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/foyer-dev/foyer/waitingroom"
)

// StandaloneOptions give a Handler what Caddy's provisioning otherwise finds
// for it: the store, the signing key and the clock. Everything else comes
// from the Handler's own configuration, as in the Caddyfile.
type StandaloneOptions struct {
	// Store holds the room's line. Nodes of one deployment share it (Redis),
	// each through a client of its own.
	Store waitingroom.Store
	// Key signs tickets and passes. Nodes sharing a room share their key, so
	// that any node honours what another signed.
	Key *waitingroom.SigningKey
	// Now is the room's and the handler's clock; nil is the wall clock. A
	// clock of one's own lets a program (or a test) run the room through
	// time without waiting, without changing the clock of other rooms of
	// the process.
	Now func() time.Time
	// Logger takes the handler's log lines; nil discards them.
	Logger *zap.Logger
	// Room, if set, adjusts the room's configuration before the room starts:
	// a memo to resume from (README, "Recovery"), where to keep the next one.
	Room func(*waitingroom.Config)
}

// ErrStartedDown wraps the error of a standalone room's first contact with
// its store: the room serves in its failure mode (on_store_failure) and
// recovers on the first tick after the store answers, as under Caddy.
var ErrStartedDown = errors.New("waiting room: store unreachable at start")

// NewStandalone provisions cfg without Caddy, for a program that serves the
// waiting room from its own HTTP server with ServeHTTP (the many-node tests of
// gateway/integration run several such nodes on one store). The room is
// started but its controller loop is not: the caller runs
// LiveRoom().Run, or ticks the room itself on its own clock. When the store
// does not answer, the handler is returned with an error wrapping
// ErrStartedDown.
//
// A standalone handler is not part of Caddy's pool of rooms: the admin API,
// the dashboard, the metrics of live rooms and the fairness report of this
// process do not see it.
func NewStandalone(ctx context.Context, cfg Handler, opts StandaloneOptions) (*Handler, error) {
	h := &cfg
	if err := h.setup(); err != nil {
		return nil, err
	}
	h.key, h.clock, h.logger = opts.Key, opts.Now, opts.Logger
	if h.logger == nil {
		h.logger = zap.NewNop()
	}
	rc := waitingroom.Config{
		ID: h.Room, Settings: h.settings, Store: opts.Store, Key: opts.Key, Issuer: h.Issuer, Now: h.clockNow,
		OpenOnStoreFailure: h.OnStoreFailure == storeFailureOpen,
	}
	if opts.Room != nil {
		opts.Room(&rc)
	}
	var err error
	if h.room, err = waitingroom.NewRoom(rc); err != nil {
		return nil, err
	}
	if err := h.room.Start(ctx); err != nil {
		return h, errors.Join(ErrStartedDown, err)
	}
	return h, nil
}

// LiveRoom is the room h serves: for a standalone handler, the one its
// controller loop (or its caller) ticks.
func (h *Handler) LiveRoom() *waitingroom.Room { return h.room }

// StandaloneAdmin is the admin API (README, "Admin API") over the rooms of
// standalone handlers, as Caddy's admin endpoint serves it under
// /waiting-room/ for the rooms of its own process. A change made through it is
// kept in the room's store, so every node sharing the store follows it.
func StandaloneAdmin(rooms ...*waitingroom.Room) http.Handler {
	a := &AdminAPI{rooms: func() []liveRoom { return groupRooms(rooms) }, logger: zap.NewNop()}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := a.serve(w, r); err != nil {
			_ = writeError(w, http.StatusInternalServerError, "internal", err.Error())
		}
	})
}

// StandalonePreviews serves the dashboard's previews of the fan's pages
// (docs/operations.md, "Previews") for the rooms of standalone handlers, as
// waiting_room_dashboard serves them for the rooms of its process:
// ?format=preview&room=<id> lists every state, with a link for each language
// the room offers, and &state=<s>&lang=<l> renders one page with the room's
// own template, catalogs and settings. A program serving rooms without Caddy
// shows them to whoever writes its pages and catalogs; nothing a preview
// renders reaches the room. It answers nothing but previews (no live
// figures: those come from the sampler of a Caddy process).
func StandalonePreviews(hs ...*Handler) http.Handler {
	rooms := make([]*waitingroom.Room, len(hs))
	for i, h := range hs {
		rooms[i] = h.room
	}
	d := &Dashboard{
		rooms: func() []liveRoom { return groupRooms(rooms) },
		handlerOf: func(r *waitingroom.Room) *Handler {
			for _, h := range hs {
				if h.room == r {
					return h
				}
			}
			return nil
		},
		logger: zap.NewNop(),
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !allowMethod(w, r, http.MethodGet) {
			return
		}
		if err := d.previews(w, r); err != nil {
			_ = writeError(w, http.StatusInternalServerError, "internal", err.Error())
		}
	})
}

// clockNow is the handler's clock: its own when NewStandalone was given one,
// else the process's.
func (h *Handler) clockNow() time.Time {
	if h.clock != nil {
		return h.clock()
	}
	return now()
}
