package rehearsal

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// run plays the on-sale until every fan is done, -max-time passes, or the
// rehearsal is interrupted.
func (r *rehearsal) run(parent context.Context) {
	c := r.cfg
	rng := rand.New(rand.NewPCG(c.Seed, 0x5eed))
	r.fans = behaviours(c.Fans, c.Abandon, c.Late, rng)
	r.sched = newScheduler(c.Fans)
	for i, at := range arrivals(c.Fans, c.Arrival) {
		r.sched.push(int32(i), at)
	}
	r.left.Store(int64(c.Fans))
	r.live.perSecond = make([]atomic.Int64, int(c.MaxTime/time.Second)+2)
	r.cpuBySec = make([]float64, len(r.live.perSecond))
	r.otherBySec = make([]float64, len(r.live.perSecond))

	timed, cancelTimed := context.WithTimeout(parent, c.MaxTime)
	defer cancelTimed()
	ctx, finish := context.WithCancel(timed)
	defer finish()

	r.ours0 = r.ourCPU()
	r.busy0, r.total0, _ = machineCPU()
	r.t0 = time.Now()
	due := make(chan dueStep)
	var wg sync.WaitGroup
	wg.Go(func() { r.sched.run(ctx, r.t0, due) })
	workers := make([]*worker, c.Workers)
	for i := range workers {
		w := &worker{rng: rand.New(rand.NewPCG(c.Seed, uint64(i)+1))}
		workers[i] = w
		wg.Go(func() {
			defer w.conns.closeAll()
			for {
				d, ok := r.sched.take(due, r.now())
				if !ok {
					select {
					case d = <-due:
					case <-ctx.Done():
						return
					}
				}
				if ctx.Err() != nil {
					return
				}
				now := r.now()
				w.due = d.at
				w.lags = append(w.lags, lagSample{at: msOf(now), us: usOf(now - d.at)})
				f := &r.fans[d.fan]
				next, done := r.step(ctx, w, d.fan, f)
				if !done {
					r.sched.push(d.fan, next)
					continue
				}
				if r.left.Add(-1) == 0 {
					finish()
				}
			}
		})
	}
	watchDone := make(chan struct{})
	var watchers sync.WaitGroup
	watchers.Go(func() { r.watch(watchDone) })

	wg.Wait()
	close(watchDone)
	watchers.Wait()
	r.procs.sample()
	r.elapsed = r.now()
	if busy, total, err := machineCPU(); err == nil && r.total0 > 0 {
		r.busyRun, r.totalRun = busy-r.busy0, total-r.total0
	}
	r.timedOut = timed.Err() != nil && r.left.Load() > 0
	r.interrupted = parent.Err() != nil
	for i := range r.fans {
		if f := &r.fans[i]; f.outcome == outNone {
			f.outcome = outCut
		}
	}
	r.workers = workers
}
