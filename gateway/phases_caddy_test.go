package gateway

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/internal/redistest"
	"github.com/foyer-dev/foyer/waitingroom"
)

// phaseBlock is a phase "wide" from start to an hour later that raises the
// cap to 6 and the rate to 600/min.
func phaseBlock(start time.Time) string {
	return fmt.Sprintf(`phase wide {
				start %s
				end %s
				total_active_users 6
				new_users_per_minute 600
			}`, start.UTC().Format(time.RFC3339), start.Add(time.Hour).UTC().Format(time.RFC3339))
}

// phaseRooms are the handles of room in this process: one per node.
func phaseRooms(t *testing.T, room string) []*waitingroom.Room {
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

// TestCaddyPhaseSwitchOnTwoNodes: two nodes of a room on one Redis switch
// to the phase "wide" at the same instant of the time they pass the store:
// a second before its start both run at the room's cap and rate, at its
// start both at the phase's; the line then moves at the new limits, never
// past the new cap, and no fan's position ever rises, through either node.
// The admin API shows the phase in force and the next one.
func TestCaddyPhaseSwitchOnTwoNodes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Caddy and redis-server")
	}
	srv := redistest.StartServer(t, nil)
	clock := useTestClock(t)
	room := "phased"
	start := clock.Now().Add(10 * time.Second)
	// A room of 1 slot at 60/min on two nodes (requeueConfig), on Redis.
	newCaddy(t, requeueConfig(t.TempDir(), room, "store redis redis://"+srv.Addr, phaseBlock(start)))
	nodes := []string{base, nodeBBase}
	var fans []*fan
	for i := range 12 {
		f := newFan(t)
		f.requeueStatus(t, nodes[i%2])
		fans = append(fans, f)
	}
	positions := make([]uint64, len(fans))
	admitted := 0
	look := func() {
		t.Helper()
		admitted = 0
		for i, f := range fans {
			for _, node := range nodes {
				st := f.requeueStatus(t, node)
				switch {
				case st.State == waitingroom.StateAdmitted:
					positions[i] = 0
					admitted++
				case st.Position != nil:
					if positions[i] != 0 && *st.Position > positions[i] {
						t.Fatalf("fan %d through %s: position rose from %d to %d", i, node, positions[i], *st.Position)
					}
					positions[i] = *st.Position
				}
			}
		}
		admitted /= len(nodes)
	}
	look()
	for clock.Now().Before(start.Add(-time.Second)) {
		clock.step(t, 1)
		look()
	}
	for i, r := range phaseRooms(t, room) {
		if in := r.Info(); in.Settings.TotalActiveUsers != 1 || in.Settings.NewUsersPerMinute != 60 || in.CurrentPhase != nil || in.NextPhase == nil {
			t.Fatalf("node %d a second before the phase: cap %d, rate %d, phase %v", i, in.Settings.TotalActiveUsers, in.Settings.NewUsersPerMinute, in.CurrentPhase)
		}
	}
	if admitted > 1 {
		t.Fatalf("%d fans admitted under a cap of 1", admitted)
	}
	clock.step(t, 1)
	for i, r := range phaseRooms(t, room) {
		if in := r.Info(); in.Settings.TotalActiveUsers != 6 || in.Settings.NewUsersPerMinute != 600 || in.CurrentPhase == nil || in.CurrentPhase.Name != "wide" {
			t.Fatalf("node %d at the phase's start: cap %d, rate %d, phase %v", i, in.Settings.TotalActiveUsers, in.Settings.NewUsersPerMinute, in.CurrentPhase)
		}
	}
	code, body := adminCall(t, http.MethodGet, "/waiting-room/"+room, "")
	var view struct {
		CurrentPhase *phaseView `json:"current_phase"`
		NextPhase    *phaseView `json:"next_phase"`
	}
	if code != http.StatusOK || json.Unmarshal([]byte(body), &view) != nil || view.CurrentPhase == nil || view.CurrentPhase.Name != "wide" ||
		!view.CurrentPhase.Start.Equal(start) || view.NextPhase != nil {
		t.Fatalf("admin view: %d %s", code, body)
	}
	for range 5 {
		clock.step(t, 1)
		look()
		for _, r := range phaseRooms(t, room) {
			if snap := r.Snapshot(); snap.Active+snap.Pending > 6 {
				t.Fatalf("cap 6 exceeded: %d active, %d pending", snap.Active, snap.Pending)
			}
		}
	}
	if admitted <= 1 || admitted > 6 {
		t.Fatalf("%d fans admitted in the wide phase; want more than 1, at most 6", admitted)
	}
}
