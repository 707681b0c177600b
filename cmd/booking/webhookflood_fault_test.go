package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/foyer-dev/foyer/booking"
	"github.com/foyer-dev/foyer/booking/payments"
	"github.com/foyer-dev/foyer/booking/pgstore/pgtest"
)

// TestFaultUnsignedWebhookFlood floods a booking process on PostgreSQL with
// webhooks that are unsigned, signed with a guess, or stale, each with a new
// Idempotency-Key: every one is a 400 and the idempotency table stays empty
// (it used to gain a row per request, forever). Then a hold made with an
// Idempotency-Key is replayed, before and after the process is killed with
// SIGKILL and restarted, with its Location header each time.
func TestFaultUnsignedWebhookFlood(t *testing.T) {
	const adminToken = "flood-admin"
	db := pgtest.NewDatabase(t)
	signer := newPassSigner(t)
	b := runBooking(t, "booking", 0, "-database-url", db, "-jwks", signer.jwks, "-room", "onsale", "-admin-token", adminToken,
		"-seed-demo", "-webhook-secret", "whsec_flood")

	// Bounded in count and time: 1,500 requests, 8 at a time, 20 s at most.
	const total, workers = 1500, 8
	body := []byte(`{"id":"evt_forged","type":"payment_intent.succeeded","data":{"object":{"id":"pi_x","amount":1,"metadata":{"order_id":"ord_x"}}}}`)
	signatures := []string{"", "t=1,v1=00", payments.Sign([]byte("guess"), time.Now(), body), payments.Sign([]byte("whsec_flood"), time.Now().Add(-time.Hour), body)}
	var next, refused atomic.Int64
	deadline := time.Now().Add(20 * time.Second)
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 5 * time.Second}
	for range workers {
		wg.Go(func() {
			for {
				i := next.Add(1)
				if i > total || time.Now().After(deadline) {
					return
				}
				req, _ := http.NewRequest("POST", b.url+"/api/payments/webhook", bytes.NewReader(body))
				req.Header.Set(booking.IdempotencyHeader, fmt.Sprintf("flood-%d", i))
				if sig := signatures[i%int64(len(signatures))]; sig != "" {
					req.Header.Set(payments.SignatureHeader, sig)
				}
				resp, err := client.Do(req)
				if err != nil {
					t.Errorf("request %d: %v", i, err)
					return
				}
				resp.Body.Close()
				if resp.StatusCode == http.StatusBadRequest {
					refused.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if refused.Load() != total {
		t.Fatalf("%d of %d forged webhooks refused with 400", refused.Load(), total)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var rows int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM idempotency_keys`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != 0 {
		t.Fatalf("%d forged webhooks left %d idempotency records; want 0", total, rows)
	}
	if m := scrape(t, b.url); !strings.Contains(m, fmt.Sprintf(`foyer_booking_webhooks_total{code="400"} %d`, total)) ||
		!strings.Contains(m, "foyer_booking_idempotency_keys 0") {
		t.Errorf("metrics do not show the flood:\n%s", grepLines(m, "webhooks_total")+"\n"+grepLines(m, "idempotency_keys"))
	}

	// A replay keeps the first answer's headers, also after a crash.
	pass := http.Header{booking.PassHeader: {signer.pass(t, "fan")}, booking.IdempotencyHeader: {"hold-1"}}
	hold := func() (int, http.Header, string) {
		req, _ := http.NewRequest("POST", b.url+"/api/events/1/holds", strings.NewReader(`{"zone":"FLOOR","quantity":2}`))
		req.Header = pass.Clone()
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var buf bytes.Buffer
		_, _ = buf.ReadFrom(resp.Body)
		return resp.StatusCode, resp.Header, buf.String()
	}
	status, first, firstBody := hold()
	if status != http.StatusCreated || first.Get("Location") == "" {
		t.Fatalf("hold = %d %v", status, first)
	}
	for round, restart := range []bool{false, true} {
		if restart {
			b.restart()
		}
		status, again, againBody := hold()
		if status != http.StatusCreated || again.Get("Idempotent-Replayed") != "true" || again.Get("Location") != first.Get("Location") || againBody != firstBody {
			t.Fatalf("replay %d (restarted: %v) = %d %v %s; want the first answer with Location %s", round, restart, status, again, againBody, first.Get("Location"))
		}
	}
	checkInvariants(t, b.url, adminToken)
}
