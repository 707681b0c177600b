package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// phaseJSON is one phase of a PATCH body, from T0+from to T0+to minutes,
// with more fields after its times.
func phaseJSON(name string, from, to int, more string) string {
	t0 := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	at := func(m int) string { return t0.Add(time.Duration(m) * time.Minute).Format(time.RFC3339) }
	s := fmt.Sprintf(`{"name":%q,"start":%q,"end":%q`, name, at(from), at(to))
	if more != "" {
		s += "," + more
	}
	return s + "}"
}

// TestAdminPatchBadPhases says what each bad list of phases gets from the
// admin API: 400 invalid_setting, naming the phase and what is wrong, and
// nothing changed.
func TestAdminPatchBadPhases(t *testing.T) {
	var nine []string
	for i := range 9 {
		nine = append(nine, phaseJSON(fmt.Sprintf("p%d", i), 10*i, 10*i+5, ""))
	}
	cases := []struct{ name, phases, mention string }{
		{"an object", phaseJSON("a", 0, 10, ""), "phases: must be an array of phases"},
		{"a string", `"presale"`, "phases: must be an array of phases"},
		{"no name", `[{"start":"2026-06-01T10:00:00Z","end":"2026-06-01T11:00:00Z"}]`, "phases: phase 1: needs a name"},
		{"bad name", "[" + phaseJSON("Pre Sale", 0, 10, "") + "]", `phase name "Pre Sale": 1 to 32 of a-z, 0-9, _ and -`},
		{"same name", "[" + phaseJSON("a", 0, 10, "") + "," + phaseJSON("a", 20, 30, "") + "]", `phase "a": named twice`},
		{"nine", "[" + strings.Join(nine, ",") + "]", "at most 8 phases, got 9"},
		{"end before start", "[" + phaseJSON("a", 10, 0, "") + "]", `phase "a": start must be before end`},
		{"no end", `[{"name":"a","start":"2026-06-01T10:00:00Z"}]`, `phase "a": needs end`},
		{"bad time", `[{"name":"a","start":"10am","end":"2026-06-01T11:00:00Z"}]`, `phase "a": start: "10am" is not an RFC 3339 time`},
		{"overlap", "[" + phaseJSON("a", 0, 30, "") + "," + phaseJSON("b", 20, 40, "") + "]", `phase "b" overlaps phase "a"`},
		{"not at runtime", "[" + phaseJSON("a", 0, 10, `"admission_grace":"1m"`) + "]", `phase "a": admission_grace cannot change while the room runs`},
		{"a switch", "[" + phaseJSON("a", 0, 10, `"sold_out":true`) + "]", `phase "a": sold_out is a switch an admin throws`},
		{"the schedule", "[" + phaseJSON("a", 0, 10, `"event_start":"2026-06-01T10:00:00Z"`) + "]", `phase "a": event_start is the room's schedule`},
		{"unknown setting", "[" + phaseJSON("a", 0, 10, `"colour":"blue"`) + "]", `phase "a": "colour" is not a setting`},
		{"wrong type", "[" + phaseJSON("a", 0, 10, `"total_active_users":"many"`) + "]", `phase "a": total_active_users: must be a whole number`},
		{"out of bounds", "[" + phaseJSON("a", 0, 10, `"new_users_per_minute":0`) + "]", `phase "a": new_users_per_minute: must be between 1 and`},
		{"lanes of no weight", "[" + phaseJSON("a", 0, 10, `"lanes":"presale=0 general=0"`) + "]", `phase "a": lanes: at least one lane needs a weight above 0`},
		{"bad lanes", "[" + phaseJSON("a", 0, 10, `"lanes":"presale"`) + "]", `phase "a": lanes: "presale" is not <lane>=<weight>`},
		// The room's lanes are the union of the room's and every phase's.
		{"too many lanes", "[" + phaseJSON("a", 0, 10, `"lanes":"a=1 b=1 c=1 d=1"`) + "," + phaseJSON("b", 20, 30, `"lanes":"e=1 f=1 g=1 h=1"`) + "]",
			`phase "a": lanes: the room's and its phases' lanes together are 9, at most 8 (general included)`},
		// A phase's own pre-queue (docs/configuration.md, "Phases").
		{"shuffle without a pre-queue", "[" + phaseJSON("a", 0, 10, `"shuffle_at_start":true`) + "]", `phase "a": shuffle_at_start needs prequeue_start`},
		{"shuffle not a flag", "[" + phaseJSON("a", 0, 10, `"shuffle_at_start":"yes"`) + "]", `phase "a": shuffle_at_start: must be true or false`},
		{"pre-queue bad time", "[" + phaseJSON("a", 0, 10, `"prequeue_start":"soon"`) + "]", `phase "a": prequeue_start: "soon" is not an RFC 3339 time`},
		{"pre-queue after the start", "[" + phaseJSON("a", 0, 10, `"prequeue_start":"2026-06-01T10:05:00Z"`) + "]",
			`phase "a": prequeue_start 2026-06-01T10:05:00Z must be before the phase's start`},
		{"pre-queue before the previous start", "[" + phaseJSON("a", 10, 20, "") + "," + phaseJSON("b", 30, 40, `"prequeue_start":"2026-06-01T10:05:00Z","shuffle_at_start":true`) + "]",
			`phase "b": prequeue_start 2026-06-01T10:05:00Z must be after the start of phase "a"`},
	}
	e := newAdminEnv(t, nil)
	r := e.node("concert", waitingroom.Settings{})
	a := adminFor(r)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := call(t, a, http.MethodPatch, "/waiting-room/concert", `{"phases": `+tc.phases+`}`)
			if rec.Code != http.StatusBadRequest {
				t.Fatalf("got %d %s, want 400", rec.Code, rec.Body)
			}
			if got := decodeAPIError(t, rec); got.Error != "invalid_setting" || !strings.Contains(got.Message, tc.mention) {
				t.Errorf("got %+v, want invalid_setting mentioning %q", got, tc.mention)
			}
			if data, version, _ := e.store.Overrides(context.Background(), "concert"); version != 0 || len(data) != 0 {
				t.Errorf("the store's overrides changed: %s v%d", data, version)
			}
		})
	}
}

