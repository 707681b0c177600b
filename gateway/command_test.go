package gateway

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"

	"github.com/foyer-dev/foyer/waitingroom"
)

// runCommand runs `foyer waiting-room <args>` against the admin endpoint at
// addr, as the registered command would.
func runCommand(t *testing.T, addr string, args ...string) (string, error) {
	t.Helper()
	return runRegistered(t, "waiting-room", append(args, "--address", addr)...)
}

// runRegistered runs the registered `foyer <name>` command with args, and
// returns what it printed.
func runRegistered(t *testing.T, name string, args ...string) (string, error) {
	t.Helper()
	registered, ok := caddycmd.Commands()[name]
	if !ok {
		t.Fatalf("the %s command is not registered", name)
	}
	cmd := &cobra.Command{Use: registered.Name, SilenceUsage: true, SilenceErrors: true}
	registered.CobraFunc(cmd)
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

// adminServer serves the admin API for rooms on a real listener.
func adminServer(t *testing.T, rooms ...*waitingroom.Room) string {
	t.Helper()
	a := adminFor(rooms...)
	mux := http.NewServeMux()
	mux.Handle(adminPrefix, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := a.serve(w, r); err != nil {
			t.Errorf("handler error: %v", err)
		}
	}))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

func TestCommandStatusAndChanges(t *testing.T) {
	e := newAdminEnv(t, nil)
	r := e.node("concert", waitingroom.Settings{Title: "Big Night", NewUsersPerMinute: 60, TotalActiveUsers: 100, SessionDuration: time.Hour})
	e.join(r, 20)
	e.step(12, r)
	addr := adminServer(t, r, e.node("quiet", waitingroom.Settings{}))

	out, err := runCommand(t, addr, "status", "concert")
	if err != nil {
		t.Fatalf("status: %v\n%s", err, out)
	}
	for _, want := range []string{"concert - Big Night", "live, admitting", "healthy", "waiting", "7 live of 7 places, last in line in about 7s", "ghosts skipped 0", "1 of 100", "60/min allowed", "1h, fifo", "seq 20, serving 13"} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}

	out, err = runCommand(t, addr, "status")
	if err != nil || !strings.Contains(out, "concert - Big Night") || !strings.Contains(out, "\nquiet\n") {
		t.Errorf("status of all rooms: %v\n%s", err, out)
	}

	out, err = runCommand(t, addr, "set", "concert", "new_users_per_minute=600", "paused=true", "title=Encore", "event_end=2026-06-01T23:00:00Z")
	if err != nil {
		t.Fatalf("set: %v\n%s", err, out)
	}
	if s := r.Settings(); s.NewUsersPerMinute != 600 || !s.Paused || s.Title != "Encore" || s.EventEnd.IsZero() {
		t.Errorf("settings after set: %+v", s)
	}
	if !strings.Contains(out, `"new_users_per_minute": 600`) {
		t.Errorf("set printed %s, want the room's JSON", out)
	}
	if out, err = runCommand(t, addr, "set", "concert", "event_end="); err != nil || !r.Settings().EventEnd.IsZero() {
		t.Errorf("clearing event_end: %v\n%s", err, out)
	}

	for _, step := range []struct {
		action          string
		paused, soldOut bool
	}{{"resume", false, false}, {"sold-out", false, true}, {"reopen", false, false}, {"pause", true, false}} {
		if out, err := runCommand(t, addr, step.action, "concert"); err != nil {
			t.Fatalf("%s: %v\n%s", step.action, err, out)
		}
		if s := r.Settings(); s.Paused != step.paused || s.SoldOut != step.soldOut {
			t.Errorf("after %s: paused %v, sold out %v", step.action, s.Paused, s.SoldOut)
		}
	}
	out, _ = runCommand(t, addr, "status", "concert")
	if !strings.Contains(out, "live, paused") || !strings.Contains(out, "paused=true") {
		t.Errorf("status of a paused room:\n%s", out)
	}
}

