package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"

	"github.com/foyer-dev/foyer/booking"
	"github.com/foyer-dev/foyer/booking/payments"
	"github.com/foyer-dev/foyer/booking/pgstore/pgtest"
	"github.com/foyer-dev/foyer/booking/stream"
	"github.com/foyer-dev/foyer/internal/redistest"
)

// TestFaultTwoBookingProcessesOneDatabase runs two booking processes on one
// fresh PostgreSQL database and one private redis-server, as two replicas
// behind a real Foyer that balances between them. Shoppers admitted by the
// room hold through the gateway, check out through it and on both processes
// at once, pay, and the provider's webhooks arrive twice at each process,
// with copies sent concurrently to both. Each order gets one payment, each
// payment is confirmed once, each ticket is delivered once, no seat is sold
// twice and no paid order lacks its tickets. Then one process is killed with
// SIGKILL while the other's shoppers pay, and the survivor delivers all.
func TestFaultTwoBookingProcessesOneDatabase(t *testing.T) {
	const adminToken, webhookSecret = "two-procs-admin", "whsec_two_procs"
	db := pgtest.NewDatabase(t)
	rs := redistest.StartServer(t, nil)
	ports := [2]int{freePort(t), freePort(t)}
	gw := fmt.Sprintf("http://127.0.0.1:%d", freePort(t))
	startFoyer(t, "foyer", fmt.Sprintf(`{
	admin off
	auto_https off
	persist_config off
}
%s {
	waiting_room {
		room onsale
		new_users_per_minute 6000
		total_active_users 100
	}
	reverse_proxy 127.0.0.1:%d 127.0.0.1:%d {
		lb_policy round_robin
	}
}
`, gw, ports[0], ports[1]), gw)
	// Both start at once on the empty database: they migrate it and seed
	// the demo event once between them.
	var procs [2]*bookingChild
	for i := range procs {
		procs[i] = newBooking(t, fmt.Sprintf("booking-%d", i), ports[i],
			"-database-url", db, "-redis-url", "redis://"+rs.Addr, "-jwks", gw+"/_waiting-room/jwks.json", "-room", "onsale", "-seed-demo",
			"-admin-token", adminToken, "-webhook-secret", webhookSecret, "-ticket-secret", "tickets-two-procs",
			"-public-url", fmt.Sprintf("http://127.0.0.1:%d", ports[i]), "-fake-pay-copies", "2", "-db-max-conns", "6", "-db-background-conns", "3")
		procs[i].start()
	}
	for _, p := range procs {
		p.awaitReady()
	}
	var seeded struct {
		Events []struct{} `json:"events"`
	}
	_, looker := admit(t, gw)
	call(t, "GET", procs[1].url+"/api/events", http.Header{booking.PassHeader: {looker}}, nil, &seeded)
	if len(seeded.Events) != 1 {
		t.Fatalf("two processes starting together seeded %d demo events; want 1", len(seeded.Events))
	}
	admin := http.Header{"Authorization": {"Bearer " + adminToken}}
	var ev struct {
		ID int64 `json:"id"`
	}
	if code := call(t, "POST", procs[0].url+"/api/admin/events", admin, map[string]any{
		"name": "Two processes", "starts_at": "2027-01-01T20:00:00Z",
		"sections": []map[string]any{{"id": "A", "rows": 2, "seats_per_row": 8, "price": "50.00"}},
		"zones": []map[string]any{{"id": "FLOOR", "capacity": 8, "price": "30.00"},
			{"id": "LATE", "capacity": 12, "price": "20.00"}},
	}, &ev); code != http.StatusCreated {
		t.Fatalf("creating the event: %d", code)
	}

	// 16 seats and 8 standing places for 20 shoppers of 1 or 2 places: some
	// holds fail, which is contention, not an error.
	const shoppers = 20
	type result struct {
		pass     string
		order    orderJSON
		payments map[string]bool // provider payment ids the shopper was shown
		quantity int
	}
	results := make([]*result, shoppers)
	start := time.Now()
	var wg sync.WaitGroup
	for i := range shoppers {
		wg.Go(func() {
			me := fmt.Sprintf("shopper-%d", i)
			client, token := admit(t, gw)
			pass := http.Header{booking.PassHeader: {token}}
			want := map[string]any{"section": "A", "quantity": 1 + i%2}
			if i%3 == 0 {
				want = map[string]any{"zone": "FLOOR", "quantity": 1 + i%2}
			}
			var hold struct {
				ID string `json:"id"`
			}
			switch code := callWith(t, client, "POST", fmt.Sprintf("%s/api/events/%d/holds", gw, ev.ID), nil, want, &hold); code {
			case http.StatusCreated:
			case http.StatusConflict:
				return // sold out under contention
			default:
				t.Errorf("%s: hold answered %d", me, code)
				return
			}
			// The same checkout through the gateway and on each process at
			// once, as a client retrying through load balancers may.
			var cos [3]struct {
				Order orderJSON `json:"order"`
			}
			var cw sync.WaitGroup
			for j, base := range []string{gw, procs[0].url, procs[1].url} {
				cw.Go(func() {
					if code := callWith(t, client, "POST", base+"/api/holds/"+hold.ID+"/checkout", pass, nil, &cos[j]); code != http.StatusOK {
						t.Errorf("%s: checkout through %s answered %d", me, base, code)
					}
				})
			}
			cw.Wait()
			r := &result{pass: token, order: cos[0].Order, payments: map[string]bool{}, quantity: 1 + i%2}
			for _, co := range cos {
				r.payments[co.Order.Payment.ProviderPaymentID] = true
				if co.Order.ID != r.order.ID {
					t.Errorf("%s: two checkouts of one hold made orders %s and %s", me, r.order.ID, co.Order.ID)
				}
			}
			results[i] = r
			// Pay on the provider's page, as the browser would.
			resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).
				PostForm(r.order.Payment.PayURL, map[string][]string{"action": {"pay"}})
			if err != nil {
				t.Errorf("%s: paying: %v", me, err)
				return
			}
			resp.Body.Close()
			// The provider's own event once more, to both processes at once,
			// twice each: signed like the fake signs it.
			body, _ := json.Marshal(map[string]any{
				"id": "evt_replay_" + r.order.ID, "type": payments.EventPaymentSucceeded, "created": time.Now().Unix(),
				"data": map[string]any{"object": map[string]any{
					"id": r.order.Payment.ProviderPaymentID, "amount": cents(t, r.order.Amount), "currency": "EUR", "status": "succeeded",
					"metadata": map[string]string{"order_id": r.order.ID},
				}},
			})
			var dw sync.WaitGroup
			for k := range 4 {
				dw.Go(func() {
					req, _ := http.NewRequest("POST", procs[k%2].url+"/api/payments/webhook", bytes.NewReader(body))
					req.Header.Set(payments.SignatureHeader, payments.Sign([]byte(webhookSecret), time.Now(), body))
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						t.Errorf("%s: webhook: %v", me, err)
						return
					}
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						t.Errorf("%s: duplicate webhook answered %d", me, resp.StatusCode)
					}
				})
			}
			dw.Wait()
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}

	// Every paid order ends with every ticket delivered, read through either
	// process.
	paid := 0
	for i, r := range results {
		if r == nil {
			continue
		}
		paid++
		if len(r.payments) != 1 {
			t.Errorf("shopper %d was shown %d payments for one order: %v", i, len(r.payments), r.payments)
		}
		pass := http.Header{booking.PassHeader: {r.pass}}
		deadline := time.Now().Add(20 * time.Second)
		for {
			var o [2]orderJSON
			for j, p := range procs {
				call(t, "GET", p.url+"/api/orders/"+r.order.ID, pass, nil, &o[j])
			}
			if delivered(o[0], r.quantity) && delivered(o[1], r.quantity) {
				for k := range o[0].Tickets {
					if o[0].Tickets[k].Delivery.Code != o[1].Tickets[k].Delivery.Code {
						t.Errorf("order %s: the processes show different codes for one ticket", r.order.ID)
					}
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("order %s not delivered within 20 s: %+v", r.order.ID, o[0])
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	if paid == 0 {
		t.Fatal("no shopper got as far as paying")
	}
	t.Logf("%d shoppers, %d paid orders, all delivered %.1f s after the first hold", shoppers, paid, time.Since(start).Seconds())

	// Then one process dies (SIGKILL) while the other's shoppers pay: the
	// survivor relays the outbox, claims whatever stream entries the dead
	// one had taken and not acknowledged, and delivers every ticket.
	const late = 6
	lateOrders := make([]orderJSON, late)
	latePasses := make([]string, late)
	for i := range late {
		me := fmt.Sprintf("late-%d", i)
		_, latePasses[i] = admit(t, gw)
		pass := http.Header{booking.PassHeader: {latePasses[i]}}
		var hold struct {
			ID string `json:"id"`
		}
		if code := call(t, "POST", fmt.Sprintf("%s/api/events/%d/holds", procs[1].url, ev.ID), pass, map[string]any{"zone": "LATE", "quantity": 2}, &hold); code != http.StatusCreated {
			t.Fatalf("%s: hold = %d", me, code)
		}
		var co struct {
			Order orderJSON `json:"order"`
		}
		if code := call(t, "POST", procs[1].url+"/api/holds/"+hold.ID+"/checkout", pass, nil, &co); code != http.StatusOK {
			t.Fatalf("%s: checkout = %d", me, code)
		}
		lateOrders[i] = co.Order
	}
	var pw sync.WaitGroup
	for _, o := range lateOrders {
		pw.Go(func() {
			resp, err := http.PostForm(o.Payment.PayURL, map[string][]string{"action": {"pay"}})
			if err == nil {
				resp.Body.Close()
			}
		})
	}
	pw.Wait()
	killed := time.Now()
	procs[0].kill()
	for i, o := range lateOrders {
		pass := http.Header{booking.PassHeader: {latePasses[i]}}
		deadline := time.Now().Add(20 * time.Second)
		for {
			var got orderJSON
			call(t, "GET", procs[1].url+"/api/orders/"+o.ID, pass, nil, &got)
			if delivered(got, 2) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("late order %s not delivered within 20 s of the other process's death: %+v", o.ID, got)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	paid += late
	t.Logf("one process killed: the %d orders paid meanwhile were all delivered %.1f s later", late, time.Since(killed).Seconds())

	// The database and the stream agree: one payment per order, confirmed
	// once; one ticket per place; one delivery per ticket; one stream entry
	// per paid order, all acknowledged.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	count := func(q string) int {
		var n int
		if err := conn.QueryRow(ctx, q).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	checks := []struct {
		what, query string
		want        int
	}{
		{"paid orders", `SELECT count(*) FROM orders WHERE status = 'paid'`, paid},
		{"succeeded payments", `SELECT count(DISTINCT provider_payment_id) FROM payments WHERE status = 'succeeded'`, paid},
		{"orders not paid", `SELECT count(*) FROM orders WHERE status <> 'paid'`, 0},
		{"paid orders without tickets", `SELECT count(*) FROM orders o WHERE status = 'paid' AND NOT EXISTS (SELECT 1 FROM tickets t WHERE t.order_id = o.id)`, 0},
		{"orders with more tickets than places", `SELECT count(*) FROM orders o JOIN holds h ON h.id = o.hold_id WHERE (SELECT count(*) FROM tickets t WHERE t.order_id = o.id) <> h.quantity`, 0},
		{"seats sold twice", `SELECT count(*) FROM (SELECT 1 FROM tickets WHERE seat_id IS NOT NULL GROUP BY event_id, seat_id HAVING count(*) > 1) d`, 0},
		{"tickets without one delivery", `SELECT count(*) FROM tickets t WHERE (SELECT count(*) FROM deliveries d WHERE d.ticket_id = t.id) <> 1`, 0},
		{"outbox messages unpublished", `SELECT count(*) FROM outbox WHERE published_at IS NULL`, 0},
	}
	for _, c := range checks {
		if got := count(c.query); got != c.want {
			t.Errorf("%s: %d, want %d", c.what, got, c.want)
		}
	}
	rc := redis.NewClient(&redis.Options{Addr: rs.Addr})
	defer rc.Close()
	key := stream.DefaultPrefix + "stream"
	if n, err := rc.XLen(ctx, key).Result(); err != nil || int(n) != paid {
		t.Errorf("stream entries = %d, %v; want one per paid order (%d)", n, err, paid)
	}
	if p, err := rc.XPending(ctx, key, booking.DeliveryGroup).Result(); err != nil || p.Count != 0 {
		t.Errorf("unacknowledged stream entries = %+v, %v; want 0", p, err)
	}
	// The survivor reports the figures of the one database.
	for _, p := range procs[1:] {
		m := scrape(t, p.url)
		for _, want := range []string{fmt.Sprintf(`foyer_booking_orders{status="paid"} %d`, paid), "foyer_booking_paid_orders_without_tickets 0", `foyer_booking_db_pool_max_connections{pool="requests"} 6`, `foyer_booking_db_pool_max_connections{pool="background"} 3`} {
			if !strings.Contains(m, want) {
				t.Errorf("%s /metrics lacks %q", p.name, want)
			}
		}
	}
	checkInvariants(t, procs[1].url, adminToken)
}