// TestAdminPatchPhases: phases set through the admin API are in force on
// every node from their start; the room's view, the command line's status
// and the audit trail (old and new lists) show them; [] removes them.
func TestAdminPatchPhases(t *testing.T) {
	e := newAdminEnv(t, nil)
	nodeA := e.node("concert", waitingroom.Settings{Title: "Tour", NewUsersPerMinute: 600})
	nodeB := e.node("concert", waitingroom.Settings{Title: "Tour", NewUsersPerMinute: 600})
	a := adminFor(nodeA)
	list := "[" + phaseJSON("presale", 1, 10, `"new_users_per_minute":60,"title":"Presale"`) + "," + phaseJSON("general", 10, 60, `"total_active_users":50`) + "]"
	v := decodeView(t, call(t, a, http.MethodPatch, "/waiting-room/concert", `{"phases": `+list+`}`))
	if v.CurrentPhase != nil || v.NextPhase == nil || v.NextPhase.Name != "presale" || v.Settings.NewUsersPerMinute != 600 {
		t.Fatalf("before presale: current %+v next %+v rate %d", v.CurrentPhase, v.NextPhase, v.Settings.NewUsersPerMinute)
	}
	e.step(60, nodeA, nodeB)
	for i, r := range []*waitingroom.Room{nodeA, nodeB} {
		if in := r.Info(); in.CurrentPhase == nil || in.CurrentPhase.Name != "presale" || in.Settings.NewUsersPerMinute != 60 || in.Settings.Title != "Presale" {
			t.Fatalf("node %d in presale: %+v, rate %d", i, in.CurrentPhase, in.Settings.NewUsersPerMinute)
		}
	}
	v = decodeView(t, call(t, a, http.MethodGet, "/waiting-room/concert", ""))
	if v.CurrentPhase == nil || v.CurrentPhase.Name != "presale" || v.NextPhase == nil || v.NextPhase.Name != "general" {
		t.Fatalf("view in presale: %+v %+v", v.CurrentPhase, v.NextPhase)
	}
	var out bytes.Buffer
	if err := writeSummary(&out, v); err != nil {
		t.Fatal(err)
	}
	if want := "phase      presale until 2026-06-01T10:10:00Z; next general from 2026-06-01T10:10:00Z to 2026-06-01T11:00:00Z"; !strings.Contains(out.String(), want) {
		t.Fatalf("status:\n%s\nwant a line %q", out.String(), want)
	}

	// The dashboard shows them too, as figure and as numbers.
	dr := newDashRoom(groupRooms([]*waitingroom.Room{nodeA})[0], e.clock.Now(), nil)
	if dr.Values.CurrentPhase == nil || dr.Values.CurrentPhase.Name != "presale" || dr.Values.NextPhase.Name != "general" ||
		!strings.Contains(dr.Figures[len(dr.Figures)-1].Text, "presale until 2026-06-01T10:10:00Z; next general") {
		t.Fatalf("dashboard: %+v %+v", dr.Values, dr.Figures)
	}

	trail, err := nodeA.AuditTrail(context.Background(), 0, 10)
	if err != nil || len(trail) != 1 {
		t.Fatalf("audit: %+v %v", trail, err)
	}
	if e := trail[0]; e.Action != waitingroom.AuditPhases || len(e.Changes) != 1 || string(e.Changes[0].Old) != "[]" ||
		!strings.Contains(string(e.Changes[0].New), `"name":"presale"`) {
		t.Fatalf("audit entry: %+v (old %s new %s)", e, e.Changes[0].Old, e.Changes[0].New)
	}

	decodeView(t, call(t, a, http.MethodPatch, "/waiting-room/concert", `{"phases": []}`))
	e.step(1, nodeA, nodeB)
	if in := nodeB.Info(); in.CurrentPhase != nil || in.Settings.NewUsersPerMinute != 600 {
		t.Fatalf("after [] on the other node: %+v rate %d", in.CurrentPhase, in.Settings.NewUsersPerMinute)
	}
	trail, _ = nodeA.AuditTrail(context.Background(), 0, 10)
	if n := len(trail); n != 2 || string(trail[1].Changes[0].New) != "[]" || !strings.Contains(string(trail[1].Changes[0].Old), "presale") {
		t.Fatalf("audit of the removal: %+v", trail)
	}
}

