package gateway

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/foyer-dev/foyer/waitingroom"
)

// TestCaddyAuditTrail changes a room of a real Caddy every way an operator
// can, through the admin API and the command line: a PATCH, a pause and its
// resume, queue_all, a key rotation and sold out each appear in the room's
// audit trail with old and new values, who made them and why, and in the
// fairness report, where the pause shows it let nobody in. Bad input gets a
// 400 naming what is wrong.
func TestCaddyAuditTrail(t *testing.T) {
	clock := useTestClock(t)
	newCaddy(t, caddyConfig(t.TempDir(), `
	http://localhost:9080 {
		waiting_room {
			room audit-live
			total_active_users 100
			new_users_per_minute 60
		}
		respond "origin"
	}`))
	for range 6 {
		newFan(t).status(base)
	}
	clock.step(t, 2)
	must := func(code int, body string) string {
		t.Helper()
		if code != http.StatusOK {
			t.Fatalf("%d %s", code, body)
		}
		return body
	}
	cli := func(args ...string) {
		t.Helper()
		if out, err := runCommand(t, adminAddr, args...); err != nil {
			t.Fatalf("waiting-room %v: %v\n%s", args, err, out)
		}
	}

	cli("set", "audit-live", "new_users_per_minute=120", "--reason", "more staff at the gates")
	cli("pause", "audit-live", "--reason", "payment provider down")
	clock.step(t, 3)
	must(adminCall(t, http.MethodPost, "/waiting-room/audit-live/resume", `{"reason": "provider back"}`))
	clock.step(t, 2)
	must(adminCall(t, http.MethodPatch, "/waiting-room/audit-live", `{"queue_all": true}`))
	kid := liveRooms()[0].rooms[0].KeyIDs()[0]
	must(adminCall(t, http.MethodPost, "/waiting-room/audit-live/key-rotation",
		fmt.Sprintf(`{"step": "promote", "old_key_id": "retired-kid", "new_key_id": %q}`, kid)))
	must(adminCall(t, http.MethodPost, "/waiting-room/audit-live/sold-out", ""))

	var trail auditAnswer
	if err := json.Unmarshal([]byte(must(adminCall(t, http.MethodGet, "/waiting-room/audit-live/audit", ""))), &trail); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`patch new_users_per_minute 60->120 "more staff at the gates" cli`,
		`pause paused false->true "payment provider down" cli`,
		`resume paused true->false "provider back" `,
		`queue_all queue_all false->true "" `,
		fmt.Sprintf(`key_rotation signing_key_id "retired-kid"->%q "" `, kid),
		`sold_out sold_out false->true "" `,
	}
	if len(trail.Entries) != len(want) {
		t.Fatalf("trail %+v, want %d entries", trail.Entries, len(want))
	}
	for i, e := range trail.Entries {
		c := e.Changes[0]
		via := ""
		if strings.HasPrefix(e.Who, "cli on ") {
			via = "cli"
		}
		got := fmt.Sprintf("%s %s %s->%s %q %s", e.Action, c.Setting, c.Old, c.New, e.Note, via)
		if got != want[i] || e.Seq != uint64(i+1) || !strings.Contains(e.Who, "127.0.0.1:") || len(e.Changes) != 1 {
			t.Errorf("entry %d: %s by %q (seq %d), want %s", i, got, e.Who, e.Seq, want[i])
		}
	}

	// Paged: two at a time, each page naming the next.
	var page auditAnswer
	_ = json.Unmarshal([]byte(must(adminCall(t, http.MethodGet, "/waiting-room/audit-live/audit?after=2&limit=2", ""))), &page)
	if len(page.Entries) != 2 || page.Entries[0].Seq != 3 || page.Next == nil || *page.Next != 4 {
		t.Fatalf("page after 2 of 2: %+v", page)
	}
	out, err := runCommand(t, adminAddr, "audit", "audit-live")
	if err != nil || !strings.Contains(out, "pause") || !strings.Contains(out, "(payment provider down)") || !strings.Contains(out, "new_users_per_minute 60 → 120") {
		t.Fatalf("command audit: %v\n%s", err, out)
	}

	for _, bad := range []struct{ method, path, body, code string }{
		{http.MethodPatch, "/waiting-room/audit-live", fmt.Sprintf(`{"paused": false, "reason": %q}`, strings.Repeat("x", waitingroom.MaxAuditNote+1)), "invalid_reason"},
		{http.MethodPost, "/waiting-room/audit-live/pause", `{"reason": "two\nlines"}`, "invalid_reason"},
		{http.MethodPost, "/waiting-room/audit-live/pause", `{"paused": true}`, "invalid_body"},
		{http.MethodGet, "/waiting-room/audit-live/audit?after=last", "", "invalid_cursor"},
		{http.MethodGet, "/waiting-room/audit-live/audit?limit=0", "", "invalid_limit"},
		{http.MethodPost, "/waiting-room/audit-live/key-rotation", `{"step": "promote", "new_key_id": "not-ours"}`, "not_this_key"},
	} {
		code, body := adminCall(t, bad.method, bad.path, bad.body)
		if code/100 != 4 || !strings.Contains(body, `"error":"`+bad.code+`"`) || !strings.Contains(body, `"message":`) {
			t.Errorf("%s %s %.40s: %d %s, want a 4xx %s", bad.method, bad.path, bad.body, code, body, bad.code)
		}
	}

	// The fairness report, published on sold out, shows the trail without
	// its authors, and the pause's effect.
	clock.step(t, 1)
	resp, body := newFan(t).get(base + "/_waiting-room/fairness")
	var rep waitingroom.FairnessReport
	if err := json.Unmarshal([]byte(body), &rep); resp.StatusCode != http.StatusOK || err != nil {
		t.Fatalf("fairness report: %d %s", resp.StatusCode, body)
	}
	if len(rep.Operations) != len(want) || rep.Operations[1].Note != "payment provider down" || strings.Contains(body, "127.0.0.1") {
		t.Fatalf("report's operations: %s", body)
	}
	if len(rep.Pauses) != 1 || rep.Pauses[0].To == nil || rep.Pauses[0].To.Sub(rep.Pauses[0].From).Seconds() != 3 || rep.Pauses[0].LetIn != 0 {
		t.Fatalf("report's pauses %+v, want one of 3 s letting nobody in", rep.Pauses)
	}
	_, html := newFan(t).get(base+"/_waiting-room/fairness", "Accept", "text/html")
	for _, want := range []string{"Paused from <time", ": 0 places let in meanwhile.", "new_users_per_minute: 60 → 120", "payment provider down", "key_rotation"} {
		if !strings.Contains(html, want) {
			t.Errorf("the report's page lacks %q", want)
		}
	}
	if strings.Contains(html, "127.0.0.1") {
		t.Error("the report's page names an operator's address")
	}
}
