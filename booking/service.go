package booking

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/foyer-dev/foyer/booking/payments"
)

// Config assembles a Service.
type Config struct {
	Store    Store
	Provider payments.Provider
	// Clock decides expiry everywhere. Default: the wall clock.
	Clock Clock
	// HoldTTL is how long a hold lasts, and how far checkout extends it.
	// Default 5 minutes.
	HoldTTL time.Duration
	// MaxPerCustomer caps a customer's seats per event. Default 4.
	MaxPerCustomer int
	// WebhookSecret verifies the provider's webhook signatures.
	WebhookSecret []byte
	// WebhookTolerance is the accepted age of a webhook signature.
	// Default 300 s.
	WebhookTolerance time.Duration
	// PublicURL is the storefront's base URL, where the pay page sends the
	// customer back.
	PublicURL string
	// TicketSecret signs ticket codes, and (through a key derived from it)
	// order links.
	TicketSecret []byte
	// ReconcileAfter is how long an order may wait for its payment's webhook
	// before the reconciler asks the provider. Default 1 minute.
	ReconcileAfter time.Duration
	// SeatMapMaxAge is how stale a served seat map may be. Default 1 s.
	SeatMapMaxAge time.Duration
	Logger        *slog.Logger
}

// Service is the booking application: the rules that sit between the HTTP
// API and the Store.
type Service struct {
	cfg Config
	// linkKey signs order links.
	linkKey []byte

	mu       sync.Mutex
	seatMaps map[int64]SeatMap
	// soldOut are the events this service saw with no place left: from
	// then on, every free place came back (docs/waitlist.md).
	soldOut  map[int64]bool
	events   map[int64]Event // venues, which never change once created
	rebuilds singleflight.Group
}

