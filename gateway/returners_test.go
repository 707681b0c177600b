package gateway

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/internal/redistest"
	"github.com/foyer-dev/foyer/waitingroom"
)

// A fan whose admission lapsed (let in, but not there within the grace) may
// come back at the front only within the room's return window, and only
// while the room admits. These tests bank such admissions as a scalper
// would, and cash them in while the room admits nobody, and hours later.

// returnersConfig is a room that starts with everyone held (queue_all), so
// that the test decides when the line moves.
func returnersConfig(storage, room, store, extra string) string {
	return caddyConfig(storage, fmt.Sprintf(`
	http://localhost:9080 {
		waiting_room {
			room %s
			new_users_per_minute 60
			queue_all
			%s
			%s
		}
		respond "origin"
	}`, room, store, extra))
}

// returnStatus is the part of the status JSON these tests read.
type returnStatus struct {
	State    waitingroom.State `json:"state"`
	Position *uint64           `json:"position"`
	Returned bool              `json:"returned"`
	Passed   bool              `json:"turn_passed"`
}

func (f *fan) returnStatus(t *testing.T) returnStatus {
	t.Helper()
	resp, body := f.get(base+"/_waiting-room/status", "Accept", "application/json")
	var st returnStatus
	if resp.StatusCode != http.StatusOK || json.Unmarshal([]byte(body), &st) != nil {
		t.Fatalf("status: %d %q", resp.StatusCode, body)
	}
	return st
}

// ticketKey is the order key in the fan's ticket, as the room reads it.
func (f *fan) ticketKey(t *testing.T, room string) uint64 {
	t.Helper()
	u, _ := url.Parse(base)
	var r *waitingroom.Room
	rooms.Range(func(_, v any) bool {
		if h := v.(*roomHandle); h.room.ID() == room {
			r = h.room
		}
		return r == nil
	})
	if r == nil {
		t.Fatalf("no room %s", room)
	}
	tk, err := r.OpenTicket(findJarCookie(f, u, "foyer_ticket"))
	if err != nil {
		t.Fatalf("ticket: %v", err)
	}
	return tk.Key
}

func patchRoom(t *testing.T, room, body string) {
	t.Helper()
	if code, resp := adminCall(t, http.MethodPatch, "/waiting-room/"+room, body); code != http.StatusOK {
		t.Fatalf("PATCH %s: %d %s", body, code, resp)
	}
}

// storesUnderTest runs fn against a room on the memory store and one on a
// private redis-server.
func storesUnderTest(t *testing.T, fn func(t *testing.T, store string)) {
	t.Run("memory", func(t *testing.T) { fn(t, "") })
	t.Run("redis", func(t *testing.T) {
		srv := redistest.StartServer(t, nil)
		fn(t, "store redis redis://"+srv.Addr)
	})
}

