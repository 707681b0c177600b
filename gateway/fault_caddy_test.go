package gateway

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/foyer-dev/foyer/internal/redistest"
	"github.com/foyer-dev/foyer/waitingroom"
	"github.com/foyer-dev/foyer/waitingroom/redisstore"
)

// TestFaultCaddyRestartWithRedisEmpty: a real Caddy with the module runs a
// room on a private redis-server; the operator pauses it through the admin
// API. The Caddy's config is unloaded, redis-server is killed and started
// empty, and the config is loaded again (its rooms stop and start with empty
// memory; its storage is a directory that outlives them, as a disk does). The room comes
// back paused at once, with its overrides' version back in Redis, and holds
// newcomers (503) while the line re-announces itself.
func TestFaultCaddyRestartWithRedisEmpty(t *testing.T) {
	useTestClock(t) // time stands still: the room settles for as long as the test runs
	srv := redistest.StartServer(t, nil)
	storage := t.TempDir()
	config := caddyConfig(storage, fmt.Sprintf(`
	http://localhost:9080 {
		waiting_room {
			room caddy-memo
			total_active_users 1
			store redis redis://%s
		}
		respond "origin"
	}`, srv.Addr))
	newCaddy(t, config)
	if _, body := newFan(t).get(base + "/"); body != "origin" {
		t.Fatalf("first fan: %q, want the origin", body)
	}
	if code, body := adminCall(t, http.MethodPatch, "/waiting-room/caddy-memo", `{"paused": true}`); code != http.StatusOK {
		t.Fatalf("PATCH: %d %s", code, body)
	}
	waitMemo(t, storage, "caddy-memo", `"version":1`)

	// The Caddy stops before redis-server comes back empty: a node that
	// outlived the loss would re-create the room whole from its own view
	// (no settling needed), which is another test's case.
	if err := unloadCaddy(); err != nil {
		t.Fatal(err)
	}
	srv.Restart(t)
	newCaddy(t, config)

	code, body := adminCall(t, http.MethodGet, "/waiting-room/caddy-memo", "")
	if code != http.StatusOK || !strings.Contains(body, `"paused":true`) || !strings.Contains(body, `"settling_until":`) {
		t.Fatalf("room after the restart: %d %s, want it paused and settling", code, body)
	}
	resp2, body := newFan(t).get(base+"/_waiting-room/status", "Accept", "application/json")
	if resp2.StatusCode != http.StatusServiceUnavailable || resp2.Header.Get("Retry-After") == "" || !strings.Contains(body, `"error":"unavailable"`) {
		t.Fatalf("newcomer while the room settles: %d %q, want 503 with Retry-After", resp2.StatusCode, body)
	}
	c := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer c.Close()
	st, err := redisstore.New(c)
	if err != nil {
		t.Fatal(err)
	}
	data, v, err := st.Overrides(context.Background(), "caddy-memo")
	if err != nil || v != 1 || !strings.Contains(string(data), `"paused":true`) {
		t.Fatalf("overrides in the empty Redis after the restart: %q v%d %v, want version 1, paused", data, v, err)
	}
	snap, err := st.Snapshot(context.Background(), "caddy-memo", time.Now(), 0)
	if err != nil || snap.SettleUntil.IsZero() {
		t.Fatalf("room in Redis after the restart: %+v %v, want it settling", snap, err)
	}
}

// TestFaultCaddyRestartMemoryStoreWithLine: a real Caddy on the memory store
// is restarted (config unloaded and loaded again: its rooms and its store
// start with empty memory; its storage outlives them) while a fan waits. The
// room settles: newcomers are held (503) while the line re-announces itself,
// the fan inside keeps the only slot, and then a newcomer is placed behind
// the fan who waited, who goes in first.
func TestFaultCaddyRestartMemoryStoreWithLine(t *testing.T) {
	clock := useTestClock(t)
	storage := t.TempDir()
	config := caddyConfig(storage, `
	http://localhost:9080 {
		waiting_room {
			room memory-line
			total_active_users 1
			session_duration 1m
		}
		respond "origin"
	}`)
	newCaddy(t, config)
	inside := newFan(t)
	if _, body := inside.get(base + "/"); body != "origin" {
		t.Fatalf("first fan: %q, want the origin", body)
	}
	waiting := newFan(t)
	if st := waiting.status(base); st.State != waitingroom.StateQueued {
		t.Fatalf("second fan: %s, want queued", st.State)
	}
	clock.step(t, 3) // the line is seen, and kept in the memo
	waitMemo(t, storage, "memory-line", `"waiting":true`)

	if err := unloadCaddy(); err != nil {
		t.Fatal(err)
	}
	newCaddy(t, config)

	resp2, body := newFan(t).get(base+"/_waiting-room/status", "Accept", "application/json")
	if resp2.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("newcomer right after the restart: %d %q, want 503 while the line re-announces itself", resp2.StatusCode, body)
	}
	if _, body := inside.get(base + "/"); body != "origin" {
		t.Fatalf("the fan inside after the restart: %q, want the origin", body)
	}
	if st := waiting.status(base); st.State != waitingroom.StateQueued {
		t.Fatalf("the waiting fan after the restart: %s, want queued", st.State)
	}
	clock.step(t, 20) // past the settling window (14 s with the default grace)
	late := newFan(t)
	if st := late.status(base); st.State != waitingroom.StateQueued || st.Position == nil || *st.Position < 1 {
		t.Fatalf("newcomer after settling: %+v, want queued behind the fan who waited", st)
	}
	clock.step(t, 45) // the session inside ends
	if st := waiting.status(base); st.State != waitingroom.StateAdmitted {
		t.Fatalf("the fan who waited, once the slot freed: %s, want admitted", st.State)
	}
	if st := late.status(base); st.State == waitingroom.StateAdmitted {
		t.Fatal("the newcomer went in with the fan who waited before them")
	}
}

// waitMemo waits, with a deadline, for the memo of room in Caddy storage to
// contain want: it is written in the background.
func waitMemo(t *testing.T, storage, room, want string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		files, _ := filepath.Glob(filepath.Join(storage, "waiting_room", "rooms", "*", room+".json"))
		if len(files) == 1 {
			if data, err := os.ReadFile(files[0]); err == nil && strings.Contains(string(data), want) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no memo of %s with %s in Caddy storage: %v", room, want, files)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
