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
	"time"

	"github.com/foyer-dev/foyer/internal/redistest"
	"github.com/foyer-dev/foyer/waitingroom"
)

// A phase's own lane weights (docs/line.md, "Priority lanes") on a real
// Caddy: two nodes of one room share a Redis store; the presale phase lets
// in the presale lane alone (general=0), the public phase shares by
// presale=1 general=2. Fans of both lanes wait through the presale; no
// general fan goes in before the public phase, nobody's position rises
// across the switch, every step of the report was split by the weights of
// the phase in force at it, the report's per-phase lane check passes, and
// verify-lanes passes on the report and fails on one whose phase weights
// were changed after the fact.
func TestCaddyPhaseLaneWeights(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Caddy and redis-server")
	}
	srv := redistest.StartServer(t, nil)
	clock := useTestClock(t)
	const room = "phaselanes"
	t0 := clock.Now()
	presale, public := t0.Add(5*time.Second), t0.Add(9*time.Second)
	stamp := func(at time.Time) string { return at.UTC().Format(time.RFC3339) }
	node := func(port, title string) string {
		return fmt.Sprintf(`
	http://localhost:%s {
		waiting_room {
			room %s
			title "%s"
			store redis redis://%s
			lanes presale=3 general=1
			new_users_per_minute 180
			total_active_users 1000
			phase presale {
				start %s
				end %s
				lanes presale=1 general=0
			}
			phase public {
				start %s
				end %s
				lanes presale=1 general=2
			}
		}
		respond "origin"
	}`, port, room, title, srv.Addr, stamp(presale), stamp(public), stamp(public), stamp(public.Add(time.Hour)))
	}
	newCaddy(t, caddyConfig(t.TempDir(), node("9080", "node a")+node(strconv.Itoa(nodeBPort), "node b")))
	nodes := []string{base, nodeBBase}
	if code, body := adminSend(t, http.MethodPost, "/waiting-room/"+room+"/codes", "text/csv",
		"code,lane,max_uses\nPRESALE-PL,presale,100\n"); code != http.StatusCreated {
		t.Fatalf("adding the codes: %d %s", code, body)
	}
	type laneFan struct {
		f    *fan
		lane string
		key  uint64
		last uint64
		in   time.Time
	}
	var fans []*laneFan
	clock.step(t, 5) // the presale opens
	const perLane = 12
	for i := range perLane {
		for j, lane := range []string{"presale", "general"} {
			f := newFan(t)
			hdr := []string{"Accept", "application/json"}
			if lane == "presale" {
				hdr = append(hdr, "X-Waiting-Room-Code", "PRESALE-PL")
			}
			resp, body := f.get(nodes[(i+j)%2]+"/_waiting-room/status", hdr...)
			var st waitingroom.Status
			if resp.StatusCode != http.StatusOK || json.Unmarshal([]byte(body), &st) != nil {
				t.Fatalf("%s fan %d joining: %d %s", lane, i, resp.StatusCode, body)
			}
			lf := &laneFan{f: f, lane: lane, key: f.ticketKey(t, room)}
			if st.State == waitingroom.StateAdmitted {
				lf.in = clock.Now()
			} else if st.Position != nil {
				lf.last = *st.Position
			}
			fans = append(fans, lf)
		}
	}
	// The draw endpoint published each phase's weights and their
	// commitment before the phase started.
	var info waitingroom.DrawInfo
	if resp, body := newFan(t).get(base+"/_waiting-room/draw", "Accept", "application/json"); resp.StatusCode != http.StatusOK || json.Unmarshal([]byte(body), &info) != nil {
		t.Fatalf("draw endpoint: %d %s", resp.StatusCode, body)
	}
	if len(info.LanePhases) != 2 || info.LanePhases[1].Weights != "general=2 presale=1" ||
		info.LanePhases[1].Commitment != waitingroom.LaneCommitment("general=2 presale=1") ||
		info.LanePhases[1].CommittedAt == nil || !info.LanePhases[1].CommittedAt.Before(public) ||
		info.LanePhases[0].CommittedAt == nil || !info.LanePhases[0].CommittedAt.Before(presale) {
		t.Fatalf("the draw endpoint's phase lanes: %+v", info.LanePhases)
	}
	// What an admin PATCH changing the running phase's lanes gets: 400
	// invalid_setting, and the weights stay as committed.
	phasesJSON := func(presaleLanes string) string {
		return fmt.Sprintf(`{"phases":[{"name":"presale","start":%q,"end":%q,"lanes":%q},{"name":"public","start":%q,"end":%q,"lanes":"presale=1 general=2"}]}`,
			stamp(presale), stamp(public), presaleLanes, stamp(public), stamp(public.Add(time.Hour)))
	}
	if code, body := adminSend(t, http.MethodPatch, "/waiting-room/"+room, "application/json", phasesJSON("presale=1 general=1")); code != http.StatusBadRequest ||
		!strings.Contains(body, `"invalid_setting"`) || !strings.Contains(body, `phase \"presale\" is running`) {
		t.Fatalf("PATCH of the running phase's lanes: %d %s; want 400 invalid_setting", code, body)
	}
	// The same weights, written again, are no change.
	if code, body := adminSend(t, http.MethodPatch, "/waiting-room/"+room, "application/json", phasesJSON("presale=1 general=0")); code != http.StatusOK {
		t.Fatalf("PATCH of the phases as they are: %d %s", code, body)
	}
	for step := 0; step < 30; step++ {
		clock.step(t, 1)
		waiting := 0
		for k, lf := range fans {
			if !lf.in.IsZero() {
				continue
			}
			st := lf.f.requeueStatus(t, nodes[(step+k)%2])
			switch {
			case st.State == waitingroom.StateAdmitted:
				lf.in = clock.Now()
				if lf.lane == "general" && clock.Now().Before(public) {
					t.Fatalf("general fan %d let in at %s, in the presale, whose general weight is 0", lf.key, clock.Now().Sub(t0))
				}
			case st.Position == nil || *st.Position > lf.last:
				t.Fatalf("at %s: %s fan %d's position went from %d to %v", clock.Now().Sub(t0), lf.lane, lf.key, lf.last, st.Position)
			default:
				lf.last = *st.Position
				waiting++
			}
		}
		if waiting == 0 {
			break
		}
	}
	for _, lf := range fans {
		if lf.in.IsZero() {
			t.Fatalf("%s fan %d was never let in", lf.lane, lf.key)
		}
	}

	rep, body := soldOutLaneReport(t, clock, room)
	lr := rep.Lanes
	if c := lr.Check; !c.OK || !c.InOrder || c.Steps == 0 {
		t.Fatalf("the report's lane check: %+v", c)
	}
	if len(lr.Phases) != 2 || lr.Phases[0].Weights != "general=0 presale=1" || lr.Phases[1].Weights != "general=2 presale=1" {
		t.Fatalf("the report's phases: %+v", lr.Phases)
	}
	// Each step was split by the weights of the phase in force at it; in
	// the public phase, with both lanes waiting, general took twice
	// presale's share, within one.
	var inPresale, bothPublic int
	for _, e := range lr.Steps {
		switch {
		case e.At.Before(public):
			inPresale++
			if e.Weights != lr.Phases[0].Weights || e.Shares[0].Admitted != 0 {
				t.Errorf("presale step at %s: weights %q, general let in %d", e.At, e.Weights, e.Shares[0].Admitted)
			}
		default:
			if e.Weights != lr.Phases[1].Weights {
				t.Errorf("public step at %s: weights %q", e.At, e.Weights)
			}
			if e.Shares[0].Waiting > e.Shares[0].Admitted && e.Shares[1].Waiting > e.Shares[1].Admitted {
				bothPublic++
				if g, p := e.Shares[0].Admitted, e.Shares[1].Admitted; g+1 < 2*p || g > 2*p+2 {
					t.Errorf("public step at %s gave general %d, presale %d; want twice as many general", e.At, g, p)
				}
			}
		}
	}
	if inPresale == 0 || bothPublic == 0 {
		t.Errorf("%d presale steps, %d public steps with both lanes waiting; want some of each: %+v", inPresale, bothPublic, lr.Steps)
	}
	if p := lr.Phases[0].Lanes; p[0].Admitted != 0 || p[1].Admitted == 0 {
		t.Errorf("the presale let in %+v; want presale fans only", p)
	}

	path := filepath.Join(t.TempDir(), "report.json")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := runRegistered(t, "verify-lanes", "--report", path)
	if err != nil || !strings.HasSuffix(out, "ok\n") || !strings.Contains(out, "phase public") {
		t.Fatalf("verify-lanes: %v\n%s", err, out)
	}
	// A commitment dated at or after its phase's start fails the check.
	at := lr.Phases[1].Start
	lr.Phases[1].CommittedAt = &at
	late, _ := json.Marshal(rep)
	if err := os.WriteFile(path, late, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := runRegistered(t, "verify-lanes", "--report", path); err == nil || !strings.Contains(out, "problem: phase public: the weights were committed at") {
		t.Fatalf("verify-lanes of a report with a late commitment: %v\n%s", err, out)
	}
	// Weights published for the public phase other than those its steps
	// split by fail the check, whatever their commitment says.
	lr.Phases[1].CommittedAt = lr.Phases[0].CommittedAt
	lr.Phases[1].Weights = "general=1 presale=1"
	bad, _ := json.Marshal(rep)
	if err := os.WriteFile(path, bad, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := runRegistered(t, "verify-lanes", "--report", path); err == nil || !strings.Contains(out, `the weights in force then are "general=1 presale=1"`) {
		t.Fatalf("verify-lanes of a tampered report: %v\n%s", err, out)
	}
}
