package gateway

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/foyer-dev/foyer/internal/redistest"
	"github.com/foyer-dev/foyer/waitingroom"
)

// Priority lanes (docs/line.md, "Priority lanes") on a real Caddy: two nodes
// of one room (two sites, told apart by their titles) share a Redis store;
// fans fill three lanes through both, and once the room admits, every
// second's admissions follow the weights within one step, each lane lets its
// fans in in the order they joined it, nobody's position rises, and the
// fairness report's lane check passes, as verify-lanes, from the report
// alone, agrees.
func TestCaddyLanesFollowTheirWeights(t *testing.T) {
	clock := useTestClock(t)
	srv := redistest.StartServer(t, nil)
	const room = "lanes"
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
		}
		respond "origin"
	}`, port, room, title, srv.Addr)
	}
	sites := node("9080", "node a") + node(strconv.Itoa(nodeBPort), "node b")
	newCaddy(t, caddyConfig(t.TempDir(), sites))
	nodes := []string{base, nodeBBase}
	// A code of many uses for each lane but the general one's, whose fans
	// send none.
	laneCode := map[string]string{"presale": "PRESALE-LANE", "members": "MEMBERS-LANE", "general": ""}
	if code, body := adminSend(t, http.MethodPost, "/waiting-room/"+room+"/codes", "text/csv",
		"code,lane,max_uses\nPRESALE-LANE,presale,100\nMEMBERS-LANE,members,100\n"); code != http.StatusCreated {
		t.Fatalf("adding the lanes' codes: %d %s", code, body)
	}

	type laneFan struct {
		f    *fan
		lane string
		key  uint64
		last uint64 // the last position shown
		in   int    // the step that let them in, 0 while waiting
	}
	lanes := []string{"presale", "members", "general"}
	const perLane = 12
	var fans []*laneFan
	for i := range perLane {
		for j, lane := range lanes {
			f := newFan(t)
			hdr := []string{"Accept", "application/json"}
			if c := laneCode[lane]; c != "" {
				hdr = append(hdr, "X-Waiting-Room-Code", c)
			}
			resp, body := f.get(nodes[(i+j)%2]+"/_waiting-room/status", hdr...)
			var st waitingroom.Status
			if resp.StatusCode != http.StatusOK || json.Unmarshal([]byte(body), &st) != nil || st.Position == nil {
				t.Fatalf("%s fan %d joining: %d %s", lane, i, resp.StatusCode, body)
			}
			if *st.Position != uint64(i) {
				t.Fatalf("%s fan %d joins at position %d; want %d (their lane's own line)", lane, i, *st.Position, i)
			}
			lf := &laneFan{f: f, lane: lane, key: f.ticketKey(t, room), last: *st.Position}
			if l, n := waitingroom.LaneOfPlace(lf.key); n != uint64(i) || (lane == "general") != (l == 0) {
				t.Fatalf("%s fan %d has place %d (lane %d, %d)", lane, i, lf.key, l, n)
			}
			fans = append(fans, lf)
		}
	}
	patchRoom(t, room, `{"queue_all": false}`)

	// Six a second: 3 presale, 2 members, 1 general while all three wait.
	admittedAt := map[string][]int{}
	for step := 1; step <= 40; step++ {
		clock.step(t, 1)
		waiting := 0
		for k, lf := range fans {
			if lf.in > 0 {
				continue
			}
			st := lf.f.requeueStatus(t, nodes[(step+k)%2])
			switch {
			case st.State == waitingroom.StateAdmitted:
				lf.in = step
				admittedAt[lf.lane] = append(admittedAt[lf.lane], step)
			case st.Position == nil || *st.Position > lf.last:
				t.Fatalf("step %d: %s fan %d's position went from %d to %v", step, lf.lane, lf.key, lf.last, st.Position)
			default:
				lf.last = *st.Position
				waiting++
			}
		}
		if waiting == 0 {
			break
		}
	}
	// FIFO within each lane: a fan is never let in after one who joined
	// their lane later.
	for i, a := range fans {
		for _, b := range fans[i+1:] {
			if a.lane == b.lane && (a.in == 0 || b.in != 0 && b.in < a.in) {
				t.Fatalf("%s: place %d let in at step %d, place %d at step %d", a.lane, a.key, a.in, b.key, b.in)
			}
		}
	}
	rep, body := soldOutLaneReport(t, clock, room)
	checkLaneShares(t, rep, perLane, 3)
	for lane, at := range admittedAt {
		if len(at) != perLane {
			t.Errorf("%s: %d let in, want all %d", lane, len(at), perLane)
		}
	}
	path := filepath.Join(t.TempDir(), "report.json")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := runRegistered(t, "verify-lanes", "--report", path)
	if err != nil || !strings.HasSuffix(out, "ok\n") || !strings.Contains(out, "lanes general=1 members=2 presale=3 match the commitment") {
		t.Fatalf("verify-lanes: %v\n%s", err, out)
	}
	// A report whose split was tampered with fails.
	rep.Lanes.Steps[0].Shares[0].Admitted, rep.Lanes.Steps[0].Shares[2].Admitted = rep.Lanes.Steps[0].Shares[0].Admitted+1, rep.Lanes.Steps[0].Shares[2].Admitted-1
	bad, _ := json.Marshal(rep)
	if err := os.WriteFile(path, bad, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := runRegistered(t, "verify-lanes", "--report", path); err == nil || !strings.Contains(out, "problem: step 0") {
		t.Fatalf("verify-lanes of a tampered report: %v\n%s", err, out)
	}
}

// soldOutLaneReport declares room sold out and reads its fairness report,
// once a node published it (both learn of the sell-out within a refresh),
// with the report's lanes.
func soldOutLaneReport(t *testing.T, clock *testClock, room string) (waitingroom.FairnessReport, string) {
	t.Helper()
	patchRoom(t, room, `{"sold_out": true}`)
	resp, body := newFan(t).get(base+"/_waiting-room/fairness", "Accept", "application/json")
	for try := 0; resp.StatusCode == http.StatusNotFound && try < 5; try++ {
		clock.step(t, 1)
		resp, body = newFan(t).get(base+"/_waiting-room/fairness", "Accept", "application/json")
	}
	var rep waitingroom.FairnessReport
	if resp.StatusCode != http.StatusOK || json.Unmarshal([]byte(body), &rep) != nil || rep.Lanes == nil {
		t.Fatalf("fairness report: %d %s", resp.StatusCode, body)
	}
	return rep, body
}

// checkLaneShares checks a report of the lanes presale=3 members=2
// general=1, each of perLane fans: its lane check passes; in every step
// with all three lanes waiting (at least minFull of them), 1 general, 2
// members and 3 presale were let in, within one; every lane let in all its
// fans.
func checkLaneShares(t *testing.T, rep waitingroom.FairnessReport, perLane uint64, minFull int) {
	t.Helper()
	if c := rep.Lanes.Check; !c.OK || !c.InOrder || c.Steps == 0 || c.MaxDeviation > float64(c.MaxStep)+1 {
		t.Fatalf("the report's lane check: %+v", c)
	}
	full := 0
	for _, e := range rep.Lanes.Steps {
		if len(e.Shares) != 3 || e.Shares[0].Waiting == 0 || e.Shares[1].Waiting < 2 || e.Shares[2].Waiting < 3 {
			continue
		}
		full++
		for i, want := range []uint64{1, 2, 3} {
			if got := e.Shares[i].Admitted; got+1 < want || got > want+1 {
				t.Errorf("step at %s gave lane %d %d; want %d within one", e.At, i, got, want)
			}
		}
	}
	if full < minFull {
		t.Errorf("only %d steps with every lane waiting: %+v", full, rep.Lanes.Steps)
	}
	for i, lane := range []string{"general", "members", "presale"} {
		if l := rep.Lanes.Lanes[i]; l.Name != lane || l.Admitted != perLane {
			t.Errorf("lane %d in the report: %s let in %d; want %s let in %d", i, l.Name, l.Admitted, lane, perLane)
		}
	}
}
