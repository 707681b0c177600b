package gateway

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/foyer-dev/foyer/internal/redistest"
	"github.com/foyer-dev/foyer/waitingroom"
)

// supplyConfig is a room of one slot on two nodes (two sites told apart by
// their titles) sharing a Redis, in front of an origin that reports its
// supply on every answer: 100 units, 0 at /gone, and a value that is not a
// number of units at /bad.
func supplyConfig(storage, room, store string) string {
	sites := twoNodes(room, store, "") + `
	:9081 {
		bind 127.0.0.1
		@gone path /gone
		header @gone X-Waiting-Room-Supply 0
		@bad path /bad
		header @bad X-Waiting-Room-Supply -3
		@plenty not path /gone /bad
		header @plenty X-Waiting-Room-Supply 100
		respond "origin"
	}`
	return caddyConfig(storage, strings.ReplaceAll(sites, ":9082", ":"+strconv.Itoa(nodeBPort)))
}

// supplyHandles returns the room's handles on the two nodes.
func supplyHandles(t *testing.T, room string) []*waitingroom.Room {
	t.Helper()
	var out []*waitingroom.Room
	rooms.Range(func(_, v any) bool {
		if r := v.(*roomHandle).room; r.ID() == room {
			out = append(out, r)
		}
		return true
	})
	if len(out) != 2 {
		t.Fatalf("room %s has %d handles; want two nodes", room, len(out))
	}
	return out
}

