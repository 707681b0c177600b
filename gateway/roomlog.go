package gateway

import (
	"context"

	"go.uber.org/zap"

	"github.com/foyer-dev/foyer/waitingroom"
)

// The room's events in the log. The room itself keeps no logger (the core
// imports nothing of Caddy's), so the gateway follows each room it runs
// through the room's own signal of a new view (Room.Changed, once a refresh)
// and writes one line when something an operator looks for in the log
// happens: the pre-queue opens, admission begins, the draw is made or its
// seed revealed, the room sells out or closes. Each is written once, when it
// happens on this node, never per request.

// roomMoment is what the log follows of a room.
type roomMoment struct {
	phase     waitingroom.Phase
	soldOut   bool
	drawMade  bool // the pre-queue's draw was made
	seedShown bool // the draw's seed is public
}

// momentOf reads a room's moment from its view, on the room's own clock.
// The draw is read before the phase: a draw is made at the start, so read
// in this order a moment with the draw made is never one before the start,
// and the log never tells of the draw before the start it belongs to.
func momentOf(r *waitingroom.Room) roomMoment {
	d := r.DrawInfo()
	in := r.Info()
	return roomMoment{phase: in.Phase, soldOut: in.Settings.SoldOut, drawMade: d.Closed, seedShown: d.Seed != ""}
}

// watchRoom writes the room's events until ctx ends or the room stops, and
// emits them on Caddy's event bus (events.go). It reads the logger and the
// events app at every change, so that after a config reload that kept the
// room its lines and events go where the new configuration sends them.
func watchRoom(ctx context.Context, r *waitingroom.Room, logger func() *zap.Logger, events func() *eventSink) {
	// The signal is taken before the view is read, so that a refresh
	// between the two wakes the loop rather than go unseen.
	changed := r.Changed()
	prevEv := eventMomentOf(r, eventMoment{healthy: true})
	prev := prevEv.roomMoment
	logger().Info("waiting room started", zap.String("room", r.ID()), zap.String("phase", prev.phase.String()),
		zap.Bool("sold_out", prev.soldOut), zap.Bool("draw_made", prev.drawMade))
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.Done():
			return
		case <-changed:
		}
		changed = r.Changed()
		curEv := eventMomentOf(r, prevEv)
		cur := curEv.roomMoment
		logRoomEvents(logger(), r, prev, cur)
		if was, is := phaseName(prevEv.scheduled), phaseName(curEv.scheduled); was != is {
			logger().Info("waiting room phase switched", zap.String("room", r.ID()), zap.String("phase", is), zap.String("previous_phase", was))
		}
		emitRoomEvents(events(), r, prevEv, curEv)
		prev, prevEv = cur, curEv
	}
}

// logRoomEvents writes a line for each event between two moments of a room.
func logRoomEvents(log *zap.Logger, r *waitingroom.Room, prev, cur roomMoment) {
	room := zap.String("room", r.ID())
	s := r.Settings()
	if cur.phase != prev.phase {
		switch cur.phase {
		case waitingroom.Prequeue:
			log.Info("waiting room pre-queue opened", room, zap.Time("event_start", s.EventStart))
		case waitingroom.Live:
			log.Info("waiting room event started: admission begins", room)
		case waitingroom.Ended:
			snap := r.Snapshot()
			log.Info("waiting room closed: the event ended; its fairness report is published", room,
				zap.Time("event_end", s.EventEnd), zap.Uint64("places_issued", snap.Seq), zap.Uint64("admitted", snap.Admitted))
		}
	}
	if cur.drawMade && !prev.drawMade {
		d := r.DrawInfo()
		size := uint64(0)
		if d.DrawSize != nil {
			size = *d.DrawSize
		}
		log.Info("waiting room draw made: the pre-queue's places are drawn and its seed revealed", room,
			zap.Uint64("registrations", size), zap.String("commitment", d.Commitment), zap.String("seed", d.Seed))
	} else if cur.seedShown && !prev.seedShown {
		d := r.DrawInfo()
		log.Info("waiting room draw seed revealed", room, zap.String("commitment", d.Commitment), zap.String("seed", d.Seed))
	}
	switch {
	case cur.soldOut && !prev.soldOut:
		snap := r.Snapshot()
		log.Info("waiting room sold out; its fairness report is published", room,
			zap.Uint64("places_issued", snap.Seq), zap.Uint64("admitted", snap.Admitted))
	case !cur.soldOut && prev.soldOut:
		log.Info("waiting room reopened after selling out", room)
	}
}
