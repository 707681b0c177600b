package inventorytest

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/booking"
)

// NewStore returns an empty store for one test.
type NewStore func(t *testing.T) booking.Store

// Epoch is the suite's fixed starting time.
var Epoch = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

// HoldTTL is the hold time the suite uses.
const HoldTTL = 5 * time.Minute

// Run runs the whole suite against stores from newStore.
func Run(t *testing.T, newStore NewStore) {
	tests := []struct {
		name string
		fn   func(t *testing.T, f *fixture)
	}{
		{"Events", testEvents},
		{"InvalidVenue", testInvalidVenue},
		{"HoldSeatList", testHoldSeatList},
		{"HoldIsAllOrNothing", testHoldAllOrNothing},
		{"UnknownSeatSectionZone", testUnknownPlaces},
		{"BestAvailableAdjacent", testBestAvailableAdjacent},
		{"BestAvailableSoldOut", testBestAvailableSoldOut},
		{"GeneralAdmission", testGeneralAdmission},
		{"GeneralAdmissionReclaimsLapsedHolds", testGeneralAdmissionReclaim},
		{"CapPerCustomer", testCapPerCustomer},
		{"CapCountsOrders", testCapCountsOrders},
		{"ExpiryByClock", testExpiryByClock},
		{"LapsedHoldsEndedByTheirCustomer", testLapsedHoldsEndedByTheirCustomer},
		{"Sweeper", testSweeper},
		{"Release", testRelease},
		{"Checkout", testCheckout},
		{"CheckoutExpiredHold", testCheckoutExpired},
		{"PinPaymentRequest", testPinPaymentRequest},
		{"ConfirmPayment", testConfirmPayment},
		{"ConfirmIsIdempotent", testConfirmIdempotent},
		{"LatePaymentRetakes", testLatePaymentRetakes},
		{"LatePaymentRefundsWhenTaken", testLatePaymentRefund},
		{"LateGeneralAdmissionPayment", testLateZonePayment},
		{"AmountMismatchRefunds", testAmountMismatch},
		{"PaymentFailed", testPaymentFailed},
		{"OutboxAndDelivery", testOutboxAndDelivery},
		{"OutboxKnowsWhatWasDelivered", testOutboxDelivered},
		{"OrdersPendingPayment", testOrdersPendingPayment},
		{"Idempotency", testIdempotency},
		{"IdempotencyReplaysHeaders", testIdempotencyHeaders},
		{"IdempotencyPrune", testIdempotencyPrune},
		{"Stats", testStats},
		{"RaceForOneSeat", testRaceOneSeat},
		{"RaceForBestAvailable", testRaceBestAvailable},
		{"RaceForLastSeats", testRaceLastSeats},
		{"OverlappingHoldsDoNotDeadlock", testOverlappingHolds},
		{"RaceForZone", testRaceZone},
		{"ConcurrentDuplicateConfirmations", testConcurrentConfirm},
		{"RaceForOneCheckout", testRaceCheckout},
		{"RefundPaidSeats", testRefundPaidSeats},
		{"RefundPaidZone", testRefundPaidZone},
		{"RefundRefused", testRefundRefused},
		{"ConcurrentRefunds", testConcurrentRefunds},
		{"RefundedSeatResoldOnce", testRefundResaleRace},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newStore(t)
			f := &fixture{t: t, s: s, ctx: context.Background()}
			tc.fn(t, f)
			f.checkInvariants()
		})
	}
}

// fixture is a store plus helpers that fail the test on unexpected errors.
type fixture struct {
	t   *testing.T
	s   booking.Store
	ctx context.Context
}

// SmallVenue is two small sections and a zone.
func SmallVenue() booking.EventSpec {
	return booking.EventSpec{
		Name: "Conformance night", StartsAt: Epoch.Add(48 * time.Hour), Currency: "EUR",
		Sections: []booking.SectionSpec{
			{ID: "A", Rows: 3, SeatsPerRow: 6, Price: 10000},
			{ID: "B", Rows: 2, SeatsPerRow: 4, Price: 5000},
		},
		Zones: []booking.ZoneSpec{{ID: "FLOOR", Capacity: 10, Price: 4000}},
	}
}

