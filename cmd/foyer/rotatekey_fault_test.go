package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/internal/redistest"
)

// TestFaultRotateKeyTenTimes runs `rotate-key stage` and `promote` ten times
// in a row on a real node whose key is kept in Caddy's storage, killing and
// starting the node after each rotation. Rounds are paced three seconds apart
// and keys retained for eight, so that when a key is staged two or three
// previous keys still verify and the older ones are past their retention:
// every step must retire those and say so, the node must start every time,
// and a pass signed by each key within its retention must be accepted. Then
// four rotations within one retention: the fifth stage must be refused with
// a non-zero exit, and the node must still start.
func TestFaultRotateKeyTenTimes(t *testing.T) {
	bin := foyer(t)
	rs := redistest.StartServer(t, nil)
	dir := t.TempDir()
	storage := filepath.Join(dir, "storage")
	port, admin := freePort(t), freePort(t)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	jwks := base + "/_waiting-room/jwks.json"
	caddyfile := fmt.Sprintf(`{
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
		session_duration 1h
	}
	respond "hello"
}
`, admin, storage, port, rotationRoom, rs.Addr)
	node := startNode(t, dir, caddyfile, jwks)
	cfg := filepath.Join(dir, "Caddyfile")
	rotate := func(args ...string) (string, error) {
		out, err := exec.Command(bin, append(append([]string{"waiting-room", "rotate-key"}, args...), "--config", cfg, "--adapter", "caddyfile")...).CombinedOutput()
		return string(out), err
	}
	mustRotate := func(args ...string) string {
		t.Helper()
		out, err := rotate(args...)
		if err != nil {
			t.Fatalf("rotate-key %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	admit := func() *fan {
		t.Helper()
		f := newFan(t)
		if _, body := f.get(base + "/"); body != "hello" {
			f.waitAdmitted(base, 15*time.Second)
		}
		return f
	}
	type signed struct {
		kid   string
		fan   *fan
		until time.Time // when its key's retention ends; zero while it signs
	}
	var passes []signed
	first := admit()
	passes = append(passes, signed{kid: kidOf(t, first.cookie(base, "foyer_pass")), fan: first})

	const pace, retain = 3 * time.Second, 8 * time.Second
	retiredSeen := 0
	stagedRe := regexp.MustCompile(`Staged key (\S+)\.`)
	for round := 1; round <= 10; round++ {
		began := time.Now()
		out := mustRotate("stage")
		m := stagedRe.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("round %d: stage named no key:\n%s", round, out)
		}
		retiredSeen += strings.Count(out, "Retired key")
		// rotate-key reloaded the node with force: it publishes the
		// staged key at once, without a restart.
		if kids := strings.Join(jwksKids(t, jwks), ","); !strings.Contains(kids, m[1]) {
			t.Fatalf("round %d: after stage, jwks.json lists %s, not the staged %s:\n%s", round, kids, m[1], out)
		}
		promoted := time.Now()
		out = mustRotate("promote", "--retain", retain.String())
		retiredSeen += strings.Count(out, "Retired key")
		passes[len(passes)-1].until = promoted.Add(retain)

		node.kill()
		node = startNode(t, dir, caddyfile, jwks)
		f := admit()
		if kid := kidOf(t, f.cookie(base, "foyer_pass")); kid != m[1] {
			t.Fatalf("round %d: the pass after promotion has kid %s, want %s", round, kid, m[1])
		}
		passes = append(passes, signed{kid: m[1], fan: f})
		kept := 0
		for _, p := range passes {
			left := time.Until(p.until)
			if !p.until.IsZero() && left < time.Second {
				continue // at or past the end of its retention
			}
			if code, body := p.fan.get(base + "/"); code != 200 || body != "hello" {
				t.Fatalf("round %d: a pass of key %s, within its retention for %v more, was refused: %d %.80q", round, p.kid, left.Round(time.Millisecond), code, body)
			}
			kept++
		}
		t.Logf("round %d: %d keys' passes accepted after the restart; %d retirements said so far", round, kept, retiredSeen)
		time.Sleep(pace - time.Since(began))
	}
	if retiredSeen < 5 {
		t.Errorf("ten rotations retired %d keys past their retention on stdout, want at least 5", retiredSeen)
	}

	// Four rotations within one retention: the fifth stage would give the
	// node a fifth verifying key, and is refused.
	time.Sleep(retain) // every key before these is past its retention
	for i := 0; i < 4; i++ {
		mustRotate("stage")
		mustRotate("promote", "--retain", "1h")
	}
	out, err := rotate("stage")
	if err == nil || !strings.Contains(out, "--retire-early") || !strings.Contains(out, "unable to start") {
		t.Fatalf("a fifth stage within the retention: %v\n%s\nwant a non-zero exit naming --retire-early", err, out)
	}
	node.kill()
	node = startNode(t, dir, caddyfile, jwks)
	if n := len(jwksKids(t, jwks)); n != 5 {
		t.Fatalf("after four rotations within the retention, jwks.json lists %d keys, want 5", n)
	}

	// Storage holding one key too many (as an older rotate-key could leave
	// it): the node still starts, with the newest keys.
	extra := newKey(t)
	data, err := extra.MarshalPEM()
	if err != nil {
		t.Fatal(err)
	}
	pemText := strings.Replace(string(data), "-----BEGIN PRIVATE KEY-----\n",
		"-----BEGIN PRIVATE KEY-----\nDrop-After: "+time.Now().Add(time.Minute).UTC().Format(time.RFC3339)+"\n\n", 1)
	if err := os.WriteFile(filepath.Join(storage, "waiting_room", "previous_signing_keys", extra.KeyID()+".pem"), []byte(pemText), 0o600); err != nil {
		t.Fatal(err)
	}
	node.kill()
	startNode(t, dir, caddyfile, jwks)
	if kids := jwksKids(t, jwks); len(kids) != 5 || strings.Contains(strings.Join(kids, ","), extra.KeyID()) {
		t.Fatalf("with a sixth key in storage, jwks.json lists %v; want five, the oldest left out", kids)
	}
}
