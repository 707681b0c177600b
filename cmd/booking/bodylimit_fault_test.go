package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestFaultOversizedBodyThroughGateway sends bodies over every limit through
// a real Foyer with the demo Caddyfile: each gets a 413 with a JSON error,
// never a 502 (the booking service used to close the connection with the
// body unread, and the proxy saw a reset), and nothing changes.
func TestFaultOversizedBodyThroughGateway(t *testing.T) {
	const adminToken = "body-test-admin"
	base, booking := demoStack(t, adminToken)
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	// The room has spare capacity and nobody waits: this fan is let in at
	// once and gets a pass.
	resp, err := c.Get(base + "/api/events")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("first visit through the room = %d", resp.StatusCode)
	}
	before := available(t, c, base)

	threeMB := bytes.Repeat([]byte("a"), 3<<20)
	twelveMB := bytes.Repeat([]byte("a"), 12<<20)
	cases := []struct {
		name    string
		path    string
		body    []byte
		chunked bool
		expect  bool // send Expect: 100-continue, as curl does for big bodies
		times   int
		message string // part of the JSON message: who refused it
	}{
		{"3 MB hold", "/api/events/1/holds", threeMB, false, false, 12, "16384 bytes"},
		{"3 MB hold, 100-continue", "/api/events/1/holds", threeMB, false, true, 12, "16384 bytes"},
		{"3 MB hold, chunked", "/api/events/1/holds", threeMB, true, false, 4, "16384 bytes"},
		{"3 MB checkout", "/api/holds/hold_x/checkout", threeMB, false, true, 4, "16384 bytes"},
		{"3 MB webhook", "/api/payments/webhook", threeMB, false, true, 4, "65536 bytes"},
		{"12 MB hold, refused by Caddy", "/api/events/1/holds", twelveMB, false, true, 3, "10 MB"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			statuses := map[int]int{}
			var mu sync.Mutex
			var wg sync.WaitGroup
			for i := range tc.times {
				wg.Go(func() {
					var rd io.Reader = bytes.NewReader(tc.body)
					if tc.chunked {
						rd = io.MultiReader(rd) // hides the length: sent chunked
					}
					req, _ := http.NewRequest("POST", base+tc.path, rd)
					req.Header.Set("Content-Type", "application/json")
					if tc.expect {
						req.Header.Set("Expect", "100-continue")
					}
					resp, err := c.Do(req)
					if err != nil {
						t.Errorf("request %d: %v", i, err)
						return
					}
					defer resp.Body.Close()
					var body struct{ Error, Message string }
					if err := json.NewDecoder(resp.Body).Decode(&body); err != nil ||
						body.Error != "body_too_large" || !strings.Contains(body.Message, tc.message) {
						t.Errorf("request %d: %d with body %+v (%v); want a JSON body_too_large naming %q", i, resp.StatusCode, body, err, tc.message)
					}
					mu.Lock()
					statuses[resp.StatusCode]++
					mu.Unlock()
				})
			}
			wg.Wait()
			if statuses[http.StatusRequestEntityTooLarge] != tc.times {
				t.Fatalf("statuses %v; want %d × 413", statuses, tc.times)
			}
		})
	}
	if after := available(t, c, base); after != before {
		t.Fatalf("oversized bodies changed the event: %d places available before, %d after", before, after)
	}
	// The fan can still shop through the same gateway.
	resp, err = c.Post(base+"/api/events/1/holds", "application/json", strings.NewReader(`{"zone":"FLOOR","quantity":1}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("a normal hold after the oversized ones = %d", resp.StatusCode)
	}
	checkInvariants(t, booking.url, adminToken)
}

// available reads the places left of the demo event.
func available(t *testing.T, c *http.Client, base string) int {
	t.Helper()
	resp, err := c.Get(base + "/api/events/1")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e struct {
		Available *int `json:"available"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&e); err != nil || e.Available == nil {
		t.Fatalf("event: %d %v", resp.StatusCode, err)
	}
	return *e.Available
}