func (f *fixture) event(spec booking.EventSpec) booking.Event {
	f.t.Helper()
	e, err := f.s.CreateEvent(f.ctx, spec, Epoch)
	if err != nil {
		f.t.Fatalf("CreateEvent: %v", err)
	}
	return e
}

func (f *fixture) hold(req booking.HoldRequest, now time.Time) booking.Hold {
	f.t.Helper()
	if req.TTL == 0 {
		req.TTL = HoldTTL
	}
	h, err := f.s.Hold(f.ctx, req, now)
	if err != nil {
		f.t.Fatalf("Hold(%+v): %v", req, err)
	}
	return h
}

func (f *fixture) holdErr(req booking.HoldRequest, now time.Time) error {
	f.t.Helper()
	if req.TTL == 0 {
		req.TTL = HoldTTL
	}
	h, err := f.s.Hold(f.ctx, req, now)
	if err == nil {
		f.t.Fatalf("Hold(%+v) = %+v, want an error", req, h)
	}
	return err
}

// checkout opens the hold's order at now, the hold extended by HoldTTL.
func (f *fixture) checkout(h booking.Hold, now time.Time) booking.Order {
	f.t.Helper()
	o, err := f.s.BeginCheckout(f.ctx, h.ID, h.CustomerID, now.Add(HoldTTL), now, requestOf)
	if err != nil {
		f.t.Fatalf("BeginCheckout: %v", err)
	}
	return o
}

// requestOf is the create request the suite pins with an order: its ids,
// so that a test can tell whose request was pinned.
func requestOf(o booking.Order) ([]byte, error) {
	return json.Marshal(map[string]string{"order_id": o.ID, "payment_id": o.Payment.ID})
}

// confirm applies a payment of the order's amount under a provider event id.
func (f *fixture) confirm(o booking.Order, eventID string, now time.Time) (booking.Order, error) {
	return f.s.ConfirmPayment(f.ctx, booking.PaymentConfirmation{ProviderEventID: eventID, OrderID: o.ID, Amount: o.Amount}, now)
}

// pay runs checkout and a successful confirmation.
func (f *fixture) pay(h booking.Hold, now time.Time) booking.Order {
	f.t.Helper()
	o, err := f.s.BeginCheckout(f.ctx, h.ID, h.CustomerID, now.Add(HoldTTL), now, requestOf)
	if err != nil {
		f.t.Fatalf("BeginCheckout: %v", err)
	}
	o, err = f.s.ConfirmPayment(f.ctx, booking.PaymentConfirmation{
		ProviderEventID: "evt_" + o.ID, ProviderPaymentID: "pi_" + o.ID, OrderID: o.ID, Amount: o.Amount,
	}, now)
	if err != nil {
		f.t.Fatalf("ConfirmPayment: %v", err)
	}
	return o
}

func (f *fixture) seatMap(eventID int64, now time.Time) booking.SeatMap {
	f.t.Helper()
	e, err := f.s.Event(f.ctx, eventID)
	if err != nil {
		f.t.Fatalf("Event: %v", err)
	}
	seats, zones, err := f.s.Inventory(f.ctx, eventID, now)
	if err != nil {
		f.t.Fatalf("Inventory: %v", err)
	}
	return booking.BuildSeatMap(e, seats, zones, now)
}

func (f *fixture) checkInvariants() {
	f.t.Helper()
	r, err := f.s.CheckInvariants(f.ctx)
	if err != nil {
		f.t.Fatalf("CheckInvariants: %v", err)
	}
	if !r.OK() {
		f.t.Fatalf("invariants violated:\n%v", r.Violations)
	}
}

// wantErr checks an error's kind and code.
func wantErr(t *testing.T, err error, kind booking.Kind, code string) *booking.Error {
	t.Helper()
	var be *booking.Error
	if !errors.As(err, &be) {
		t.Fatalf("error %v is not a *booking.Error", err)
	}
	if be.Kind != kind || be.Code != code {
		t.Fatalf("error = %v (kind %d, code %s), want kind %d, code %s", err, be.Kind, be.Code, kind, code)
	}
	return be
}
