package pgstore_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/booking"
	"github.com/foyer-dev/foyer/booking/pgstore"
)

// The benchmarks report rates and ratios against a baseline measured in the
// same run on the same machine, never absolute targets:
//
//	go test -run '^$' -bench . -benchtime 3s ./booking/pgstore/
//
// BenchmarkBestAvailable: holds/s for 1, 16 and 64 concurrent shoppers on one
// section; "vs-1-shopper" must stay >= 1.0 (no collapse under contention).
// BenchmarkZoneSales: general-admission sales/s (hold, checkout, confirm) by
// 64 buyers of one zone, its counters split over 8 rows against one row;
// "vs-1-row" is the gain from splitting.

var epoch = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

// concurrently runs n operations over shoppers goroutines and returns the
// rate in operations per second.
func concurrently(b *testing.B, shoppers int, op func(i int) error) float64 {
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Value
	b.ResetTimer()
	start := time.Now()
	for range shoppers {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(b.N) {
					return
				}
				if err := op(int(i)); err != nil {
					failed.Store(err)
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	return float64(b.N) / elapsed.Seconds()
}

func benchStore(b *testing.B, opts pgstore.Options) *pgstore.Store {
	s, err := pgstore.Open(context.Background(), newDatabase(b), opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(s.Close)
	return s
}

func BenchmarkBestAvailable(b *testing.B) {
	var base float64
	for _, shoppers := range []int{1, 16, 64} {
		b.Run(fmt.Sprintf("shoppers=%d", shoppers), func(b *testing.B) {
			s := benchStore(b, pgstore.Options{})
			// One big section: every shopper competes for the same best seats.
			rows := max(10, (2*b.N)/200+10)
			e, err := s.CreateEvent(context.Background(), booking.EventSpec{
				Name: "bench", StartsAt: epoch, Sections: []booking.SectionSpec{{ID: "A", Rows: min(rows, 200), SeatsPerRow: 200, Price: 100}},
			}, epoch)
			if err != nil {
				b.Fatal(err)
			}
			if 2*b.N > min(rows, 200)*200 {
				b.Skipf("b.N=%d needs more seats than one section holds; lower -benchtime", b.N)
			}
			rate := concurrently(b, shoppers, func(i int) error {
				_, err := s.Hold(context.Background(), booking.HoldRequest{
					EventID: e.ID, CustomerID: fmt.Sprintf("c%d", i), Section: "A", Quantity: 2, TTL: time.Hour,
				}, epoch)
				return err
			})
			b.ReportMetric(rate, "holds/s")
			if shoppers == 1 {
				base = rate
			} else if base > 0 {
				b.ReportMetric(rate/base, "vs-1-shopper")
			}
		})
	}
}

func BenchmarkZoneSales(b *testing.B) {
	const buyers = 64
	var base float64
	for _, shards := range []int{1, 8} {
		b.Run(fmt.Sprintf("rows=%d", shards), func(b *testing.B) {
			s := benchStore(b, pgstore.Options{ZoneShards: shards})
			e, err := s.CreateEvent(context.Background(), booking.EventSpec{
				Name: "bench", StartsAt: epoch, Zones: []booking.ZoneSpec{{ID: "FLOOR", Capacity: booking.MaxZoneCapacity, Price: 100}},
			}, epoch)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			rate := concurrently(b, buyers, func(i int) error {
				h, err := s.Hold(ctx, booking.HoldRequest{
					EventID: e.ID, CustomerID: fmt.Sprintf("c%d", i), Zone: "FLOOR", Quantity: 2, TTL: time.Hour,
				}, epoch)
				if err != nil {
					return err
				}
				o, err := s.BeginCheckout(ctx, h.ID, h.CustomerID, epoch.Add(time.Hour), epoch)
				if err != nil {
					return err
				}
				_, err = s.ConfirmPayment(ctx, booking.PaymentConfirmation{
					ProviderEventID: "evt_" + o.ID, OrderID: o.ID, Amount: o.Amount,
				}, epoch)
				return err
			})
			b.ReportMetric(rate, "sales/s")
			if shards == 1 {
				base = rate
			} else if base > 0 {
				b.ReportMetric(rate/base, "vs-1-row")
			}
		})
	}
}
