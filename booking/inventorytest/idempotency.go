package inventorytest

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/booking"
)

// testIdempotencyHeaders: a replay carries the headers the first response
// saved, exactly.
func testIdempotencyHeaders(t *testing.T, f *fixture) {
	k := booking.IdempotencyKey{Scope: "alice", Key: "hdr", Fingerprint: "fp"}
	if _, err := f.s.BeginIdempotent(f.ctx, k, Epoch); err != nil {
		t.Fatal(err)
	}
	h := http.Header{"Location": {"/api/holds/hld_1"}, booking.CommandHeader: {booking.CommandSoldOut}}
	if err := f.s.CompleteIdempotent(f.ctx, k, booking.SavedResponse{Status: 201, Body: []byte(`{}`), Header: h}); err != nil {
		t.Fatal(err)
	}
	r, err := f.s.BeginIdempotent(f.ctx, k, Epoch.Add(time.Minute))
	if err != nil || r.State != booking.IdempotencyReplay {
		t.Fatalf("replay = %+v, %v", r, err)
	}
	if got := r.Response.Header; got.Get("Location") != "/api/holds/hld_1" || got.Get(booking.CommandHeader) != booking.CommandSoldOut || len(got) != 2 {
		t.Fatalf("replayed headers = %v, want %v", got, h)
	}
}

// testIdempotencyPrune: records at or past the cutoff go, in batches of at
// most limit, finished or not; younger ones stay and still replay.
func testIdempotencyPrune(t *testing.T, f *fixture) {
	for i := range 5 {
		k := booking.IdempotencyKey{Scope: "old", Key: fmt.Sprint(i), Fingerprint: "fp"}
		if _, err := f.s.BeginIdempotent(f.ctx, k, Epoch); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 { // some finished, some claims left by a dead process
			if err := f.s.CompleteIdempotent(f.ctx, k, booking.SavedResponse{Status: 200, Body: []byte(`{}`)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	young := booking.IdempotencyKey{Scope: "young", Key: "k", Fingerprint: "fp"}
	if _, err := f.s.BeginIdempotent(f.ctx, young, Epoch.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := f.s.CompleteIdempotent(f.ctx, young, booking.SavedResponse{Status: 200, Body: []byte(`{"young":true}`)}); err != nil {
		t.Fatal(err)
	}
	cutoff := Epoch.Add(30 * time.Minute)
	if n, err := f.s.PruneIdempotency(f.ctx, cutoff, 3); err != nil || n != 3 {
		t.Fatalf("first batch pruned %d, %v; want 3", n, err)
	}
	if n, err := f.s.PruneIdempotency(f.ctx, cutoff, 3); err != nil || n != 2 {
		t.Fatalf("second batch pruned %d, %v; want 2", n, err)
	}
	if n, err := f.s.PruneIdempotency(f.ctx, cutoff, 3); err != nil || n != 0 {
		t.Fatalf("third batch pruned %d, %v; want 0", n, err)
	}
	r, err := f.s.BeginIdempotent(f.ctx, young, Epoch.Add(2*time.Hour))
	if err != nil || r.State != booking.IdempotencyReplay || string(r.Response.Body) != `{"young":true}` {
		t.Fatalf("a young key after pruning = %+v, %v", r, err)
	}
}
