package gateway

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/foyer-dev/foyer/waitingroom"
)

// Requeue (docs/PROTOCOL.md, "Requeue"), on a real Caddy: two nodes of one
// room (two sites of the process, told apart by their titles, so each has
// its own room handle, view and caches) share one store, the memory store of
// the process or a Redis. The origin fails a fan's session with
// `X-Waiting-Room-Command: retry`, or, under requeue_on_origin_error, with a
// 503: the fan is put back at the front with their order key, their slot
// kept for them (the fan waiting behind is not let in), and is let in again
// first, once per ticket; the next failure goes through as the origin wrote
// it. The requeues are counted.

// nodeBPort is the second node's port; the sites write it as 9082.
// closedPort is a port nobody listens on: an upstream that cannot be
// reached, for which reverse_proxy returns 502 with nothing written.
var nodeBPort, closedPort = freePort(), freePort()

// twoNodes is a room of one slot on two nodes (two sites, told apart by
// their titles) in front of the origin at 127.0.0.1:9081, whose sites the
// caller adds; /down goes to an upstream nobody listens on.
func twoNodes(room, store, extra string) string {
	node := func(port, title string) string {
		return fmt.Sprintf(`
	http://localhost:%s {
		waiting_room {
			room %s
			title "%s"
			%s
			total_active_users 1
			new_users_per_minute 60
			%s
		}
		reverse_proxy /down 127.0.0.1:%d
		reverse_proxy 127.0.0.1:9081
	}`, port, room, title, store, extra, closedPort)
	}
	return node("9080", "node a") + node("9082", "node b")
}

// requeueConfig is a room of one slot on two nodes, in front of an origin
// that answers retry at /retry, a bare 503 at /boom, and the pass otherwise.
func requeueConfig(storage, room, store, extra string) string {
	sites := twoNodes(room, store, extra) + `
	:9081 {
		bind 127.0.0.1
		@retry path /retry
		header @retry X-Waiting-Room-Command retry
		respond @retry "payment provider down" 503
		respond /boom "boom" 503
		respond "origin pass={http.request.header.X-Waiting-Room-Pass}" 200
	}`
	return caddyConfig(storage, strings.ReplaceAll(sites, ":9082", ":"+strconv.Itoa(nodeBPort)))
}

var nodeBBase = "http://localhost:" + strconv.Itoa(nodeBPort)

// requeueStatus reads the fan's status through a node.
func (f *fan) requeueStatus(t *testing.T, node string) waitingroom.Status {
	t.Helper()
	resp, body := f.get(node+"/_waiting-room/status", "Accept", "application/json")
	var st waitingroom.Status
	if resp.StatusCode != http.StatusOK || json.Unmarshal([]byte(body), &st) != nil {
		t.Fatalf("status through %s: %d %q", node, resp.StatusCode, body)
	}
	return st
}

// requeueRoomStats adds up the two nodes' counts of requeues made and
// refused, and reads the store's count of requeues through one of them.
func requeueRoomStats(t *testing.T, room string) (made, refused, stored uint64) {
	t.Helper()
	handles := 0
	rooms.Range(func(_, v any) bool {
		if r := v.(*roomHandle).room; r.ID() == room {
			handles++
			made += r.Stats().Requeues.Load()
			refused += r.Stats().RequeuesSpent.Load()
			stored = max(stored, r.Snapshot().Requeued)
		}
		return true
	})
	if handles != 2 {
		t.Fatalf("room %s has %d handles; want two nodes", room, handles)
	}
	return made, refused, stored
}

// requeueOnce plays one failure of the origin and what follows: fan, let in,
// fails through failNode at path; waiting stands in line behind. It checks
// the requeue, and returns fan's pass after they were let in again.
func requeueOnce(t *testing.T, clock *testClock, room, path, failNode, otherNode string, fan, waiting *fan) {
	t.Helper()
	key := fan.ticketKey(t, room)
	resp, body := fan.get(failNode+path, "Accept", "application/json")
	var st waitingroom.Status
	if resp.StatusCode != http.StatusServiceUnavailable || json.Unmarshal([]byte(body), &st) != nil || !st.Requeued || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("%s through %s: %d %q; want 503 with Retry-After and the requeued status", path, failNode, resp.StatusCode, body)
	}
	if strings.Contains(body, "payment provider") || strings.Contains(body, "boom") {
		t.Fatalf("the origin's answer reached the fan: %q", body)
	}
	u, _ := url.Parse(failNode)
	if findJarCookie(fan, u, "foyer_pass") != "" {
		t.Fatal("the pass cookie was not cleared")
	}
	// Through the other node, at once: first at the front, told why.
	if st := fan.requeueStatus(t, otherNode); st.State != waitingroom.StateQueued || !st.Requeued || st.Position == nil || *st.Position != 0 {
		t.Fatalf("the requeued fan through the other node: %+v; want queued first, requeued", st)
	}
	// The slot the session freed is the requeued fan's: the fan waiting
	// behind is not let in by the next steps.
	clock.step(t, 2)
	if st := waiting.requeueStatus(t, otherNode); st.State == waitingroom.StateAdmitted {
		t.Fatalf("the fan behind took the requeued fan's slot: %+v", st)
	}
	if st := fan.requeueStatus(t, failNode); st.State != waitingroom.StateAdmitted {
		t.Fatalf("the requeued fan after two steps: %+v; want admitted", st)
	}
	if got := fan.ticketKey(t, room); got != key {
		t.Fatalf("the requeued fan's order key went from %d to %d; want it kept", key, got)
	}
	if resp, body := fan.get(otherNode + "/events"); resp.StatusCode != http.StatusOK || !strings.HasPrefix(body, "origin pass=") {
		t.Fatalf("the requeued fan let in again: %d %q; want the origin", resp.StatusCode, body)
	}
}