// TestCaddySupplyFromTheOrigin: on a real Caddy with two nodes sharing a
// Redis, the origin reports its supply with X-Waiting-Room-Supply on an
// admitted fan's answer through one node; the header never reaches the fan;
// the next step takes it to the store, and the waiting fans' polls through
// both nodes tell them their outcome, costing the store no round trip. A
// supply that is not a number of units is ignored and counted; a supply of 0
// tells everyone waiting they are unlikely to get tickets, and they keep
// their places. The admin API refuses a bad supply with a JSON error.
func TestCaddySupplyFromTheOrigin(t *testing.T) {
	clock := useTestClock(t)
	srv := redistest.StartServer(t, nil)
	admin := redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { admin.Close() })
	room := "supply"
	newCaddy(t, supplyConfig(t.TempDir(), room, "store redis redis://"+srv.Addr))

	in := newFan(t)
	resp, body := in.get(base + "/events")
	if resp.StatusCode != http.StatusOK || body != "origin" {
		t.Fatalf("the first fan: %d %q; want let in on the spot", resp.StatusCode, body)
	}
	if resp.Header.Get("X-Waiting-Room-Supply") != "" {
		t.Fatal("the origin's supply header reached the fan")
	}
	waiting := []*fan{newFan(t), newFan(t), newFan(t)}
	for i, f := range waiting {
		node := []string{base, nodeBBase}[i%2]
		if st := f.requeueStatus(t, node); st.State != waitingroom.StateQueued || st.Outcome != "" || st.Chance != nil {
			t.Fatalf("fan %d before any supply: %+v; want queued, told nothing of the supply", i, st)
		}
	}
	clock.step(t, 2) // the noting node sends it; both read it back
	for _, r := range supplyHandles(t, room) {
		est, ok := r.Supply()
		if !ok || est.Last.Units != 100 {
			t.Fatalf("a node's supply: %+v %v; want 100 units", est.Last, ok)
		}
	}

	// Polls through both nodes tell an outcome, and cost the store nothing.
	calls := func() int64 {
		c := redistest.CommandCalls(context.Background(), t, admin)
		var n int64
		for _, v := range c {
			n += v
		}
		return n
	}
	before, started := calls(), time.Now()
	const polls = 200
	for i := range polls {
		node := []string{base, nodeBBase}[i%2]
		st := waiting[i%len(waiting)].requeueStatus(t, node)
		if st.Outcome != waitingroom.OutcomeLikely || st.Chance == nil || st.Chance.High != 1 || st.SupplyEnds == nil {
			t.Fatalf("poll %d through %s: %+v; want likely, with a chance and where supply ends", i, node, st)
		}
	}
	elapsed := time.Since(started)
	// The nodes' own loops go on meanwhile, a handful of calls a tick each
	// (more while a node catches up after a busy spell): a poll that cost a
	// round trip would add at least one call each, polls in all.
	if extra := calls() - before; extra >= polls/2 {
		t.Fatalf("%d polls in %v cost %d Redis commands, as many as half the polls: polls reached the store", polls, elapsed, extra)
	} else {
		t.Logf("%d polls in %v: %d Redis commands, the nodes' own loops (a poll reaching the store would add %d)", polls, elapsed, extra, polls)
	}

	// A bad supply is ignored and counted.
	if resp, body := in.get(nodeBBase + "/bad"); resp.StatusCode != http.StatusOK || body != "origin" || resp.Header.Get("X-Waiting-Room-Supply") != "" {
		t.Fatalf("the origin's answer with a bad supply: %d %q %v", resp.StatusCode, body, resp.Header)
	}
	clock.step(t, 2)
	refused := uint64(0)
	for _, r := range supplyHandles(t, room) {
		refused += r.Stats().SupplyRefused.Load()
		if est, _ := r.Supply(); est.Last.Units != 100 {
			t.Fatalf("after a bad supply: %d units; want 100 kept", est.Last.Units)
		}
	}
	if refused != 1 {
		t.Fatalf("bad supplies counted %d; want 1", refused)
	}

	// Sold: everyone waiting is told so, and keeps their place.
	in.get(base + "/gone")
	clock.step(t, 2)
	for i, f := range waiting {
		node := []string{nodeBBase, base}[i%2]
		st := f.requeueStatus(t, node)
		if st.Outcome != waitingroom.OutcomeUnlikely || st.Chance == nil || st.Chance.Low != 0 || st.State != waitingroom.StateQueued || st.Position == nil {
			t.Fatalf("fan %d after the supply fell to 0: %+v; want unlikely, still queued with a place", i, st)
		}
	}

	// The admin API: bad values get a 400 with a JSON error; a good one is
	// in force at once.
	for _, bad := range []string{`{"units": -1}`, `{"units": "ten"}`, `{"units": 1.5}`, `{}`, `{"units": 5, "seats": 5}`, `units=5`, `{"units": 99999999999999999999}`} {
		code, body := adminCall(t, http.MethodPost, "/waiting-room/"+room+"/supply", bad)
		var e struct{ Error, Message string }
		if code != http.StatusBadRequest || json.Unmarshal([]byte(body), &e) != nil || e.Error == "" || e.Message == "" {
			t.Fatalf("POST supply %s: %d %s; want 400 with a JSON error", bad, code, body)
		}
	}
	code, body := adminCall(t, http.MethodPost, "/waiting-room/"+room+"/supply", `{"units": 40, "reason": "box office returns"}`)
	var v supplyView
	if code != http.StatusOK || json.Unmarshal([]byte(body), &v) != nil || !v.Known || v.Units == nil || *v.Units != 40 {
		t.Fatalf("POST supply 40: %d %s", code, body)
	}
	_, metrics := adminCall(t, http.MethodGet, "/metrics", "")
	for _, want := range []string{
		`foyer_waiting_room_supply_units{room="supply"} 40`,
		`foyer_waiting_room_supply_refused_total{room="supply"} 1`,
		`foyer_waiting_room_supply_units_per_fan{bound="high",room="supply"} 8`,
		`foyer_waiting_room_supply_ends_position{bound="low",room="supply"}`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("the metrics lack %s", want)
		}
	}
	if code, body := adminCall(t, http.MethodGet, "/waiting-room/"+room+"/audit", ""); code != http.StatusOK || !strings.Contains(body, `"action":"supply"`) || !strings.Contains(body, "box office returns") {
		t.Fatalf("the audit trail after setting the supply: %d %s", code, body)
	}
}
