package memstore

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	"github.com/foyer-dev/foyer/booking"
)

// Store is an in-memory booking.Store. The zero value is not usable; call New.
type Store struct {
	mu             sync.Mutex
	nextEventID    int64
	events         map[int64]*event
	holds          map[string]*booking.Hold
	active         map[string]*booking.Hold // the holds whose status is active
	tickets        map[string]bool
	orders         map[string]*booking.Order
	orderByHold    map[string]string
	providerEvents map[string]bool
	// paymentRequests holds each order's pinned provider create request.
	paymentRequests map[string][]byte
	outbox          []*outboxRow
	nextOutboxID    int64
	deliveries      map[string]booking.Delivery
	idempotency     map[idempotencyScope]*idempotencyEntry
}

type event struct {
	booking.Event
	seats      map[string]*seat
	seatOrder  []string // ids by section, row, number: best-available order
	zones      map[string]*zone
	quotas     map[string]int    // customer -> seats held or bought
	seatTicket map[string]string // seat id -> ticket id
}

type seat struct {
	id        string
	section   string
	row, num  int
	status    booking.SeatStatus
	holdID    string
	heldUntil time.Time
	orderID   string
}

type zone struct {
	capacity   int
	held, sold int
	tickets    int
}

type outboxRow struct {
	msg         booking.OutboxMessage
	published   bool
	publishedAt time.Time
	delivered   bool
}

var _ booking.Store = (*Store)(nil)

// New returns an empty store.
func New() *Store {
	return &Store{
		events:          map[int64]*event{},
		holds:           map[string]*booking.Hold{},
		active:          map[string]*booking.Hold{},
		tickets:         map[string]bool{},
		orders:          map[string]*booking.Order{},
		orderByHold:     map[string]string{},
		providerEvents:  map[string]bool{},
		paymentRequests: map[string][]byte{},
		deliveries:      map[string]booking.Delivery{},
		idempotency:     map[idempotencyScope]*idempotencyEntry{},
	}
}

// Close does nothing; the state goes with the process.
func (s *Store) Close() {}

// CreateEvent stores the event and lays out its seats.
func (s *Store) CreateEvent(_ context.Context, spec booking.EventSpec, now time.Time) (booking.Event, error) {
	if err := spec.Validate(); err != nil {
		return booking.Event{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextEventID++
	e := &event{
		Event:      spec.Event(s.nextEventID, now),
		seats:      map[string]*seat{},
		zones:      map[string]*zone{},
		quotas:     map[string]int{},
		seatTicket: map[string]string{},
	}
	for _, sec := range e.Sections {
		for r := 1; r <= sec.Rows; r++ {
			for n := 1; n <= sec.SeatsPerRow; n++ {
				id := booking.SeatID(sec.ID, r, n)
				e.seats[id] = &seat{id: id, section: sec.ID, row: r, num: n, status: booking.SeatAvailable}
				e.seatOrder = append(e.seatOrder, id)
			}
		}
	}
	for _, z := range e.Zones {
		e.zones[z.ID] = &zone{capacity: z.Capacity}
	}
	s.events[e.ID] = e
	return cloneEvent(e.Event), nil
}

// Events lists events, soonest first.
func (s *Store) Events(context.Context) ([]booking.Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]booking.Event, 0, len(s.events))
	for _, e := range s.events {
		out = append(out, cloneEvent(e.Event))
	}
	slices.SortFunc(out, func(a, b booking.Event) int {
		return cmp.Or(a.StartsAt.Compare(b.StartsAt), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
}

// Event returns one event.
func (s *Store) Event(_ context.Context, id int64) (booking.Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.events[id]
	if !ok {
		return booking.Event{}, errEventNotFound(id)
	}
	return cloneEvent(e.Event), nil
}

// Inventory reports every seat that is not available and every zone.
func (s *Store) Inventory(_ context.Context, eventID int64, now time.Time) ([]booking.SeatState, []booking.ZoneState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.events[eventID]
	if !ok {
		return nil, nil, errEventNotFound(eventID)
	}
	var seats []booking.SeatState
	for _, id := range e.seatOrder {
		st := e.seats[id]
		status := effectiveStatus(st, now)
		if status != booking.SeatAvailable {
			seats = append(seats, booking.SeatState{Section: st.section, Row: st.row, Number: st.num, Status: status})
		}
	}
	var zones []booking.ZoneState
	for _, z := range e.Zones {
		zs := e.zones[z.ID]
		zones = append(zones, booking.ZoneState{ID: z.ID, Held: zs.held, Sold: zs.sold})
	}
	return seats, zones, nil
}

func effectiveStatus(st *seat, now time.Time) booking.SeatStatus {
	if st.status == booking.SeatHeld && !now.Before(st.heldUntil) {
		return booking.SeatAvailable
	}
	return st.status
}

func cloneEvent(e booking.Event) booking.Event {
	e.Sections = slices.Clone(e.Sections)
	e.Zones = slices.Clone(e.Zones)
	return e
}

func errEventNotFound(id int64) error {
	return booking.Errorf(booking.KindNotFound, booking.CodeEventNotFound, "event %d does not exist", id)
}

// sweep calls drop on up to limit entries of m that due selects, and says
// how many: the bounded clean-ups of lapsed holds and old idempotency records.
// drop may delete the entry from m.
func sweep[K comparable, V any](m map[K]V, limit int, due func(V) bool, drop func(K, V)) int {
	n := 0
	for k, v := range m {
		if n >= limit {
			break
		}
		if due(v) {
			drop(k, v)
			n++
		}
	}
	return n
}
