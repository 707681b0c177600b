package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/foyer-dev/foyer/booking"
	"github.com/foyer-dev/foyer/booking/pgstore/pgtest"
	"github.com/foyer-dev/foyer/internal/redistest"
)

// shopper walks hold, checkout and the pay page, resuming where a crash of
// the service left them, as a fan retrying in the browser would.
type shopper struct {
	id      string
	eventID int64
	hold    string
	order   string
	payURL  string
	paid    bool // the pay page answered 303
}

// step takes the shopper's next step. An error means the service did not
// answer it (down, or killed mid-request); anything else is a test failure.
func (s *shopper) step(t *testing.T, p *bookingChild) error {
	switch {
	case s.hold == "":
		r := p.request("POST", fmt.Sprintf("/api/events/%d/holds", s.eventID), s.id, map[string]any{"section": "A", "quantity": 1})
		if r.err != nil || r.status == http.StatusServiceUnavailable {
			return fmt.Errorf("hold: %d %v", r.status, r.err)
		}
		if r.status != http.StatusCreated {
			t.Errorf("%s: hold answered %d: %s", s.id, r.status, r.body)
			return fmt.Errorf("hold refused")
		}
		var h struct{ ID string }
		_ = json.Unmarshal(r.body, &h)
		s.hold = h.ID
	case s.order == "":
		r := p.request("POST", "/api/holds/"+s.hold+"/checkout", s.id, nil)
		if r.err != nil || r.status == http.StatusServiceUnavailable {
			return fmt.Errorf("checkout: %d %v", r.status, r.err)
		}
		if r.status != http.StatusOK {
			t.Errorf("%s: checkout answered %d: %s", s.id, r.status, r.body)
			return fmt.Errorf("checkout refused")
		}
		var co struct {
			Order   struct{ ID string }
			Payment struct {
				PayURL string `json:"pay_url"`
			}
		}
		_ = json.Unmarshal(r.body, &co)
		s.order, s.payURL = co.Order.ID, co.Payment.PayURL
	case !s.paid:
		// The pay page of a checkout made before a crash must still work.
		if r := p.request("GET", s.payURL, "", nil); r.err != nil {
			return fmt.Errorf("pay page: %v", r.err)
		} else if r.status != http.StatusOK {
			t.Errorf("%s: pay page %s answered %d: %s", s.id, s.payURL, r.status, r.body)
			return fmt.Errorf("pay page refused")
		}
		r := p.request("POST", s.payURL, "", "action=pay", "Content-Type", "application/x-www-form-urlencoded")
		if r.err != nil {
			return fmt.Errorf("pay: %v", r.err)
		}
		if r.status != http.StatusSeeOther {
			t.Errorf("%s: pay answered %d: %s", s.id, r.status, r.body)
			return fmt.Errorf("pay refused")
		}
		s.paid = true
	}
	return nil
}

// faultSeed is the RNG seed of a fault test: FOYER_FAULT_SEED replays a run.
func faultSeed(t *testing.T) uint64 {
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("FOYER_FAULT_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("FOYER_FAULT_SEED=%q: %v", v, err)
		}
		seed = n
	}
	t.Logf("seed %d (FOYER_FAULT_SEED=%d replays this run)", seed, seed)
	return seed
}

