package gateway

import (
	"context"
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

	if _, err := stageStoredKey(ctx, storage); err == nil {
		t.Fatal("staging with no current key succeeded")
	}
	first := mustLoad(t, storage, t0, 0)

	if _, _, err := promoteStoredKey(ctx, storage, time.Hour, t0); err == nil {
		t.Fatal("promoting with nothing staged succeeded")
	}
	next, err := stageStoredKey(ctx, storage)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := stageStoredKey(ctx, storage); err != nil || again != next {
		t.Fatalf("staging twice: %s, %v; want the staged key %s kept", again, err, next)
	}
	// Staged: nodes still sign with the first key and verify with the next.
	if cur, others := mustLoadBoth(t, storage, t0); cur.KeyID() != first.KeyID() || len(others) != 1 || others[0].KeyID() != next {
		t.Fatalf("after staging: current %s, others %v; want %s signing and %s verifying", cur.KeyID(), kidsOf(others), first.KeyID(), next)
	}

	oldKID, newKID, err := promoteStoredKey(ctx, storage, time.Hour, t0)
	if err != nil || oldKID != first.KeyID() || newKID != next {
		t.Fatalf("promote: %s -> %s, %v", oldKID, newKID, err)
	}
	if cur, others := mustLoadBoth(t, storage, t0.Add(59*time.Minute)); cur.KeyID() != next || len(others) != 1 || others[0].KeyID() != first.KeyID() {
		t.Fatalf("after promotion: current %s, others %v; want %s signing and %s verifying", cur.KeyID(), kidsOf(others), next, first.KeyID())
	}
	// Past its retention the previous key is no longer trusted.
	mustLoad(t, storage, t0.Add(time.Hour), 0)

	// A second rotation after the retention deletes the expired key.
	if _, err := stageStoredKey(ctx, storage); err != nil {
		t.Fatal(err)
	}
	if _, _, err := promoteStoredKey(ctx, storage, time.Hour, t0.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	prev, err := listPreviousKeys(ctx, storage)
	if err != nil || len(prev) != 1 || prev[0].key.KeyID() != next {
		t.Fatalf("previous keys after the second rotation: %d (%v); want only %s", len(prev), err, next)
	}
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
