package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// ledgerState reads, straight from the database, what the provider and the
// shop each hold, for the end-of-test invariants.
type ledgerState struct {
	providerSucceeded map[string]string // order id -> provider payment id
	orders            map[string]string // order id -> status
	undelivered       map[string]int    // paid order id -> tickets without a delivery
	ticketsPerOrder   map[string]int
	doubleSold        int // seats with more than one ticket
}

func readLedgerState(t *testing.T, pool *pgxpool.Pool) ledgerState {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st := ledgerState{providerSucceeded: map[string]string{}, orders: map[string]string{}, undelivered: map[string]int{}, ticketsPerOrder: map[string]int{}}
	rows, err := pool.Query(ctx, `SELECT body->'metadata'->>'order_id', id FROM fakepay_payments WHERE body->>'status' = 'succeeded'`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var o, id string
		if err := rows.Scan(&o, &id); err != nil {
			t.Fatal(err)
		}
		st.providerSucceeded[o] = id
	}
	rows, err = pool.Query(ctx, `SELECT id, status FROM orders`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, s string
		if err := rows.Scan(&id, &s); err != nil {
			t.Fatal(err)
		}
		st.orders[id] = s
	}
	rows, err = pool.Query(ctx, `
		SELECT t.order_id, count(*), count(*) FILTER (WHERE d.ticket_id IS NULL)
		FROM tickets t LEFT JOIN deliveries d ON d.ticket_id = t.id GROUP BY t.order_id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		var n, missing int
		if err := rows.Scan(&id, &n, &missing); err != nil {
			t.Fatal(err)
		}
		st.ticketsPerOrder[id] = n
		if missing > 0 {
			st.undelivered[id] = missing
		}
	}
	if err := pool.QueryRow(ctx, `
		SELECT count(*) FROM (SELECT event_id, seat_id FROM tickets WHERE seat_id IS NOT NULL
		GROUP BY event_id, seat_id HAVING count(*) > 1) d`).Scan(&st.doubleSold); err != nil {
		t.Fatal(err)
	}
	return st
}

// problems reports what still keeps the state from the end invariants: a
// payment the provider took whose order is not paid with every ticket
// delivered, or an order left pending.
func (st ledgerState) problems() []string {
	var out []string
	for o, pay := range st.providerSucceeded {
		if st.orders[o] != "paid" {
			out = append(out, fmt.Sprintf("order %s is %q but payment %s succeeded", o, st.orders[o], pay))
		} else if st.ticketsPerOrder[o] == 0 || st.undelivered[o] > 0 {
			out = append(out, fmt.Sprintf("paid order %s has %d tickets, %d undelivered", o, st.ticketsPerOrder[o], st.undelivered[o]))
		}
	}
	for o, s := range st.orders {
		switch s {
		case "pending_payment":
			out = append(out, fmt.Sprintf("order %s still pending_payment", o))
		case "paid":
			if _, ok := st.providerSucceeded[o]; !ok {
				out = append(out, fmt.Sprintf("order %s is paid but the provider holds no succeeded payment", o))
			}
		}
	}
	if st.doubleSold > 0 {
		out = append(out, fmt.Sprintf("%d seats sold twice", st.doubleSold))
	}
	return out
}