// TestCommandSetPhases: `foyer waiting-room set <room> phases=<JSON>` sends
// the list as the admin API takes it, and a list that does not read is
// refused on the spot.
func TestCommandSetPhases(t *testing.T) {
	body, err := settingsFromArgs([]string{"phases=[" + phaseJSON("presale", 0, 10, `"new_users_per_minute":60`) + "]"})
	if err != nil {
		t.Fatal(err)
	}
	o, _, perr := decodePatch(mustJSON(t, body))
	if perr != nil || o.Values().Phases.Len() != 1 {
		t.Fatalf("PATCH body: %v", perr)
	}
	if _, err := settingsFromArgs([]string{"phases=presale"}); err == nil || !strings.Contains(err.Error(), "phases: must be an array of phases") {
		t.Fatalf("a bad list: %v", err)
	}
	if body, err := settingsFromArgs([]string{"phases="}); err != nil || string(mustJSON(t, body)) != `{"phases":[]}` {
		t.Fatalf("phases= removes them: %s %v", mustJSON(t, body), err)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDescribePhases: the status line names the next phase's own
// pre-queue, and whether it ends in a draw.
func TestDescribePhases(t *testing.T) {
	at := func(m int) time.Time { return time.Date(2026, 6, 1, 10, m, 0, 0, time.UTC) }
	opens := at(5)
	for _, c := range []struct {
		cur, next *phaseView
		want      string
	}{
		{nil, nil, "none now"},
		{&phaseView{Name: "presale", End: at(10)}, nil, "presale until 2026-06-01T10:10:00Z"},
		{nil, &phaseView{Name: "general", Start: at(10), End: at(50)},
			"none now; next general from 2026-06-01T10:10:00Z to 2026-06-01T10:50:00Z"},
		{nil, &phaseView{Name: "general", Start: at(10), End: at(50), PrequeueStart: &opens},
			"none now; next general from 2026-06-01T10:10:00Z to 2026-06-01T10:50:00Z, its own pre-queue from 2026-06-01T10:05:00Z"},
		{&phaseView{Name: "presale", End: at(10)}, &phaseView{Name: "general", Start: at(10), End: at(50), PrequeueStart: &opens, ShuffleAtStart: true},
			"presale until 2026-06-01T10:10:00Z; next general from 2026-06-01T10:10:00Z to 2026-06-01T10:50:00Z, its own pre-queue from 2026-06-01T10:05:00Z (a fair draw at its start)"},
	} {
		if got := describePhases(c.cur, c.next); got != c.want {
			t.Errorf("describePhases(%+v, %+v) = %q, want %q", c.cur, c.next, got, c.want)
		}
	}
}
