package gateway

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/caddyconfig"
	"golang.org/x/crypto/bcrypt"
)

// dashboardSites is two rooms and the dashboard behind basic_auth, as
// docs/operations.md shows it (testdata/dashboard-sites.caddyfile).
func dashboardSites(t *testing.T) string {
	t.Helper()
	hash, err := bcrypt.GenerateFromPassword([]byte(dashPassword), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	sites, err := os.ReadFile("testdata/dashboard-sites.caddyfile")
	if err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(string(sites), "{hash}", string(hash))
}

const dashPassword = "correct horse"

func dashRequest(t *testing.T, url string, auth bool) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if auth {
		req.SetBasicAuth("ops", dashPassword)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

// TestCaddyDashboard: the Caddyfile of docs/operations.md mounts the dashboard behind
// basic_auth; it shows every room of the node, and nobody without the
// password sees anything of it.
func TestCaddyDashboard(t *testing.T) {
	newCaddy(t, caddyConfig(t.TempDir(), dashboardSites(t)))

	for _, path := range []string{"/ops/dashboard", "/ops/dashboard?format=json", "/ops/dashboard?format=events"} {
		resp, body := dashRequest(t, base+path, false)
		if resp.StatusCode != http.StatusUnauthorized || strings.Contains(body, "dash-a") {
			t.Fatalf("%s without the password: %d %q", path, resp.StatusCode, body)
		}
	}
	for range 3 {
		newFan(t).get(base + "/events/1")
	}
	resp, body := dashRequest(t, base+"/ops/dashboard", true)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `id="room-dash-a"`) || !strings.Contains(body, `id="room-dash-b"`) {
		t.Fatalf("page: %d %s", resp.StatusCode, body)
	}
	resp, body = dashRequest(t, base+"/ops/dashboard?format=json", true)
	var p dashPayload
	if err := json.Unmarshal([]byte(body), &p); resp.StatusCode != http.StatusOK || err != nil {
		t.Fatalf("json: %d %v %s", resp.StatusCode, err, body)
	}
	if len(p.Rooms) != 2 || p.Rooms[0].Room != "dash-a" || p.Rooms[1].Room != "dash-b" || p.Rooms[0].Values.Node.Joins != 3 {
		t.Fatalf("json: %s, want dash-a with 3 joins, then dash-b", body)
	}
	// The dashboard is terminal: nothing under its route reaches the origin.
	if _, body := dashRequest(t, base+"/ops/anything", true); body == "origin" {
		t.Fatal("a path under the dashboard's route reached the origin")
	}
}

// TestREADMEDashboardCaddyfile: the dashboard Caddyfile of docs/operations.md adapts, and
// puts basic_auth before the dashboard, so nobody sees it without the password.
func TestREADMEDashboardCaddyfile(t *testing.T) {
	readme, err := os.ReadFile("../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	var block string
	for _, part := range strings.Split(string(readme), "```caddyfile\n")[1:] {
		if text, _, _ := strings.Cut(part, "```"); strings.Contains(text, "waiting_room_dashboard") {
			block = text
		}
	}
	if block == "" {
		t.Fatal("docs/operations.md shows no Caddyfile with waiting_room_dashboard")
	}
	adapted, warnings, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(block), nil)
	if err != nil {
		t.Fatalf("the dashboard Caddyfile of docs/operations.md: %v", err)
	}
	if len(warnings) > 0 {
		t.Fatalf("the dashboard Caddyfile of docs/operations.md: %v", warnings)
	}
	js := string(adapted)
	auth, dash := strings.Index(js, `"handler":"authentication"`), strings.Index(js, `"handler":"waiting_room_dashboard"`)
	if auth < 0 || dash < 0 || auth > dash {
		t.Fatalf("basic_auth at %d, the dashboard at %d in %s; want the authentication first", auth, dash, js)
	}
}

// TestCaddyDashboardKeepsHistoryAcrossReload: a config reload (here one that
// changes a room's title, which replaces the room's handle) keeps the hour
// of history the node has sampled.
func TestCaddyDashboardKeepsHistoryAcrossReload(t *testing.T) {
	storage := t.TempDir()
	sites := dashboardSites(t)
	newCaddy(t, caddyConfig(storage, sites))
	history := func() []dashSample {
		t.Helper()
		_, body := dashRequest(t, base+"/ops/dashboard?format=json", true)
		var p dashPayload
		if err := json.Unmarshal([]byte(body), &p); err != nil || len(p.Rooms) == 0 {
			t.Fatalf("json: %v %s", err, body)
		}
		return p.Rooms[0].History
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(history()) < 3 {
		if time.Now().After(deadline) {
			t.Fatal("no samples after 10 s")
		}
		time.Sleep(200 * time.Millisecond)
	}
	before := history()
	newCaddy(t, caddyConfig(storage, strings.Replace(sites, `"Night A"`, `"Night A, reloaded"`, 1)))
	_, body := dashRequest(t, base+"/ops/dashboard?format=json", true)
	if !strings.Contains(body, "Night A, reloaded") {
		t.Fatalf("the reload did not take: %s", body)
	}
	after := history()
	if len(after) < len(before) || after[0].T != before[0].T {
		t.Fatalf("history after the reload: %d samples from %d; before: %d from %d", len(after), after[0].T, len(before), before[0].T)
	}
	// And the node goes on sampling.
	for deadline := time.Now().Add(5 * time.Second); len(history()) <= len(after); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no sample taken in the 5 s after the reload")
		}
	}
}
