package gateway

import (
	"sync/atomic"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyevents"
	"go.uber.org/zap"

	"github.com/foyer-dev/foyer/waitingroom"
)

// The room's events on Caddy's event bus (the events app), so that an
// operator can hook any Caddy event handler (exec a script, call a webhook)
// to "the room paused" or "the store is back". They are the moments the log
// tells of (roomlog.go), found the same way: watchRoom compares the room's
// view before and after each refresh, on the room's own goroutine, never on a
// fan's request. Each node emits what it sees: with several nodes, a change
// made through one of them is emitted by every node once its view has it
// (within a second or so), and a store outage by each node that lost it.
// The origin module of every event is http.handlers.waiting_room, and every
// event's data holds "room".
const (
	EventPaused         = "waiting_room_paused"
	EventResumed        = "waiting_room_resumed"
	EventQueueAllOn     = "waiting_room_queue_all_on"
	EventQueueAllOff    = "waiting_room_queue_all_off"
	EventSoldOut        = "waiting_room_sold_out"
	EventReopened       = "waiting_room_reopened"
	EventPrequeueOpened = "waiting_room_prequeue_opened"
	EventStarted        = "waiting_room_started"
	EventClosed         = "waiting_room_closed"
	EventStoreLost      = "waiting_room_store_lost"
	EventStoreBack      = "waiting_room_store_back"
	EventReseeded       = "waiting_room_reseeded"
	// EventPhaseSwitched: a scheduled phase started or ended (docs/configuration.md,
	// "Phases"); its data names the phase now in force ("" for none), the
	// one before, and the new phase's start and end.
	EventPhaseSwitched = "waiting_room_phase_switched"
	// EventPhasePrequeueOpened and EventPhaseDrawn: a phase's own pre-queue
	// opened, and, for one that ends in a draw, its range of order keys was
	// closed and drawn at the phase's start (docs/fairness.md, "A phase's
	// draw").
	EventPhasePrequeueOpened = "waiting_room_phase_prequeue_opened"
	EventPhaseDrawn          = "waiting_room_phase_drawn"
)

// The events app's ID, and the keys of the events' data.
const (
	eventsAppID          = "events"
	eventDataRoom        = "room"
	eventDataWaiting     = "waiting"
	eventDataActive      = "active"
	eventDataDownSeconds = "down_seconds"
)

// EventNames are the events a room emits, in the order of docs/operations.md ("Events").
var EventNames = []string{
	EventPaused, EventResumed, EventQueueAllOn, EventQueueAllOff, EventSoldOut, EventReopened,
	EventPrequeueOpened, EventStarted, EventClosed, EventStoreLost, EventStoreBack, EventReseeded,
	EventPhaseSwitched, EventPhasePrequeueOpened, EventPhaseDrawn,
}

// eventSink is the events app of the latest configuration that uses a room,
// with that configuration's context (the handler's, so the events' origin
// is the waiting_room module). A room outlives reloads; its sink is replaced
// by each configuration that keeps it, as its logger is.
type eventSink struct {
	app *caddyevents.App
	ctx caddy.Context
}

// newEventSink finds the configuration's events app; nil if it has none.
func newEventSink(ctx caddy.Context, logger *zap.Logger) *eventSink {
	app, err := ctx.App(eventsAppID)
	if err != nil {
		logger.Warn("waiting room events disabled: no events app", zap.Error(err))
		return nil
	}
	ea, ok := app.(*caddyevents.App)
	if !ok {
		return nil
	}
	return &eventSink{app: ea, ctx: ctx}
}

// emit sends one event, unless nobody could hear it.
func (s *eventSink) emit(name string, data map[string]any) {
	if s == nil || s.ctx.Err() != nil || !s.app.ShouldEmit(name) {
		return
	}
	s.app.Emit(s.ctx, name, data)
}

// eventMoment is what the events follow of a room, beside roomMoment.
type eventMoment struct {
	roomMoment
	paused, queueAll, healthy bool
	reseeds                   uint64
	// phase is the scheduled phase in force ("" for none).
	scheduled *waitingroom.ScheduledPhase
	// lostAt is when this node last found the store unreachable.
	lostAt time.Time
	// openRange is the phase whose own pre-queue is open ("" for none).
	openRange string
}