// TestCaddyLapsedFanNotLetInWhileHeld: a fan's admission lapses while a slot
// stays free. With queue_all on, their poll must not let them in: they are
// told the room is held, and that they came back (returned). Once the room
// admits again they wait at the front while the room is full, and take the
// next slot that frees, ahead of those who wait.
func TestCaddyLapsedFanNotLetInWhileHeld(t *testing.T) {
	storesUnderTest(t, func(t *testing.T, store string) {
		clock := useTestClock(t)
		room := "held-returner"
		newCaddy(t, returnersConfig(t.TempDir(), room, store, "total_active_users 2"))
		lapsed, in := newFan(t), newFan(t)
		if st := lapsed.returnStatus(t); st.State != waitingroom.StatePaused {
			t.Fatalf("first fan with queue_all on: %s, want paused", st.State)
		}
		in.returnStatus(t)
		patchRoom(t, room, `{"queue_all": false}`)
		clock.step(t, 2) // both are let in; only the second turns up
		if st := in.returnStatus(t); st.State != waitingroom.StateAdmitted {
			t.Fatalf("second fan: %s, want admitted", st.State)
		}
		clock.step(t, int(waitingroom.DefaultAdmissionGrace/time.Second))

		patchRoom(t, room, `{"queue_all": true}`)
		st := lapsed.returnStatus(t)
		if st.State == waitingroom.StateAdmitted {
			t.Fatal("a fan whose admission lapsed was let in while queue_all holds everyone")
		}
		if st.State != waitingroom.StatePaused || !st.Returned {
			t.Fatalf("lapsed fan with queue_all on: %+v, want paused and returned", st)
		}
		patchRoom(t, room, `{"queue_all": false, "paused": true}`)
		if st := lapsed.returnStatus(t); st.State != waitingroom.StatePaused || !st.Returned {
			t.Fatalf("lapsed fan while paused: %+v, want paused and returned", st)
		}
		// The room admits again, with one slot, which the second fan holds.
		patchRoom(t, room, `{"paused": false, "total_active_users": 1}`)
		if st := lapsed.returnStatus(t); st.State != waitingroom.StateQueued || !st.Returned || st.Position == nil || *st.Position != 0 {
			t.Fatalf("lapsed fan back while the room is full: %+v, want queued at the front, returned", st)
		}
		waiting := newFan(t)
		if st := waiting.returnStatus(t); st.State != waitingroom.StateQueued {
			t.Fatalf("newcomer: %s, want queued", st.State)
		}
		patchRoom(t, room, `{"total_active_users": 2}`)
		clock.step(t, 1)
		if st := lapsed.returnStatus(t); st.State != waitingroom.StateAdmitted {
			t.Fatalf("lapsed fan once a slot freed: %+v, want admitted", st)
		}
		if st := waiting.returnStatus(t); st.State == waitingroom.StateAdmitted {
			t.Fatal("the fan who waited went in with the returner in the one free slot")
		}
	})
}

// TestCaddyLapsedFanBackAfterHoursRejoins: a fan whose admission lapsed comes
// back three hours later, with a line waiting. They must not go to its front:
// their turn passed, and they are given a new place behind everyone waiting.
func TestCaddyLapsedFanBackAfterHoursRejoins(t *testing.T) {
	storesUnderTest(t, func(t *testing.T, store string) {
		clock := useTestClock(t)
		room := "late-returner"
		newCaddy(t, returnersConfig(t.TempDir(), room, store, "total_active_users 1\n\t\t\tsession_duration 24h"))
		lapsed, holder, waiting := newFan(t), newFan(t), newFan(t)
		for _, f := range []*fan{lapsed, holder, waiting} {
			f.returnStatus(t)
		}
		patchRoom(t, room, `{"queue_all": false}`)
		clock.step(t, 1) // the first fan is let in and is not there
		clock.step(t, int(waitingroom.DefaultAdmissionGrace/time.Second)+1)
		if st := holder.returnStatus(t); st.State != waitingroom.StateAdmitted {
			t.Fatalf("second fan once the first lapsed: %s, want admitted", st.State)
		}
		old := lapsed.ticketKey(t, room)
		behind := waiting.ticketKey(t, room)

		clock.Advance(3 * time.Hour)
		clock.step(t, 1)
		st := lapsed.returnStatus(t)
		if st.State == waitingroom.StateAdmitted || (st.Returned && st.Position != nil && *st.Position == 0) {
			t.Fatalf("fan whose admission lapsed 3 h ago: %+v, sent to the front", st)
		}
		if st.State != waitingroom.StateQueued || st.Returned || !st.Passed || st.Position == nil || *st.Position < 1 {
			t.Fatalf("fan whose admission lapsed 3 h ago: %+v, want a new place behind the one waiting, told their turn passed", st)
		}
		if k := lapsed.ticketKey(t, room); k <= behind || k == old {
			t.Fatalf("new key %d (was %d), want one behind the waiting fan's %d", k, old, behind)
		}
	})
}
