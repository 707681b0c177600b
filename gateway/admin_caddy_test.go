package gateway

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/foyer-dev/foyer/waitingroom"
)

func adminCall(t *testing.T, method, path, body string) (int, string) {
	t.Helper()
	return adminSend(t, method, path, "", body)
}

// adminSend calls the admin API with a body of a content type ("": none
// said).
func adminSend(t *testing.T, method, path, contentType, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, adminBase+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

// TestCaddyAdminAPIAndMetrics drives a room of a real Caddy through its admin
// endpoint: the module lists and changes the room, the metrics are on Caddy's
// /metrics, and the command reads the same endpoint.
func TestCaddyAdminAPIAndMetrics(t *testing.T) {
	clock := useTestClock(t) // time stands still: nothing moves unless the test says so
	newCaddy(t, caddyConfig(t.TempDir(), `
	http://localhost:9080 {
		waiting_room {
			room admin-live
			total_active_users 1
		}
		respond "origin"
	}`))

	a := newFan(t)
	if _, body := a.get(base + "/"); body != "origin" {
		t.Fatalf("first fan: %q, want the origin", body)
	}
	clock.step(t, 1) // the room's view, which the admin API shows, catches up

	code, body := adminCall(t, http.MethodGet, "/waiting-room/", "")
	var list roomList
	if err := json.Unmarshal([]byte(body), &list); code != http.StatusOK || err != nil {
		t.Fatalf("list: %d %s", code, body)
	}
	if len(list.Rooms) != 1 || list.Rooms[0].Room != "admin-live" || list.Rooms[0].Node.Joins != 1 || list.Rooms[0].Active != 1 {
		t.Fatalf("list: %s, want admin-live with one join and one active session", body)
	}

	code, body = adminCall(t, http.MethodPatch, "/waiting-room/admin-live", `{"sold_out": "yes"}`)
	if code != http.StatusBadRequest || !strings.Contains(body, `"error":"invalid_setting"`) {
		t.Fatalf("bad PATCH: %d %s, want 400 invalid_setting", code, body)
	}
	code, body = adminCall(t, http.MethodPatch, "/waiting-room/admin-live", `{"sold_out": true}`)
	if code != http.StatusOK || !strings.Contains(body, `"sold_out":true`) {
		t.Fatalf("PATCH: %d %s", code, body)
	}
	if st := newFan(t).status(base); st.State != waitingroom.StateSoldOut {
		t.Errorf("a new fan after sold-out: %s, want sold_out", st.State)
	}
	if code, body = adminCall(t, http.MethodPost, "/waiting-room/nope/pause", ""); code != http.StatusNotFound {
		t.Errorf("unknown room: %d %s, want 404", code, body)
	}

	_, metrics := adminCall(t, http.MethodGet, "/metrics", "")
	for _, want := range []string{
		`foyer_waiting_room_active{room="admin-live"} 1`,
		`foyer_waiting_room_joins_total{room="admin-live"} 1`,
		`foyer_waiting_room_store_healthy{room="admin-live"} 1`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}

	out, err := runCommand(t, adminAddr, "status", "admin-live")
	if err != nil || !strings.Contains(out, "sold out") {
		t.Errorf("command status: %v\n%s", err, out)
	}
}