func eventMomentOf(r *waitingroom.Room, prev eventMoment) eventMoment {
	in := r.Info()
	m := eventMoment{
		roomMoment: momentOf(r),
		paused:     in.Settings.Paused,
		queueAll:   in.Settings.QueueAll,
		healthy:    in.Healthy,
		reseeds:    r.Stats().Reseeds.Load(),
		lostAt:     prev.lostAt,
		scheduled:  in.CurrentPhase,
	}
	if prev.healthy && !m.healthy {
		m.lostAt = in.At
	}
	for _, pr := range in.Snapshot.PhaseRanges {
		if !pr.Closed {
			m.openRange = pr.Phase
		}
	}
	return m
}

// emitRoomEvents emits an event for each change between two moments.
func emitRoomEvents(sink *eventSink, r *waitingroom.Room, prev, cur eventMoment) {
	if sink == nil {
		return
	}
	in := r.Info()
	data := func(extra ...any) map[string]any {
		d := map[string]any{
			eventDataRoom:    r.ID(),
			eventDataWaiting: in.Waiting,
			eventDataActive:  in.Snapshot.Active,
		}
		for i := 0; i+1 < len(extra); i += 2 {
			d[extra[i].(string)] = extra[i+1]
		}
		return d
	}
	flip := func(was, is bool, on, off string) {
		switch {
		case is && !was:
			sink.emit(on, data())
		case was && !is:
			sink.emit(off, data())
		}
	}
	if cur.phase != prev.phase {
		switch cur.phase {
		case waitingroom.Prequeue:
			sink.emit(EventPrequeueOpened, data("event_start", in.Settings.EventStart))
		case waitingroom.Live:
			sink.emit(EventStarted, data())
		case waitingroom.Ended:
			sink.emit(EventClosed, data("places_issued", in.Snapshot.Seq, "admitted", in.Snapshot.Admitted))
		}
	}
	flip(prev.paused, cur.paused, EventPaused, EventResumed)
	flip(prev.queueAll, cur.queueAll, EventQueueAllOn, EventQueueAllOff)
	switch {
	case cur.soldOut && !prev.soldOut:
		sink.emit(EventSoldOut, data("places_issued", in.Snapshot.Seq, "admitted", in.Snapshot.Admitted))
	case prev.soldOut && !cur.soldOut:
		sink.emit(EventReopened, data())
	}
	switch {
	case prev.healthy && !cur.healthy:
		sink.emit(EventStoreLost, data("store_errors", r.Stats().StoreErrors.Load()))
	case !prev.healthy && cur.healthy:
		extra := []any{}
		if !cur.lostAt.IsZero() {
			extra = append(extra, eventDataDownSeconds, in.At.Sub(cur.lostAt).Seconds())
		}
		sink.emit(EventStoreBack, data(extra...))
	}
	if cur.reseeds > prev.reseeds {
		sink.emit(EventReseeded, data("reseeds", cur.reseeds))
	}
	if was, is := phaseName(prev.scheduled), phaseName(cur.scheduled); was != is {
		extra := []any{"phase", is, "previous_phase", was}
		if cur.scheduled != nil {
			extra = append(extra, "start", cur.scheduled.Start, "end", cur.scheduled.End)
		}
		sink.emit(EventPhaseSwitched, data(extra...))
	}
	if prev.openRange != cur.openRange {
		if prev.openRange != "" {
			emitPhaseDrawn(sink, in.Snapshot.PhaseRanges, prev.openRange, data)
		}
		if cur.openRange != "" {
			for _, pr := range in.Snapshot.PhaseRanges {
				if pr.Phase == cur.openRange && !pr.Closed {
					sink.emit(EventPhasePrequeueOpened, data("phase", pr.Phase, "start", pr.Starts, "first_key", pr.Start, "draw", pr.Draw))
				}
			}
		}
	}
}

// emitPhaseDrawn emits EventPhaseDrawn for phase's range, once it is closed
// and was to be drawn.
func emitPhaseDrawn(sink *eventSink, ranges []waitingroom.PhaseRange, phase string, data func(...any) map[string]any) {
	for _, pr := range ranges {
		if pr.Phase == phase && pr.Closed && pr.Draw {
			sink.emit(EventPhaseDrawn, data("phase", pr.Phase, "start", pr.Starts, "first_key", pr.Start, "draw_size", pr.Count))
		}
	}
}

// phaseName is a phase's name, "" for none.
func phaseName(p *waitingroom.ScheduledPhase) string {
	if p == nil {
		return ""
	}
	return p.Name
}

// sinkPointer holds a room's current sink.
type sinkPointer = atomic.Pointer[eventSink]
