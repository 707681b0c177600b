package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestDemoServer runs the binary's server on memory stores with dev passes,
// as `make run` does, and buys a ticket through it like a browser would.
func TestDemoServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := parseConfig([]string{"-dev-passes", "-seed-demo", "-addr", ln.Addr().String()}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, cfg, slog.New(slog.DiscardHandler), ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	base := "http://" + ln.Addr().String()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 10 * time.Second}
	get := func(path string, v any) *http.Response {
		t.Helper()
		resp, err := c.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if v != nil {
			if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
				t.Fatalf("GET %s: %v", path, err)
			}
		}
		return resp
	}
	post := func(path, body string, v any) *http.Response {
		t.Helper()
		resp, err := c.Post(base+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if v != nil {
			_ = json.NewDecoder(resp.Body).Decode(v)
		}
		return resp
	}
	for _, path := range []string{"/storefront/app.js", "/storefront/app.css"} {
		if r := get(path, nil); r.StatusCode != 200 {
			t.Fatalf("GET %s = %d", path, r.StatusCode)
		}
	}
	// The pages are drawn on the server from the API, which wants a pass:
	// without one (the room in front of the shop hands it out), a page
	// says the visit ended, as a page.
	if r := get("/", nil); r.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("page without a pass = %d %s, want a 401 page", r.StatusCode, r.Header.Get("Content-Type"))
	}
	if r := get("/api/events", nil); r.StatusCode != http.StatusUnauthorized {
		t.Fatalf("API without a pass = %d", r.StatusCode)
	}
	if r := post("/dev/pass", "", nil); r.StatusCode != 200 {
		t.Fatalf("dev pass = %d", r.StatusCode)
	}
	for _, path := range []string{"/", "/events/1"} {
		if r := get(path, nil); r.StatusCode != 200 {
			t.Fatalf("GET %s with a pass = %d", path, r.StatusCode)
		}
	}
	var events struct {
		Events []struct {
			ID int64 `json:"id"`
		} `json:"events"`
	}
	get("/api/events", &events)
	if len(events.Events) != 1 {
		t.Fatalf("seeded events = %+v", events)
	}
	var hold struct {
		ID string `json:"id"`
	}
	if r := post("/api/events/1/holds", `{"zone":"FLOOR","quantity":2}`, &hold); r.StatusCode != 201 {
		t.Fatalf("hold = %d", r.StatusCode)
	}
	var co struct {
		Order   struct{ ID string } `json:"order"`
		Payment struct {
			PayURL string `json:"pay_url"`
		} `json:"payment"`
	}
	post("/api/holds/"+hold.ID+"/checkout", "", &co)
	pay, _ := url.Parse(co.Payment.PayURL)
	// The provider's page answers the choice by sending the fan back to the
	// shop's order page, which a browser reaches through the room.
	payer := &http.Client{Jar: jar, Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if r, err := payer.PostForm(base+pay.Path, url.Values{"action": {"pay"}}); err != nil || (r.StatusCode != 200 && r.StatusCode != http.StatusSeeOther) {
		t.Fatalf("paying: %v %v", r, err)
	}
	// The webhook, the relay and the delivery worker run in the background.
	deadline := time.Now().Add(15 * time.Second)
	for {
		var o struct {
			Status  string `json:"status"`
			Tickets []struct {
				Delivery *struct{ Code string } `json:"delivery"`
			} `json:"tickets"`
		}
		r := get("/api/orders/"+co.Order.ID, &o)
		if o.Status == "paid" && len(o.Tickets) == 2 && o.Tickets[0].Delivery != nil && o.Tickets[1].Delivery != nil {
			if r.Header.Get("X-Waiting-Room-Command") != "revoke" {
				t.Fatal("finished order did not revoke the session")
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("order never completed: %+v", o)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// On memory stores the only dependency is the pass keys, here its own.
	var ready struct {
		Ready   bool     `json:"ready"`
		Checked []string `json:"checked"`
	}
	if r := get("/readyz", &ready); r.StatusCode != 200 || !ready.Ready || strings.Join(ready.Checked, ",") != "pass_keys" {
		t.Fatalf("readyz = %d %+v", r.StatusCode, ready)
	}
	resp, err := c.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`foyer_booking_orders{status="paid"} 1`, `foyer_booking_payments{status="succeeded"} 1`,
		"foyer_booking_tickets 2", "foyer_booking_tickets_delivered 2", "foyer_booking_paid_orders_without_tickets 0",
		"foyer_booking_outbox_pending 0", "foyer_booking_outbox_lag_seconds 0", "foyer_booking_holds_active 0",
		`foyer_booking_webhooks_total{code="200"}`, "foyer_booking_store_up 1", "go_goroutines",
	} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}
