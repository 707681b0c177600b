package bench

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/foyer-dev/foyer/internal/redistest"
)

// TestScaleOfTheLineIsFlat runs the scale bench's scenario on lines of
// 300,000 and 1,000,000 places (both longer than one step's counting budget,
// waitingroom.LiveStepBlocks blocks) on a private redis-server, and requires
// a controller step to run as many Redis commands on both, in one round
// trip, a poll to allocate as much on both, and the fan at the last place to
// be told the live places ahead of them (Tail.Check). Commands are counted,
// not timed: a step that recounted every block of the line each second ran
// three times as many on the longer line.
func TestScaleOfTheLineIsFlat(t *testing.T) {
	srv := redistest.StartServer(t, nil)
	client := redis.NewClient(&redis.Options{Addr: srv.Addr, PoolSize: 8})
	admin := redis.NewClient(&redis.Options{Addr: srv.Addr, PoolSize: 1})
	t.Cleanup(func() { client.Close(); admin.Close() })
	ctx := context.Background()
	var points []ScalePoint
	for _, n := range []uint64{300_000, 1_000_000} {
		if err := admin.FlushAll(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		p, err := ScaleRun(ctx, client, admin, n)
		if err != nil {
			t.Fatalf("%d places: %v", n, err)
		}
		t.Logf("%d places: step %.1f commands (%.1f sent), poll %.0f allocs, snapshot %d bytes, %d key bytes; the last fan at %d ahead (computed %d±%d), ETA %d s (computed %d s)",
			n, p.StepCalls, p.StepSent, p.PollAlloc, p.SnapBytes, p.KeyBytes, p.Last.Position, p.Last.Expect, p.Last.Slack, p.Last.ETA, p.Last.ExpectETA)
		if err := p.Last.Check(); err != nil {
			t.Errorf("%d places: %v", n, err)
		}
		if p.StepSent != 1 {
			t.Errorf("%d places: a step sent %.1f commands, want 1 (one script)", n, p.StepSent)
		}
		points = append(points, p)
	}
	short, long := points[0], points[1]
	if long.StepCalls > 1.15*short.StepCalls {
		t.Errorf("a step runs %.1f Redis commands on %d places against %.1f on %d: its cost grows with the line",
			long.StepCalls, long.Places, short.StepCalls, short.Places)
	}
	if long.PollAlloc > short.PollAlloc {
		t.Errorf("a poll allocates %.0f times on %d places against %.0f on %d", long.PollAlloc, long.Places, short.PollAlloc, short.Places)
	}
	// Redis holds what the polling fans' windows need and two bytes per
	// LiveBlock places of counts: far below a bit per place.
	if bits := 8 * float64(long.KeyBytes) / float64(long.Places); bits > 4 {
		t.Errorf("the room's keys hold %.1f bits per place on %d places", bits, long.Places)
	}
}