// TestFaultBookingKilledDuringCheckout kills the booking service with
// SIGKILL at random points while shoppers hold, check out and pay (webhooks
// held back 1.5 s, so many crashes fall between "paid" and "confirmed"),
// restarts it, and lets the shoppers carry on. At the end every payment the
// provider took is a paid order with every ticket delivered, no order is left
// pending, no seat is sold twice, and the service's own invariant checker
// agrees.
func TestFaultBookingKilledDuringCheckout(t *testing.T) {
	rng := rand.New(rand.NewPCG(faultSeed(t), 7))
	dbURL := pgtest.NewDatabase(t)
	redisSrv := redistest.StartServer(t, nil)
	p := startBooking(t, dbURL, "redis://"+redisSrv.Addr,
		"-fake-pay-delay", "1500ms", "-reconcile-after", "3s", "-hold-ttl", "2m")
	pool, err := pgxpool.New(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	eventID := p.createEvent(5, 10)

	// One shopper checks out before any crash and pays only after the first
	// restart, on the pay link they were given before it.
	early := &shopper{id: "fan-early", eventID: eventID}
	for early.order == "" {
		if err := early.step(t, p); err != nil {
			t.Fatalf("checkout before the crashes: %v", err)
		}
	}

	const rounds, perRound = 5, 6
	all := []*shopper{early}
	var restarts []time.Duration
	var lastRestart time.Time
	for round := range rounds {
		shoppers := make([]*shopper, perRound)
		for i := range shoppers {
			shoppers[i] = &shopper{id: fmt.Sprintf("fan-%d-%d", round, i), eventID: eventID}
		}
		all = append(all, shoppers...)
		// Shoppers arrive spread over 1.5 s and the kill lands anywhere in
		// 2.5 s, so crashes fall before a hold, mid-checkout, on the pay
		// page and while webhooks wait for delivery.
		var wg sync.WaitGroup
		for _, s := range shoppers {
			arrive := time.Duration(rng.Int64N(int64(1500 * time.Millisecond)))
			wg.Go(func() {
				time.Sleep(arrive)
				for !s.paid && s.step(t, p) == nil {
				}
			})
		}
		killAfter := time.Duration(rng.Int64N(int64(2500 * time.Millisecond)))
		time.Sleep(killAfter) // a random point of the checkout, not a wait for state
		p.kill()
		wg.Wait()
		var held, ordered, paid int
		for _, s := range shoppers {
			held += b2i(s.hold != "")
			ordered += b2i(s.order != "")
			paid += b2i(s.paid)
		}
		restarts = append(restarts, p.restart())
		lastRestart = time.Now()
		t.Logf("round %d: killed after %s; of %d shoppers %d held, %d checked out, %d paid",
			round, killAfter.Round(time.Millisecond), perRound, held, ordered, paid)
		// Everyone carries on after the restart, for at most ten seconds.
		deadline := time.Now().Add(10 * time.Second)
		for _, s := range append(shoppers, early) {
			for !s.paid {
				if err := s.step(t, p); err != nil {
					if t.Failed() || time.Now().After(deadline) {
						t.Fatalf("%s could not finish after the restart: %v", s.id, err)
					}
					time.Sleep(50 * time.Millisecond)
				}
			}
		}
	}

	// Every paid order is confirmed with its tickets delivered, by the
	// provider's retried webhooks or by the reconciler.
	var problems []string
	deadline := time.Now().Add(20 * time.Second)
	for {
		problems = readLedgerState(t, pool).problems()
		if len(problems) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(problems) > 0 {
		t.Fatalf("%d problems 20 s after the last restart:\n%s", len(problems), strings.Join(problems, "\n"))
	}
	settled := time.Since(lastRestart)
	st := readLedgerState(t, pool)
	for _, s := range all {
		if _, ok := st.providerSucceeded[s.order]; !ok || st.orders[s.order] != "paid" {
			t.Errorf("%s paid for order %s, which is %q", s.id, s.order, st.orders[s.order])
		}
	}
	checkInvariants(t, p.url, faultAdminToken)
	var slowest time.Duration
	for _, d := range restarts {
		slowest = max(slowest, d)
	}
	reconciled := strings.Count(p.output(), "reconciler: payment succeeded without a webhook")
	t.Logf("%d shoppers, %d rounds of kill -9: %d paid orders, 0 lost (%d confirmed by the reconciler, the rest by retried webhooks); restart to ready at most %s; every order settled %s after the last restart",
		len(all), rounds, len(st.providerSucceeded), reconciled, slowest.Round(time.Millisecond), settled.Round(time.Millisecond))
}

// TestFaultRedisRestartEmptyDeliversTickets kills the service's private
// redis-server (kill -9) and starts it again empty, while orders are paid
// before, during and after the outage: every paid order gets its tickets
// within 10 s of Redis coming back.
func TestFaultRedisRestartEmptyDeliversTickets(t *testing.T) {
	dbURL := pgtest.NewDatabase(t)
	redisSrv := redistest.StartServer(t, nil)
	p := startBooking(t, dbURL, "redis://"+redisSrv.Addr, "-reconcile-after", "3s")
	pool, err := pgxpool.New(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	eventID := p.createEvent(2, 10)

	buy := func(name string) *shopper {
		t.Helper()
		s := &shopper{id: name, eventID: eventID}
		deadline := time.Now().Add(10 * time.Second)
		for !s.paid {
			if err := s.step(t, p); err != nil {
				if t.Failed() || time.Now().After(deadline) {
					t.Fatalf("%s: %v", name, err)
				}
				time.Sleep(50 * time.Millisecond)
			}
		}
		return s
	}
	// settle waits until every paid order has its tickets delivered.
	settle := func(within time.Duration) time.Duration {
		t.Helper()
		start := time.Now()
		for {
			problems := readLedgerState(t, pool).problems()
			if len(problems) == 0 {
				return time.Since(start)
			}
			if time.Since(start) > within {
				t.Fatalf("not delivered within %s:\n%s", within, strings.Join(problems, "\n"))
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	before := []*shopper{buy("before-1"), buy("before-2")}
	settle(10 * time.Second)

	redisSrv.Stop(t)
	during := []*shopper{buy("during-1"), buy("during-2")}
	// Paid and confirmed while Redis is down: the outbox holds them.
	redisSrv.Restart(t)
	back := settle(10 * time.Second)
	after := []*shopper{buy("after-1")}
	settle(10 * time.Second)

	st := readLedgerState(t, pool)
	for _, s := range append(append(before, during...), after...) {
		if st.orders[s.order] != "paid" || st.ticketsPerOrder[s.order] != 1 || st.undelivered[s.order] != 0 {
			t.Errorf("%s: order %s is %q with %d tickets, %d undelivered", s.id, s.order, st.orders[s.order], st.ticketsPerOrder[s.order], st.undelivered[s.order])
		}
	}
	// The fan's next look at the order tells the gateway to free their slot.
	for _, s := range during {
		r := p.request("GET", "/api/orders/"+s.order, s.id, nil)
		if r.err != nil || r.status != http.StatusOK || r.header.Get(booking.CommandHeader) != booking.CommandRevoke {
			t.Errorf("%s: order read = %d %v, command %q; want the revoke", s.id, r.status, r.err, r.header.Get(booking.CommandHeader))
		}
	}
	checkInvariants(t, p.url, faultAdminToken)
	t.Logf("tickets of orders paid during the outage delivered %s after Redis came back empty", back.Round(time.Millisecond))
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
