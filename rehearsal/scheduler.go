package rehearsal

import (
	"container/heap"
	"context"
	"math"
	"sync"
	"time"
)

// scheduler holds every fan's next step, by the time it is due, and hands
// due steps to a bounded pool of workers. A fan is an entry in a heap, not a
// goroutine: a hundred thousand fans cost a hundred thousand small entries,
// and only as many requests are in flight as there are workers.
//
// Times are offsets from the start of the rehearsal.
type scheduler struct {
	mu   sync.Mutex
	h    dueHeap
	wake chan struct{}
}

// dueStep is one fan's next step and when it was due; a worker compares
// that with the time it picked the step up, so that a simulator too busy to
// keep its own schedule shows up as lag rather than as good latencies.
type dueStep struct {
	fan int32
	at  time.Duration
}

func newScheduler(capacity int) *scheduler {
	return &scheduler{h: make(dueHeap, 0, capacity), wake: make(chan struct{}, 1)}
}

// push schedules fan's next step at at. The hand-out loop is woken only
// when the step is now the earliest: otherwise the timer it sleeps on
// already fires soon enough, and waking it for every step was a goroutine
// switch per request.
func (s *scheduler) push(fan int32, at time.Duration) {
	s.mu.Lock()
	heap.Push(&s.h, dueStep{fan: fan, at: at})
	first := s.h[0].fan == fan && s.h[0].at == at
	s.mu.Unlock()
	if !first {
		return
	}
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// next pops the earliest step if it is due at now. Otherwise it reports how
// long until the earliest is due, or ok=false with wait<0 when nothing is
// scheduled.
func (s *scheduler) next(now time.Duration) (d dueStep, ok bool, wait time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.h) == 0 {
		return dueStep{}, false, -1
	}
	if top := s.h[0]; top.at > now {
		return dueStep{}, false, top.at - now
	}
	return heap.Pop(&s.h).(dueStep), true, 0
}

// take is a busy worker's next step without waiting: the one the hand-out
// loop already holds for the next free worker, else the earliest due one
// from the heap. A worker that finishes a step while others are due so
// takes the next itself, without a hand-off through the loop's goroutine.
func (s *scheduler) take(handed <-chan dueStep, now time.Duration) (dueStep, bool) {
	select {
	case d := <-handed:
		return d, true
	default:
	}
	d, ok, _ := s.next(now)
	return d, ok
}

// len is the number of steps scheduled.
func (s *scheduler) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.h)
}

// run hands due steps to out until ctx ends. A send blocks while every
// worker is busy: the step then starts late, and the worker records by how
// much.
func (s *scheduler) run(ctx context.Context, t0 time.Time, out chan<- dueStep) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		d, ok, wait := s.next(time.Since(t0))
		if ok {
			select {
			case out <- d:
				continue
			case <-ctx.Done():
				return
			}
		}
		if wait < 0 {
			wait = time.Hour // nothing scheduled: sleep until a push
		}
		timer.Reset(wait)
		select {
		case <-timer.C:
		case <-s.wake:
			if !timer.Stop() {
				select {
				case <-timer.C:
				default:
				}
			}
		case <-ctx.Done():
			return
		}
	}
}

type dueHeap []dueStep

func (h dueHeap) Len() int { return len(h) }
func (h dueHeap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].fan < h[j].fan
}
func (h dueHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *dueHeap) Push(x any)   { *h = append(*h, x.(dueStep)) }
func (h *dueHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// arrivals spreads n arrivals over the window as a stampede: the arrival
// rate starts at its peak and decays exponentially with a time constant of
// an eighth of the window, truncated at its end. About 63% of the fans come
// in the first eighth, 86% in the first quarter, and the last ones trickle in
// at the end of the window. The times are the quantiles of that distribution
// at (i+0.5)/n, so they are sorted, deterministic, and the same from one run
// to the next: only which fan arrives when is drawn at random.
func arrivals(n int, window time.Duration) []time.Duration {
	out := make([]time.Duration, n)
	if n == 0 || window <= 0 {
		return out
	}
	tau := window.Seconds() / 8
	mass := 1 - math.Exp(-window.Seconds()/tau) // the truncated part
	for i := range out {
		u := (float64(i) + 0.5) / float64(n)
		t := -tau * math.Log(1-u*mass)
		out[i] = min(window, time.Duration(t*float64(time.Second)))
	}
	return out
}