// NewService checks cfg and fills its defaults.
func NewService(cfg Config) *Service {
	if cfg.Clock == nil {
		cfg.Clock = SystemClock{}
	}
	if cfg.HoldTTL <= 0 {
		cfg.HoldTTL = 5 * time.Minute
	}
	if cfg.MaxPerCustomer <= 0 {
		cfg.MaxPerCustomer = DefaultMaxPerCustomer
	}
	if cfg.WebhookTolerance <= 0 {
		cfg.WebhookTolerance = payments.DefaultTolerance
	}
	if cfg.ReconcileAfter <= 0 {
		cfg.ReconcileAfter = time.Minute
	}
	if cfg.SeatMapMaxAge <= 0 {
		cfg.SeatMapMaxAge = time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Service{cfg: cfg, linkKey: orderLinkKey(cfg.TicketSecret), seatMaps: map[int64]SeatMap{}, events: map[int64]Event{}}
}

// Store returns the service's inventory store.
func (s *Service) Store() Store { return s.cfg.Store }

// Clock returns the service's clock.
func (s *Service) Clock() Clock { return s.cfg.Clock }

// CreateEvent validates a venue description and stores the event.
func (s *Service) CreateEvent(ctx context.Context, spec EventSpec) (Event, error) {
	return s.cfg.Store.CreateEvent(ctx, spec, s.cfg.Clock.Now())
}

// SeatMap returns the event's seat map, at most SeatMapMaxAge old. Under a
// rush every shopper polls the map; they share one read per event per second:
// when the map expires, the requests that find it stale wait for one rebuild
// (single flight) rather than each reading the whole inventory.
func (s *Service) SeatMap(ctx context.Context, eventID int64) (SeatMap, error) {
	if m, ok := s.freshSeatMap(eventID, s.cfg.Clock.Now()); ok {
		return m, nil
	}
	v, err, _ := s.rebuilds.Do(strconv.FormatInt(eventID, 10), func() (any, error) {
		now := s.cfg.Clock.Now()
		if m, ok := s.freshSeatMap(eventID, now); ok {
			return m, nil // rebuilt by the flight that just ended
		}
		// The flight serves every waiting request: one caller giving up
		// must not fail the others.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		e, err := s.event(ctx, eventID)
		if err != nil {
			return SeatMap{}, err
		}
		seats, zones, err := s.cfg.Store.Inventory(ctx, eventID, now)
		if err != nil {
			return SeatMap{}, err
		}
		m := BuildSeatMap(e, seats, zones, now)
		s.mu.Lock()
		s.seatMaps[eventID] = m
		s.mu.Unlock()
		return m, nil
	})
	if err != nil {
		return SeatMap{}, err
	}
	return v.(SeatMap), nil
}

// freshSeatMap is the cached map of the event if it is young enough.
func (s *Service) freshSeatMap(eventID int64, now time.Time) (SeatMap, bool) {
	s.mu.Lock()
	m, ok := s.seatMaps[eventID]
	s.mu.Unlock()
	return m, ok && now.Sub(m.GeneratedAt) < s.cfg.SeatMapMaxAge && !now.Before(m.GeneratedAt)
}

// event reads an event's venue once: an event's sections and zones never
// change after it is created, so a rebuild of its map reads only the
// inventory.
func (s *Service) event(ctx context.Context, id int64) (Event, error) {
	s.mu.Lock()
	e, ok := s.events[id]
	s.mu.Unlock()
	if ok {
		return e, nil
	}
	e, err := s.cfg.Store.Event(ctx, id)
	if err != nil {
		return Event{}, err
	}
	s.mu.Lock()
	s.events[id] = e
	s.mu.Unlock()
	return e, nil
}

// SoldOut reports whether every place of the event is sold, from the cached
// seat map. Errors count as "not known to be sold out".
func (s *Service) SoldOut(ctx context.Context, eventID int64) bool {
	m, err := s.SeatMap(ctx, eventID)
	return err == nil && m.SoldOut()
}

// HoldInput is a customer's hold request as the API receives it.
type HoldInput struct {
	Seats    []string
	Section  string
	Zone     string
	Quantity int
}

// Hold reserves places for the customer for HoldTTL.
func (s *Service) Hold(ctx context.Context, customerID string, eventID int64, in HoldInput) (Hold, error) {
	return s.cfg.Store.Hold(ctx, HoldRequest{
		EventID: eventID, CustomerID: customerID,
		Seats: in.Seats, Section: in.Section, Zone: in.Zone, Quantity: in.Quantity,
		TTL: s.cfg.HoldTTL, MaxPerCustomer: s.cfg.MaxPerCustomer,
	}, s.cfg.Clock.Now())
}

// GetHold returns one of the customer's holds.
func (s *Service) GetHold(ctx context.Context, customerID, holdID string) (Hold, error) {
	if !ValidID("hold", holdID) {
		return Hold{}, Errorf(KindNotFound, CodeHoldNotFound, "no hold %s", quote(holdID))
	}
	return s.cfg.Store.GetHold(ctx, holdID, customerID)
}

// Release gives a hold's places back.
func (s *Service) Release(ctx context.Context, customerID, holdID string) (Hold, error) {
	if !ValidID("hold", holdID) {
		return Hold{}, Errorf(KindNotFound, CodeHoldNotFound, "no hold %s", quote(holdID))
	}
	return s.cfg.Store.ReleaseHold(ctx, holdID, customerID, s.cfg.Clock.Now())
}

// Order returns one of the customer's orders.
func (s *Service) Order(ctx context.Context, customerID, orderID string) (Order, error) {
	if !ValidID("ord", orderID) {
		return Order{}, Errorf(KindNotFound, CodeOrderNotFound, "no order %s", quote(orderID))
	}
	return s.cfg.Store.Order(ctx, orderID, customerID)
}

// CheckInvariants runs the store's invariant checker.
func (s *Service) CheckInvariants(ctx context.Context) (InvariantReport, error) {
	return s.cfg.Store.CheckInvariants(ctx)
}
