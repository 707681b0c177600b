package integration

import (
	"net/http"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/gateway"
	"github.com/foyer-dev/foyer/internal/redistest"
	"github.com/foyer-dev/foyer/waitingroom"
)

// TestMultiNodeAdminOnRedis: an admin change made through node A's admin API
// is in force on node B, which shares A's Redis, after B's next refresh (half
// a second): B tells its fans the room is paused and stops admitting; a new
// rate set on A is the one B admits at; a change A refuses leaves B alone.
func TestMultiNodeAdminOnRedis(t *testing.T) {
	t.Parallel()
	clock := newTestClock()
	shared := redistest.Shared(t)
	prefix := redistest.Prefix(t, shared)
	dial := sharedDial(shared)
	key := deploymentKey(t)
	cfg := gateway.Handler{Room: "admin-redis", Settings: waitingroom.Settings{TotalActiveUsers: 100, NewUsersPerMinute: 60}}
	a := newNode(t, clock.Now, cfg, redisNodeStore(t, dial, prefix), key)
	b := newNode(t, clock.Now, cfg, redisNodeStore(t, dial, prefix), key)
	nodes := []*node{a, b}
	tr := sharedTransport(t)
	walkIn(t, b, tr)
	fans := joinLine(t, nodes, tr, "fan", 6, 0)
	step(t, clock, nodes) // fan0 is admitted: the rate's one a second
	serving := b.room().Snapshot().Serving

	adminOK(t, adminCall(t, gateway.StandaloneAdmin(a.room()), http.MethodPatch, "/waiting-room/admin-redis", `{"paused": true}`))
	halfTick(t, clock, b)
	if st := fans[1].status(t, b); st.State != waitingroom.StatePaused {
		t.Fatalf("a waiting fan on node B half a second after A paused the room: %s", st.State)
	}
	resp, body, err := newVisitor(tr).get(b.url+"/events/42", true)
	if err != nil || resp.StatusCode != http.StatusOK || !jsonState(body, waitingroom.StatePaused) {
		t.Fatalf("a newcomer on node B: %v %d %s, want paused", err, code(resp), body)
	}
	halfTick(t, clock, b) // a new second: B steps the controller, paused
	if got := b.room().Snapshot().Serving; got != serving {
		t.Fatalf("node B admitted up to %d while paused (was %d)", got, serving)
	}

	// A bad change through A is refused and reaches nobody.
	rec := adminCall(t, gateway.StandaloneAdmin(a.room()), http.MethodPatch, "/waiting-room/admin-redis", `{"paused": false, "total_active_users": 0}`)
	if rec.Code != http.StatusBadRequest || adminError(t, rec).Error != "invalid_setting" {
		t.Fatalf("bad patch: %d %s, want 400 invalid_setting", rec.Code, rec.Body)
	}
	halfTick(t, clock, b)
	halfTick(t, clock, b)
	if s := b.room().Settings(); !s.Paused || s.TotalActiveUsers != 100 || b.room().Snapshot().Serving != serving {
		t.Fatalf("node B after a refused change: paused %v, cap %d, serving %d", s.Paused, s.TotalActiveUsers, b.room().Snapshot().Serving)
	}

	// Resumed at ten a second through A: once B has refreshed, its step
	// admits everyone waiting at once, where one a second would let in one.
	adminOK(t, adminCall(t, gateway.StandaloneAdmin(a.room()), http.MethodPatch, "/waiting-room/admin-redis", `{"paused": false, "new_users_per_minute": 600}`))
	halfTick(t, clock, b)
	halfTick(t, clock, b)
	s := b.room().Snapshot()
	if s.Serving != s.Seq {
		t.Fatalf("node B's step after A set ten a second: serving %d, %d keys out; want everyone admitted", s.Serving, s.Seq)
	}
	for _, f := range fans[1:] {
		if st := f.status(t, b); st.State != waitingroom.StateAdmitted {
			t.Fatalf("%s: %s, want admitted", f.name, st.State)
		}
	}
}

// halfTick moves the clock half a second and ticks n alone: a refresh, and a
// controller step when a new second began.
func halfTick(t *testing.T, clock *testClock, n *node) {
	t.Helper()
	clock.Advance(500 * time.Millisecond)
	if err := tickAll([]*node{n}); err != nil {
		t.Fatal(err)
	}
}
