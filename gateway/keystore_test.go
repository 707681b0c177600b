package gateway

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/certmagic"

	"github.com/foyer-dev/foyer/waitingroom"
)

// TestStoredKeyRotation walks a rotation of the key kept in Caddy's storage:
// a staged key verifies before it signs, a promoted key signs while the old
// one verifies until its retention ends, and nothing is promoted unstaged.
func TestStoredKeyRotation(t *testing.T) {
	ctx := context.Background()
	storage := &certmagic.FileStorage{Path: t.TempDir()}
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

	if _, _, err := stageStoredKey(ctx, storage, t0, false); err == nil {
		t.Fatal("staging with no current key succeeded")
	}
	first := mustLoad(t, storage, t0, 0)

	if _, _, _, err := promoteStoredKey(ctx, storage, time.Hour, t0, false); err == nil {
		t.Fatal("promoting with nothing staged succeeded")
	}
	next, _, err := stageStoredKey(ctx, storage, t0, false)
	if err != nil {
		t.Fatal(err)
	}
	if again, _, err := stageStoredKey(ctx, storage, t0, false); err != nil || again != next {
		t.Fatalf("staging twice: %s, %v; want the staged key %s kept", again, err, next)
	}
	// Staged: nodes still sign with the first key and verify with the next.
	if cur, others := mustLoadBoth(t, storage, t0); cur.KeyID() != first.KeyID() || len(others) != 1 || others[0].KeyID() != next {
		t.Fatalf("after staging: current %s, others %v; want %s signing and %s verifying", cur.KeyID(), kidsOf(others), first.KeyID(), next)
	}

	oldKID, newKID, _, err := promoteStoredKey(ctx, storage, time.Hour, t0, false)
	if err != nil || oldKID != first.KeyID() || newKID != next {
		t.Fatalf("promote: %s -> %s, %v", oldKID, newKID, err)
	}
	if cur, others := mustLoadBoth(t, storage, t0.Add(59*time.Minute)); cur.KeyID() != next || len(others) != 1 || others[0].KeyID() != first.KeyID() {
		t.Fatalf("after promotion: current %s, others %v; want %s signing and %s verifying", cur.KeyID(), kidsOf(others), next, first.KeyID())
	}
	// Past its retention the previous key is no longer trusted.
	mustLoad(t, storage, t0.Add(time.Hour), 0)

	// A second rotation after the retention deletes the expired key.
	if _, _, err := stageStoredKey(ctx, storage, t0.Add(2*time.Hour), false); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := promoteStoredKey(ctx, storage, time.Hour, t0.Add(2*time.Hour), false); err != nil {
		t.Fatal(err)
	}
	prev, err := listPreviousKeys(ctx, storage)
	if err != nil || len(prev) != 1 || prev[0].key.KeyID() != next {
		t.Fatalf("previous keys after the second rotation: %d (%v); want only %s", len(prev), err, next)
	}
}

// TestStoredKeyRotationBound rotates five times within one retention: the
// fifth stage would give a node a fifth verifying key, which it could not
// start with, so it is refused and nothing changes, unless the oldest key may
// be retired early. Keys past their retention are retired as a matter of
// course, and every step says which it retired.
func TestStoredKeyRotationBound(t *testing.T) {
	ctx := context.Background()
	storage := &certmagic.FileStorage{Path: t.TempDir()}
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	first := mustLoad(t, storage, t0, 0)
	rotate := func(at time.Time, early bool) (string, []retiredKey, error) {
		t.Helper()
		kid, retiredS, err := stageStoredKey(ctx, storage, at, early)
		if err != nil {
			return "", retiredS, err
		}
		_, _, retiredP, err := promoteStoredKey(ctx, storage, 12*time.Hour, at, early)
		return kid, append(retiredS, retiredP...), err
	}
	var kids []string
	for i := range 4 {
		kid, retired, err := rotate(t0.Add(time.Duration(i)*time.Minute), false)
		if err != nil || len(retired) > 0 {
			t.Fatalf("rotation %d: retired %v, %v", i+1, retired, err)
		}
		kids = append(kids, kid)
	}
	at := t0.Add(5 * time.Minute)
	mustLoad(t, storage, at, 4)
	_, retired, err := stageStoredKey(ctx, storage, at, false)
	if err == nil || !strings.Contains(err.Error(), "--retire-early") || !strings.Contains(err.Error(), first.KeyID()) || len(retired) > 0 {
		t.Fatalf("a fifth stage within the retention: %v (retired %v); want it refused, naming the oldest key and --retire-early", err, retired)
	}
	if _, err := loadStoredKey(ctx, storage, nextKeyStorageKey); err == nil {
		t.Fatal("a refused stage left a staged key")
	}
	mustLoad(t, storage, at, 4)

	kid, retired, err := rotate(at, true)
	if err != nil || len(retired) != 1 || retired[0].kid != first.KeyID() || !retired[0].early {
		t.Fatalf("a fifth rotation with early retirement: retired %+v, %v; want %s retired early", retired, err, first.KeyID())
	}
	if cur, others := mustLoadBoth(t, storage, at); cur.KeyID() != kid || len(others) != 4 || others[0].KeyID() != kids[3] {
		t.Fatalf("after five rotations: current %s, others %v; want %s signing and the four before it, newest first", cur.KeyID(), kidsOf(others), kid)
	}

	// A day later every previous key is past its retention: the next stage
	// retires them all, none of them early.
	later := at.Add(24 * time.Hour)
	if _, retired, err = stageStoredKey(ctx, storage, later, false); err != nil || len(retired) != 4 {
		t.Fatalf("stage a day later: retired %+v, %v; want the four expired keys", retired, err)
	}
	for _, r := range retired {
		if r.early {
			t.Fatalf("a key past its retention was reported retired early: %+v", r)
		}
	}
	mustLoad(t, storage, later, 1)
}

func mustLoadBoth(t *testing.T, storage certmagic.Storage, now time.Time) (*waitingroom.SigningKey, []*waitingroom.SigningKey) {
	t.Helper()
	cur, others, err := loadStoredKeys(context.Background(), storage, now)
	if err != nil {
		t.Fatal(err)
	}
	return cur, others
}

func mustLoad(t *testing.T, storage certmagic.Storage, now time.Time, wantOthers int) *waitingroom.SigningKey {
	t.Helper()
	cur, others := mustLoadBoth(t, storage, now)
	if len(others) != wantOthers {
		t.Fatalf("at %s: %d verifying keys %v, want %d", now, len(others), kidsOf(others), wantOthers)
	}
	return cur
}

func kidsOf(keys []*waitingroom.SigningKey) []string {
	var out []string
	for _, k := range keys {
		out = append(out, k.KeyID())
	}
	return out
}
