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
//	go test -run '^$' -bench . -benchtime 20x ./booking/pgstore/
//
// Each iteration is one round that runs every configuration once, in turn,
// so that whatever else the machine is doing weighs on all of them alike.
//
// BenchmarkBestAvailable: holds/s for 1, 16 and 64 concurrent shoppers on one
// section; "64-vs-1" must stay >= 1.0 (no collapse under contention).
// BenchmarkZoneSales: general-admission sales/s (hold, checkout, confirm) by
// 64 buyers of one zone whose counters are split over 8 rows, against the
// same zone on one row; "8-rows-vs-1" is the gain from splitting.

var epoch = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

// batch is how many operations one configuration runs per round.
const batch = 256

// concurrently runs n operations over workers goroutines and returns the
// time they took.
func concurrently(b *testing.B, n, workers int, op func(i int) error) time.Duration {
	var next atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	start := time.Now()
	for range workers {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(n) {
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
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	return time.Since(start)
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
	shoppers := []int{1, 16, 64}
	ctx := context.Background()
	s := benchStore(b, pgstore.Options{})
	spent := make([]time.Duration, len(shoppers))
	customer := 0
	b.ResetTimer()
	for range b.N {
		for k, n := range shoppers {
			// A fresh section per round and configuration: every shopper of
			// the round competes for the same best seats.
			b.StopTimer()
			e, err := s.CreateEvent(ctx, booking.EventSpec{
				Name: "bench", StartsAt: epoch, Sections: []booking.SectionSpec{{ID: "A", Rows: 30, SeatsPerRow: 20, Price: 100}},
			}, epoch)
			if err != nil {
				b.Fatal(err)
			}
			first := customer
			customer += batch
			b.StartTimer()
			spent[k] += concurrently(b, batch, n, func(i int) error {
				_, err := s.Hold(ctx, booking.HoldRequest{
					EventID: e.ID, CustomerID: fmt.Sprintf("c%d", first+i), Section: "A", Quantity: 2, TTL: time.Hour,
				}, epoch)
				return err
			})
		}
	}
	rate := func(k int) float64 { return float64(b.N*batch) / spent[k].Seconds() }
	for k, n := range shoppers {
		b.ReportMetric(rate(k), fmt.Sprintf("holds/s@%d", n))
	}
	b.ReportMetric(rate(1)/rate(0), "16-vs-1")
	b.ReportMetric(rate(2)/rate(0), "64-vs-1")
}

func BenchmarkZoneSales(b *testing.B) {
	const buyers = 64
	ctx := context.Background()
	rows := []int{1, 8}
	stores := make([]*pgstore.Store, len(rows))
	events := make([]int64, len(rows))
	for k, n := range rows {
		stores[k] = benchStore(b, pgstore.Options{ZoneShards: n})
		e, err := stores[k].CreateEvent(ctx, booking.EventSpec{
			Name: "bench", StartsAt: epoch, Zones: []booking.ZoneSpec{{ID: "FLOOR", Capacity: booking.MaxZoneCapacity, Price: 100}},
		}, epoch)
		if err != nil {
			b.Fatal(err)
		}
		events[k] = e.ID
	}
	spent := make([]time.Duration, len(rows))
	customer := 0
	b.ResetTimer()
	for range b.N {
		for k := range rows {
			s, first := stores[k], customer
			customer += batch
			spent[k] += concurrently(b, batch, buyers, func(i int) error {
				h, err := s.Hold(ctx, booking.HoldRequest{
					EventID: events[k], CustomerID: fmt.Sprintf("c%d", first+i), Zone: "FLOOR", Quantity: 2, TTL: time.Hour,
				}, epoch)
				if err != nil {
					return err
				}
				o, err := s.BeginCheckout(ctx, h.ID, h.CustomerID, epoch.Add(time.Hour), epoch, nil)
				if err != nil {
					return err
				}
				_, err = s.ConfirmPayment(ctx, booking.PaymentConfirmation{ProviderEventID: "evt_" + o.ID, OrderID: o.ID, Amount: o.Amount}, epoch)
				return err
			})
		}
	}
	rate := func(k int) float64 { return float64(b.N*batch) / spent[k].Seconds() }
	b.ReportMetric(rate(0), "sales/s@1row")
	b.ReportMetric(rate(1), "sales/s@8rows")
	b.ReportMetric(rate(1)/rate(0), "8-rows-vs-1")
}
