package waitingroom

import (
	"testing"
	"time"
)

// TestShowUpIgnoresOutcomesOfALoss: after a loss the show-up share restarts
// from the one measured before it, and the lapses of places the re-created
// room started with (a re-seed's margin nobody holds) do not count; outcomes
// of places placed after the loss count again once serving has passed them
// by a grace.
func TestShowUpIgnoresOutcomesOfALoss(t *testing.T) {
	const grace = 5 * time.Second
	t0 := time.Unix(1_000_000, 0)
	var f flow
	var c Counters
	// Before the loss: three in four claim.
	for i := range 60 {
		c.Serving++
		if i%4 == 3 {
			c.Abandoned++
		} else {
			c.Claimed++
		}
		c.Seq = c.Serving + 50
		f.add(t0.Add(time.Duration(i)*time.Second), c, false, grace)
	}
	if s := f.showUp(); s < 0.74 || s > 0.76 {
		t.Fatalf("show-up before the loss %.2f, want 0.75", s)
	}
	f.lost()
	at := t0.Add(time.Minute)
	// The re-created room: 50 waiting fans who all claim, then a margin of
	// 30 places nobody holds, which lapse.
	c.Seq += 30
	lossSeq := c.Seq
	for i := range 120 {
		at = at.Add(time.Second)
		if c.Serving < lossSeq {
			c.Serving++
			if c.Serving > lossSeq-30 {
				c.Abandoned++
			} else {
				c.Claimed++
			}
		} else {
			c.Serving++
			c.Claimed++ // fans who joined after the loss all claim
			c.Seq++
		}
		f.add(at, c, false, grace)
		if s := f.showUp(); (s < 0.74 || s > 0.76) && c.Serving < lossSeq+uint64(minRateSpan/time.Second) {
			t.Fatalf("%d s after the loss, serving %d of %d: show-up %.2f, want the prior 0.75", i, c.Serving, lossSeq, s)
		}
	}
	if s := f.showUp(); s != 1 {
		t.Fatalf("show-up once outcomes are clean %.2f, want 1 (everyone placed after the loss claimed)", s)
	}
}
