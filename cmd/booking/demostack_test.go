package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// demo is the repository's own Caddyfile (ports moved to free ones) running
// in a real Foyer in front of a booking process on memory stores.
type demo struct {
	base    string // the gateway, where fans go
	admin   string // the gateway's admin endpoint
	booking *bookingChild
}

// demoStack runs the demo stack and returns the gateway's base URL and the
// booking process.
func demoStack(t *testing.T, adminToken string) (string, *bookingChild) {
	t.Helper()
	d := startDemo(t, adminToken)
	return d.base, d.booking
}

// startDemo runs the demo stack, the booking process with extra flags.
func startDemo(t *testing.T, adminToken string, extra ...string) demo {
	t.Helper()
	data, err := os.ReadFile("../../Caddyfile")
	if err != nil {
		t.Fatal(err)
	}
	gw, admin, origin := freePort(t), freePort(t), freePort(t)
	cfg := string(data)
	for old, new := range map[string]string{
		"admin localhost:{$FOYER_ADMIN_PORT:2019}": fmt.Sprintf("admin 127.0.0.1:%d\n\tauto_https off\n\tpersist_config off", admin),
		"http_port {$FOYER_PORT:8080}":             fmt.Sprintf("http_port %d", gw),
		":{$FOYER_PORT:8080} {":                    fmt.Sprintf(":%d {", gw),
		"127.0.0.1:{$BOOKING_PORT:9000}":           fmt.Sprintf("127.0.0.1:%d", origin),
	} {
		if !strings.Contains(cfg, old) {
			t.Fatalf("the demo Caddyfile no longer has %q; update this test", old)
		}
		cfg = strings.ReplaceAll(cfg, old, new)
	}
	d := demo{base: fmt.Sprintf("http://127.0.0.1:%d", gw), admin: fmt.Sprintf("http://127.0.0.1:%d", admin)}
	startFoyer(t, "foyer", cfg, d.base)
	d.booking = runBooking(t, "booking", origin, append([]string{"-seed-demo",
		"-jwks", d.base + "/_waiting-room/jwks.json", "-room", "demo", "-admin-token", adminToken, "-public-url", d.base}, extra...)...)
	return d
}

// roomCount is what the demo room counts in its store: the places handed out
// (one per join) and the slots taken (sessions, and admissions not yet
// claimed).
type roomCount struct {
	Joins uint64
	Slots int
}

func (d demo) room(t *testing.T) roomCount {
	t.Helper()
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Get(d.admin + "/waiting-room/demo")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v struct {
		Counters struct {
			Seq uint64 `json:"seq"`
		} `json:"counters"`
		Active  int `json:"active"`
		Pending int `json:"pending"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the room's counters: %d %v", resp.StatusCode, err)
	}
	return roomCount{Joins: v.Counters.Seq, Slots: v.Active + v.Pending}
}
