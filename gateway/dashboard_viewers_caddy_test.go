package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestCaddyDashboardStreamViewersAreBounded: a dashboard mounted without
// basic_auth is open to anyone, and each open event stream costs the node a
// goroutine and a payload built and sent every second. An outsider opening
// streams by the hundred gets a 503 beyond MaxDashboardStreams, while the
// viewers already in keep their stream, and a slot freed is taken again.
func TestCaddyDashboardStreamViewersAreBounded(t *testing.T) {
	newCaddy(t, caddyConfig(t.TempDir(), `
	http://localhost:9080 {
		waiting_room /events/* {
			room open-dash
		}
		handle /ops/* {
			waiting_room_dashboard
		}
		respond "origin"
	}`))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tr := &http.Transport{MaxConnsPerHost: 0, MaxIdleConnsPerHost: 0}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	open := func(ctx context.Context) (*http.Response, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/ops/d?format=events", nil)
		return c.Do(req)
	}
	var streams []context.CancelFunc
	for i := range MaxDashboardStreams {
		sctx, scancel := context.WithCancel(ctx)
		resp, err := open(sctx)
		if err != nil {
			t.Fatalf("viewer %d: %v", i, err)
		}
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("viewer %d of %d: %d, want 200", i, MaxDashboardStreams, resp.StatusCode)
		}
		line, err := bufio.NewReader(resp.Body).ReadString('\n')
		if err != nil || line != "event: snapshot\n" {
			t.Fatalf("viewer %d read %q %v, want the snapshot", i, line, err)
		}
		streams = append(streams, func() { scancel(); resp.Body.Close() })
	}
	resp, err := open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var e struct{ Error string }
	_ = json.NewDecoder(resp.Body).Decode(&e)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || e.Error != "too_many_viewers" || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("viewer %d: %d %q Retry-After %q, want 503 too_many_viewers", MaxDashboardStreams+1, resp.StatusCode, e.Error, resp.Header.Get("Retry-After"))
	}
	// The page and its JSON are not streams: they still answer.
	if r, body := dashRequest(t, base+"/ops/d?format=json", false); r.StatusCode != http.StatusOK || !strings.Contains(body, "open-dash") {
		t.Fatalf("json while the streams are full: %d %s", r.StatusCode, body)
	}
	// A viewer leaves; the next one gets its slot once the node notices.
	streams[0]()
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := open(ctx)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a viewer left: still %d", resp.StatusCode)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, s := range streams[1:] {
		s()
	}
}