func runRequeueScenario(t *testing.T, extra, path string, secondCode int) {
	storesUnderTest(t, func(t *testing.T, store string) {
		clock := useTestClock(t)
		room := "requeue"
		newCaddy(t, requeueConfig(t.TempDir(), room, store, extra))
		first, behind := newFan(t), newFan(t)
		if resp, body := first.get(base + "/events"); resp.StatusCode != http.StatusOK || !strings.HasPrefix(body, "origin pass=") {
			t.Fatalf("the first fan: %d %q; want let in on the spot", resp.StatusCode, body)
		}
		if st := behind.requeueStatus(t, nodeBBase); st.State != waitingroom.StateQueued {
			t.Fatalf("the fan behind: %+v; want queued", st)
		}
		requeueOnce(t, clock, room, path, base, nodeBBase, first, behind)
		if made, refused, stored := requeueRoomStats(t, room); made != 1 || refused != 0 || stored != 1 {
			t.Fatalf("requeues made %d, refused %d, stored %d; want 1, 0, 1", made, refused, stored)
		}
		// One requeue per ticket: the next failure, through the other node,
		// goes through as the origin wrote it, and the session runs on.
		resp, body := first.get(nodeBBase+path, "Accept", "application/json")
		if resp.StatusCode != secondCode || strings.Contains(body, "requeued") || resp.Header.Get("X-Waiting-Room-Command") != "" {
			t.Fatalf("the second failure: %d %q; want the origin's 503, its command stripped", resp.StatusCode, body)
		}
		if resp, body := first.get(base + "/events"); resp.StatusCode != http.StatusOK || !strings.HasPrefix(body, "origin pass=") {
			t.Fatalf("after the second failure: %d %q; want the session running on", resp.StatusCode, body)
		}
		if st := behind.requeueStatus(t, base); st.State == waitingroom.StateAdmitted {
			t.Fatalf("the fan behind was let in past the cap: %+v", st)
		}
		if made, refused, stored := requeueRoomStats(t, room); made != 1 || refused != 1 || stored != 1 {
			t.Fatalf("requeues made %d, refused %d, stored %d; want 1, 1, 1", made, refused, stored)
		}
	})
}

// TestCaddyRetryRequeuesTheFanOnce: the origin's retry, with
// requeue_on_origin_error off: once per ticket.
func TestCaddyRetryRequeuesTheFanOnce(t *testing.T) {
	runRequeueScenario(t, "", "/retry", http.StatusServiceUnavailable)
}

// TestCaddyOriginErrorRequeuesTheFanOnce: a bare 503 from the origin, with
// requeue_on_origin_error 1.
func TestCaddyOriginErrorRequeuesTheFanOnce(t *testing.T) {
	runRequeueScenario(t, "requeue_on_origin_error 1", "/boom", http.StatusServiceUnavailable)
}

// TestCaddyUnreachableUpstreamRequeuesTheFanOnce: an upstream that cannot
// be reached (reverse_proxy's 502, as for one that times out), with
// requeue_on_origin_error 1.
func TestCaddyUnreachableUpstreamRequeuesTheFanOnce(t *testing.T) {
	runRequeueScenario(t, "requeue_on_origin_error 1", "/down", http.StatusBadGateway)
}

// TestCaddyOriginErrorPassesWhenOff: without requeue_on_origin_error a 503
// goes through as the origin wrote it, and the session runs on.
func TestCaddyOriginErrorPassesWhenOff(t *testing.T) {
	useTestClock(t)
	newCaddy(t, requeueConfig(t.TempDir(), "requeue-off", "", ""))
	f := newFan(t)
	f.get(base + "/events")
	if resp, body := f.get(nodeBBase + "/boom"); resp.StatusCode != http.StatusServiceUnavailable || body != "boom" {
		t.Fatalf("a 503 with requeues off: %d %q; want the origin's", resp.StatusCode, body)
	}
	if resp, body := f.get(base + "/events"); resp.StatusCode != http.StatusOK || !strings.HasPrefix(body, "origin pass=") {
		t.Fatalf("after it: %d %q; want the session running on", resp.StatusCode, body)
	}
	if made, refused, _ := requeueRoomStats(t, "requeue-off"); made != 0 || refused != 0 {
		t.Fatalf("requeues made %d, refused %d; want none", made, refused)
	}
}
