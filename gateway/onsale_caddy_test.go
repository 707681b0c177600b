package gateway

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/internal/redistest"
	"github.com/foyer-dev/foyer/waitingroom"
)

// TestCaddyThreePhaseSale is a tour's on-sale as operators run one, on two
// nodes sharing Redis: a presale for presale-code holders, then a members'
// window, then the public sale, in phases (docs/configuration.md, "Phases"),
// over three lanes (docs/line.md, "Priority lanes") filled by access codes
// (docs/codes.md). In the presale and the members' window a fan without a
// code gets no place and is told when the public sale opens; code holders
// join their lanes on either node. The line is held until the public sale,
// and then admits every lane by its weights within a step; through every
// switch nobody's position rises, each lane lets its fans in in the order
// they joined it, and the fairness report's lane check passes.
func TestCaddyThreePhaseSale(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Caddy and redis-server")
	}
	srv := redistest.StartServer(t, nil)
	clock := useTestClock(t)
	const room = "tour"
	t0 := clock.Now()
	presale, members, public := t0.Add(5*time.Second), t0.Add(15*time.Second), t0.Add(25*time.Second)
	stamp := func(at time.Time) string { return at.UTC().Format(time.RFC3339) }
	node := func(port, title string) string {
		return fmt.Sprintf(`
	http://localhost:%s {
		waiting_room {
			room %s
			title "%s"
			store redis redis://%s
			lanes presale=3 members=2 general=1
			new_users_per_minute 360
			total_active_users 1000
			queue_all
			phase presale {
				start %s
				end %s
				title "Presale"
				codes_required
			}
			phase members {
				start %s
				end %s
				title "Members"
				codes_required
			}
			phase public {
				start %s
				end %s
				title "Public sale"
			}
		}
		respond "origin"
	}`, port, room, title, srv.Addr, stamp(presale), stamp(members), stamp(members), stamp(public), stamp(public), stamp(public.Add(time.Hour)))
	}
	newCaddy(t, caddyConfig(t.TempDir(), node("9080", "node a")+node(strconv.Itoa(nodeBPort), "node b")))
	nodes := []string{base, nodeBBase}
	if code, body := adminSend(t, http.MethodPost, "/waiting-room/"+room+"/codes", "text/csv",
		"code,lane,max_uses\nPRESALE-TOUR,presale,100\nMEMBERS-TOUR,members,100\n"); code != http.StatusCreated {
		t.Fatalf("adding the codes: %d %s", code, body)
	}

	type saleFan struct {
		f          *fan
		lane       string
		key        uint64
		last       uint64
		in         int
		joinedStep int
	}
	var fans []*saleFan
	join := func(lane, code string, i int) {
		t.Helper()
		f := newFan(t)
		hdr := []string{"Accept", "application/json"}
		if code != "" {
			hdr = append(hdr, "X-Waiting-Room-Code", code)
		}
		resp, body := f.get(nodes[i%2]+"/_waiting-room/status", hdr...)
		var st waitingroom.Status
		if resp.StatusCode != http.StatusOK || json.Unmarshal([]byte(body), &st) != nil || st.Position == nil {
			t.Fatalf("%s fan %d joining at %s: %d %s", lane, i, clock.Now().Sub(t0), resp.StatusCode, body)
		}
		fans = append(fans, &saleFan{f: f, lane: lane, key: f.ticketKey(t, room), last: *st.Position})
	}
	// refusedWithoutCode checks that a fan without a code gets no place,
	// and is told the public sale's start.
	refusedWithoutCode := func(i int) {
		t.Helper()
		f := newFan(t)
		resp, body := f.get(nodes[i%2]+"/_waiting-room/status", "Accept", "application/json")
		var st waitingroom.Status
		if json.Unmarshal([]byte(body), &st) != nil || st.State != waitingroom.StateCodeRequired || st.OpensAt == nil || !st.OpensAt.Equal(public) {
			t.Fatalf("a fan without a code at %s, through node %d: %d %s; want code_required, opening at %s", clock.Now().Sub(t0), i%2, resp.StatusCode, body, stamp(public))
		}
		if u, _ := url.Parse(nodes[i%2]); findJarCookie(f, u, "foyer_ticket") != "" {
			t.Fatalf("a fan without a code at %s was handed a ticket", clock.Now().Sub(t0))
		}
	}
	// polls checks every waiting fan's position through alternate nodes,
	// and notes who was let in at step.
	polls := func(step int) (waiting int) {
		t.Helper()
		for k, sf := range fans {
			if sf.in > 0 {
				continue
			}
			st := sf.f.requeueStatus(t, nodes[(step+k)%2])
			switch {
			case st.State == waitingroom.StateAdmitted:
				sf.in = step
			case st.Position == nil || *st.Position > sf.last:
				t.Fatalf("at %s: %s fan %d's position went from %d to %v", clock.Now().Sub(t0), sf.lane, sf.key, sf.last, st.Position)
			default:
				sf.last = *st.Position
				waiting++
			}
		}
		return waiting
	}

	const perLane = 9
	step := 0
	clock.step(t, 5) // the presale opens
	refusedWithoutCode(0)
	for i := range perLane {
		join("presale", "PRESALE-TOUR", i)
	}
	refusedWithoutCode(1)
	for ; clock.Now().Before(members); step++ {
		clock.step(t, 1)
		polls(step)
	}
	// The members' window: still no place without a code.
	refusedWithoutCode(0)
	for i := range perLane {
		join("members", "MEMBERS-TOUR", i)
	}
	for ; clock.Now().Before(public); step++ {
		clock.step(t, 1)
		polls(step)
	}
	// The public sale: a fan with no code joins the general lane.
	for i := range perLane {
		join("general", "", i)
	}
	for _, sf := range fans {
		if sf.in != 0 {
			t.Fatalf("%s fan %d let in at step %d while the line was held", sf.lane, sf.key, sf.in)
		}
	}
	patchRoom(t, room, `{"queue_all": false}`)
	for end := step + 30; step < end; step++ {
		clock.step(t, 1)
		if polls(step) == 0 {
			break
		}
	}
	for i, a := range fans {
		if a.in == 0 {
			t.Fatalf("%s fan %d was never let in", a.lane, a.key)
		}
		for _, b := range fans[i+1:] {
			if a.lane == b.lane && b.in < a.in {
				t.Fatalf("%s: place %d let in at step %d, after place %d at step %d", a.lane, a.key, a.in, b.key, b.in)
			}
		}
	}
	rep, _ := soldOutLaneReport(t, clock, room)
	checkLaneShares(t, rep, perLane, 2)
}
