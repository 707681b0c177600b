package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/internal/redistest"
)

// TestStoredKeyRotationTwoNodes rotates the key kept in Caddy's storage by the
// procedure docs/operations.md gives, on two real nodes sharing that storage and one
// Redis: after `rotate-key stage` and a reload of both, each trusts the next
// key but still signs with the current one; after `rotate-key promote` and a
// reload of the first node only, a pass the first node signs with the new key
// is honoured by the second, not yet reloaded; the old key's passes stay good
// on both.
func TestStoredKeyRotationTwoNodes(t *testing.T) {
	bin := foyer(t)
	rs := redistest.StartServer(t, nil)
	shared := filepath.Join(t.TempDir(), "storage")
	type gw struct {
		dir, cfg, admin, base string
	}
	var nodes [2]gw
	for i := range nodes {
		dir := t.TempDir()
		port, admin := freePort(t), freePort(t)
		nodes[i] = gw{dir: dir, cfg: filepath.Join(dir, "Caddyfile"), admin: fmt.Sprintf("127.0.0.1:%d", admin), base: fmt.Sprintf("http://127.0.0.1:%d", port)}
		startNode(t, dir, fmt.Sprintf(`{
	admin 127.0.0.1:%d
	persist_config off
	skip_install_trust
	grace_period 1ns
	storage file_system %s
}
http://127.0.0.1:%d {
	waiting_room {
		room %s
		store redis redis://%s
		total_active_users 100
		new_users_per_minute 6000
	}
	respond "hello"
}
`, admin, shared, port, rotationRoom, rs.Addr), nodes[i].base+"/_waiting-room/jwks.json")
	}
	run := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(bin, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("foyer %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	reload := func(n gw) {
		t.Helper()
		run("reload", "--config", n.cfg, "--adapter", "caddyfile", "--address", n.admin, "--force")
	}
	kids := func(n gw) string { return strings.Join(jwksKids(t, n.base+"/_waiting-room/jwks.json"), ",") }
	admit := func(n gw) *fan {
		t.Helper()
		f := newFan(t)
		if _, body := f.get(n.base + "/"); body != "hello" {
			f.waitAdmitted(n.base, 15*time.Second)
		}
		return f
	}
	wantIn := func(f *fan, n gw) {
		t.Helper()
		if code, body := f.get(n.base + "/"); code != 200 || body != "hello" {
			t.Fatalf("GET %s/: %d %.80q, want in", n.base, code, body)
		}
	}

	first := kids(nodes[0])
	if kids(nodes[1]) != first || strings.Contains(first, ",") {
		t.Fatalf("nodes on one storage start with keys %s and %s, want one shared key", first, kids(nodes[1]))
	}
	early := admit(nodes[0])

	out := run("waiting-room", "rotate-key", "stage", "--config", nodes[0].cfg, "--adapter", "caddyfile")
	m := regexp.MustCompile(`Staged key (\S+)\.`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("rotate-key stage did not name the staged key:\n%s", out)
	}
	next := m[1]
	for _, n := range nodes {
		reload(n)
		if got := kids(n); got != first+","+next {
			t.Fatalf("after stage and reload, %s publishes %s, want %s then the staged %s", n.base, got, first, next)
		}
	}
	if kid := kidOf(t, admit(nodes[1]).cookie(nodes[1].base, "foyer_pass")); kid != first {
		t.Fatalf("a staged key signed a pass (%s) before promotion", kid)
	}

	out = run("waiting-room", "rotate-key", "promote", "--retain", "1h", "--reason", "yearly rotation", "--config", nodes[0].cfg, "--adapter", "caddyfile")
	if !strings.Contains(out, "Recorded in the audit trail of: "+rotationRoom) {
		t.Fatalf("rotate-key promote did not record the rotation in the room's audit trail:\n%s", out)
	}
	// The room's trail, shared through Redis, tells of both steps by key id.
	trail := run("waiting-room", "audit", rotationRoom, "--address", nodes[1].admin)
	for _, want := range []string{
		"key_rotation staged_key_id null → \"" + next + "\"",
		"key_rotation signing_key_id \"" + first + "\" → \"" + next + "\"",
		"by cli on ", "(yearly rotation)",
	} {
		if !strings.Contains(trail, want) {
			t.Fatalf("the audit trail lacks %s:\n%s", want, trail)
		}
	}
	reload(nodes[0])
	if got := kids(nodes[0]); got != next+","+first {
		t.Fatalf("after promote and reload, the first node publishes %s, want %s then %s", got, next, first)
	}
	late := admit(nodes[0])
	if kid := kidOf(t, late.cookie(nodes[0].base, "foyer_pass")); kid != next {
		t.Fatalf("pass signed after promotion has kid %s, want %s", kid, next)
	}
	// The second node has not reloaded: it signs with the old key, and honours
	// the new one because it was staged.
	wantIn(late, nodes[1])
	wantIn(early, nodes[0])
	reload(nodes[1])
	for _, n := range nodes {
		wantIn(late, n)
		wantIn(early, n)
	}
}