// TestCommandErrors: the command fails with the API's own message, or its
// own when the arguments are wrong, and changes nothing.
func TestCommandErrors(t *testing.T) {
	e := newAdminEnv(t, nil)
	r := e.node("concert", waitingroom.Settings{})
	addr := adminServer(t, r)
	cases := []struct {
		args    []string
		mention string
	}{
		{[]string{"status", "nope"}, `no live waiting room "nope"`},
		{[]string{"pause", "nope"}, `no live waiting room "nope"`},
		{[]string{"set", "concert", "new_users_per_minute=0"}, "new_users_per_minute: must be between 1"},
		{[]string{"set", "concert", "queueing_method=lottery"}, "must be fifo, random, passthrough or reject"},
		{[]string{"set", "concert", "pasued=true"}, `"pasued" is not a runtime setting`},
		{[]string{"set", "concert", "new_users_per_minute=lots"}, `new_users_per_minute: "lots" is not a whole number`},
		{[]string{"set", "concert", "paused=maybe"}, `paused: "maybe" is not true or false`},
		{[]string{"set", "concert", "session_duration=forever"}, `session_duration: "forever" is not a duration such as "10m"`},
		{[]string{"set", "concert", "event_start=tomorrow"}, `event_start: "tomorrow" is not an RFC 3339 time`},
		{[]string{"set", "concert", "join_limit=20"}, "join_limit: \"20\": the count before / must be"},
		{[]string{"set", "concert", "challenge=captcha"}, `challenge: must be "off" or "pow <bits>"`},
		{[]string{"set", "concert", "title=a\tb"}, "title: must be one line"},
		{[]string{"set", "concert", "session_duration=10s"}, "session_duration: must be between 1m and 24h"},
		{[]string{"set", "concert", "paused"}, "<setting>=<value>"},
		{[]string{"set", "concert", "paused=true", "paused=false"}, "paused: given twice"},
		{[]string{"set", "concert"}, "requires at least 2 arg"},
		{[]string{"pause"}, "accepts 1 arg"},
	}
	for _, tc := range cases {
		out, err := runCommand(t, addr, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.mention) {
			t.Errorf("%v: error %v, want one mentioning %q\n%s", tc.args, err, tc.mention, out)
		}
	}
	if _, v, _ := e.store.Overrides(t.Context(), "concert"); v != 0 {
		t.Errorf("a failed command changed the overrides (version %d)", v)
	}

	// Nobody listening.
	if _, err := runCommand(t, "127.0.0.1:1", "status"); err == nil || !strings.Contains(err.Error(), "reaching the admin API") {
		t.Errorf("status with no admin endpoint: %v", err)
	}
}

// TestWaitingRoomHelpListsEveryRuntimeSetting: `foyer waiting-room --help`
// and `waiting-room set --help` list every setting that `set` takes, and no
// other, from the room's settings table, so that a new setting cannot be
// left out of them again.
func TestWaitingRoomHelpListsEveryRuntimeSetting(t *testing.T) {
	registered, ok := caddycmd.Commands()["waiting-room"]
	if !ok {
		t.Fatal("the waiting-room command is not registered")
	}
	setHelp, err := runRegistered(t, "waiting-room", "set", "--help")
	if err != nil {
		t.Fatalf("set --help: %v\n%s", err, setHelp)
	}
	for what, help := range map[string]string{"waiting-room --help": registered.Long, "set --help": setHelp} {
		for _, d := range waitingroom.SettingDefs() {
			listed := strings.Contains(help, "\n  "+d.Name+"=")
			if listed != d.Runtime {
				t.Errorf("%s: %s listed %v, runtime %v\n%s", what, d.Name, listed, d.Runtime, help)
			}
		}
	}
}

// TestStatusOfTheLine: the summary's waiting line says something true of an
// empty line, and counts agree with their nouns.
func TestStatusOfTheLine(t *testing.T) {
	secs := func(n int64) *int64 { return &n }
	for _, tc := range []struct {
		waiting, places uint64
		eta             *int64
		want            string
	}{
		{0, 0, secs(0), "nobody is waiting"},
		{0, 0, nil, "nobody is waiting"},
		{0, 3, secs(0), "nobody is waiting: 0 live of 3 places"},
		{1, 1, secs(4), "1 live of 1 place, last in line in about 4s"},
		{7, 9, secs(90), "7 live of 9 places, last in line in about 1m30s"},
		{7, 9, nil, "7 live of 9 places"},
	} {
		got := describeLine(roomView{Waiting: tc.waiting, Places: tc.places, LastInLineETASeconds: tc.eta})
		if got != tc.want {
			t.Errorf("waiting %d of %d places, ETA %v: %q, want %q", tc.waiting, tc.places, tc.eta, got, tc.want)
		}
	}

	// Through the command, against a room nobody has joined.
	e := newAdminEnv(t, nil)
	r := e.node("quiet", waitingroom.Settings{})
	e.step(3, r)
	out, err := runCommand(t, adminServer(t, r), "status", "quiet")
	if err != nil || !strings.Contains(out, "nobody is waiting") || strings.Contains(out, "about 0s") {
		t.Errorf("status of an empty room: %v\n%s", err, out)
	}
}
