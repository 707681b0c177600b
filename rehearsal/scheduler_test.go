package rehearsal

import (
	"context"
	"slices"
	"testing"
	"time"
)

func TestSchedulerHandsOutStepsInTimeOrder(t *testing.T) {
	s := newScheduler(8)
	if _, ok, wait := s.next(0); ok || wait >= 0 {
		t.Fatalf("empty scheduler: ok %v, wait %v; want nothing to wait for", ok, wait)
	}
	for _, p := range []struct {
		fan int32
		at  time.Duration
	}{{3, 30 * time.Millisecond}, {1, 10 * time.Millisecond}, {2, 20 * time.Millisecond}, {0, 10 * time.Millisecond}} {
		s.push(p.fan, p.at)
	}
	if _, ok, wait := s.next(5 * time.Millisecond); ok || wait != 5*time.Millisecond {
		t.Fatalf("before the first is due: ok %v, wait %v; want 5ms to wait", ok, wait)
	}
	var got []int32
	for {
		d, ok, _ := s.next(25 * time.Millisecond)
		if !ok {
			break
		}
		got = append(got, d.fan)
	}
	// Ties go to the lower fan, so a run is the same from one time to the next.
	if !slices.Equal(got, []int32{0, 1, 2}) {
		t.Fatalf("due at 25ms: %v, want [0 1 2]", got)
	}
	if s.len() != 1 {
		t.Fatalf("%d left, want the one due at 30ms", s.len())
	}
}

func TestSchedulerRunsOnTime(t *testing.T) {
	s := newScheduler(4)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out := make(chan dueStep)
	t0 := time.Now()
	go s.run(ctx, t0, out)
	s.push(2, 60*time.Millisecond)
	s.push(1, 20*time.Millisecond)
	for _, want := range []int32{1, 2} {
		select {
		case d := <-out:
			if d.fan != want {
				t.Fatalf("got fan %d, want %d", d.fan, want)
			}
			if el := time.Since(t0); el < d.at {
				t.Fatalf("fan %d handed out at %v, before it was due at %v", d.fan, el, d.at)
			}
		case <-ctx.Done():
			t.Fatal("the scheduler never handed the step out")
		}
	}
	// A push while the scheduler sleeps on an empty heap wakes it.
	s.push(3, time.Since(t0))
	select {
	case d := <-out:
		if d.fan != 3 {
			t.Fatalf("got fan %d, want 3", d.fan)
		}
	case <-ctx.Done():
		t.Fatal("a push did not wake the scheduler")
	}
}

func TestArrivalsAreAStampede(t *testing.T) {
	window := 80 * time.Second
	at := arrivals(100_000, window)
	if !slices.IsSorted(at) || at[0] < 0 || at[len(at)-1] > window {
		t.Fatalf("arrivals not sorted within [0, %v]: first %v, last %v", window, at[0], at[len(at)-1])
	}
	early := 0
	for _, a := range at {
		if a <= window/8 {
			early++
		}
	}
	// 1 - 1/e of the fans in the first eighth, corrected for the truncation.
	if share := float64(early) / float64(len(at)); share < 0.62 || share > 0.65 {
		t.Fatalf("%.3f of fans in the first eighth, want about 0.632", share)
	}
	if at[len(at)-1] < window*9/10 {
		t.Fatalf("the last fan comes at %v: the tail of the window is empty", at[len(at)-1])
	}
	if len(arrivals(0, window)) != 0 || arrivals(3, 0)[2] != 0 {
		t.Fatal("no fans or no window: want no arrivals, or all at once")
	}
}
