package gateway

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// TestCaddyRandomRoomShowsEveryFanTheirKey runs a random room without a
// pre-queue draw through a real Caddy. Early registrants are in the
// pre-queue with their draw_index, and rolling draw epoch 1, from order key
// 0, places them at the start. Every fan's status shows their order key
// (draw_index) in every state in which they hold a ticket: waiting for a
// draw, queued, let in (on the claim and on every answer to their pass
// after it), let in on the spot, and once the room has sold out; so each can
// check their place with verify-draw. The draw endpoint reveals the seed at
// the sell-out, when the report does, while its closed stays false: no
// pre-queue draw was made.
func TestCaddyRandomRoomShowsEveryFanTheirKey(t *testing.T) {
	clock := useTestClock(t)
	start := clock.Now().Add(time.Minute).UTC().Format(time.RFC3339)
	newCaddy(t, caddyConfig(t.TempDir(), fmt.Sprintf(`
	http://localhost:9080 {
		waiting_room {
			room rolling
			total_active_users 100
			new_users_per_minute 120
			event_start %s
			queueing_method random
		}
		respond "origin"
	}`, start)))
	type holder struct {
		f     *fan
		key   uint64
		shown map[waitingroom.State]bool
	}
	var fans []*holder
	// see polls a fan and checks that their status shows their key.
	see := func(h *holder) waitingroom.Status {
		t.Helper()
		st := h.f.status(base)
		if st.DrawIndex == nil || *st.DrawIndex != h.key {
			t.Fatalf("order key %d, state %s (awaiting_draw %v): draw_index %v, want the order key", h.key, st.State, st.AwaitingDraw, st.DrawIndex)
		}
		name := st.State
		if st.AwaitingDraw {
			name = "awaiting_draw"
		}
		h.shown[name] = true
		return st
	}
	join := func() *holder {
		t.Helper()
		h := &holder{f: newFan(t), key: uint64(len(fans)), shown: map[waitingroom.State]bool{}}
		fans = append(fans, h)
		see(h)
		return h
	}
	for range 4 {
		if st := see(join()); st.State != waitingroom.StatePrequeue {
			t.Fatalf("early registrant: %+v, want the pre-queue", st)
		}
	}
	drawInfo := func() map[string]any {
		t.Helper()
		resp, body := newFan(t).get(base + "/_waiting-room/draw")
		var d map[string]any
		if resp.StatusCode != http.StatusOK || json.Unmarshal([]byte(body), &d) != nil {
			t.Fatalf("draw endpoint: %d %s", resp.StatusCode, body)
		}
		return d
	}

	clock.step(t, 60) // the sale starts: epoch 1 places the registrants
	epochs, _ := drawInfo()["epochs"].([]any)
	if len(epochs) != 1 || epochs[0].(map[string]any)["start"] != 0.0 || epochs[0].(map[string]any)["count"] != 4.0 {
		t.Fatalf("draw endpoint after the start: epochs %v, want epoch 1 over the order keys 0-3", epochs)
	}
	for range 6 { // newcomers, waiting for the next draw
		if st := see(join()); !st.AwaitingDraw {
			t.Fatalf("newcomer: %+v, want awaiting_draw", st)
		}
	}
	for range 12 {
		for _, h := range fans {
			see(h)
		}
		clock.step(t, 1)
	}
	for _, h := range fans {
		if st := see(h); st.State != waitingroom.StateAdmitted {
			t.Fatalf("order key %d: %+v, want let in", h.key, st)
		}
	}
	clock.step(t, 5)
	if st := see(join()); st.State != waitingroom.StateAdmitted {
		t.Fatalf("a fan who finds nobody waiting: %+v, want let in on the spot", st)
	}
	seenQueued := false
	for _, h := range fans {
		seenQueued = seenQueued || h.shown[waitingroom.StateQueued]
	}
	if !fans[4].shown["awaiting_draw"] || !seenQueued {
		t.Fatalf("no fan was seen awaiting a draw and then queued: %v", fans[4].shown)
	}

	if d := drawInfo(); d["seed"] != nil || d["closed"] != false {
		t.Fatalf("draw endpoint while the sale runs: %v, want no seed", d)
	}
	if code, body := adminCall(t, http.MethodPost, "/waiting-room/rolling/sold-out", ""); code != http.StatusOK {
		t.Fatalf("sold-out: %d %s", code, body)
	}
	clock.step(t, 1)
	resp, body := newFan(t).get(base+"/_waiting-room/fairness", "Accept", "application/json")
	var rep waitingroom.FairnessReport
	if resp.StatusCode != http.StatusOK || json.Unmarshal([]byte(body), &rep) != nil || rep.Seed == "" {
		t.Fatalf("report at the sell-out: %d %s", resp.StatusCode, body)
	}
	if d := drawInfo(); d["seed"] != rep.Seed || d["closed"] != false {
		t.Fatalf("draw endpoint at the sell-out: %v, want the report's seed %s, and closed false (no pre-queue draw)", d, rep.Seed)
	}
	for _, h := range fans {
		see(h) // sold out, or still in: the key is there to check with
		out, err := verifyDraw(t, "--report", base+"/_waiting-room/fairness", "--draw-index", fmt.Sprint(h.key))
		if err != nil || !strings.Contains(out, "let in at ") {
			t.Fatalf("verify-draw for order key %d: %v\n%s", h.key, err, out)
		}
	}
	if out, _ := verifyDraw(t, "--report", base+"/_waiting-room/fairness", "--draw-index", "0"); !strings.Contains(out, "placed by rolling draw epoch 1 of order keys 0-3") {
		t.Fatalf("verify-draw for the first registrant:\n%s\nwant epoch 1 from order key 0", out)
	}
}
