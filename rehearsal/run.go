package rehearsal

import (
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
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
	if c.Calibration {
		for k := range r.calib.bySec {
			r.calib.bySec[k] = make([]atomic.Int64, len(r.live.perSecond))
		}
	}

	timed, cancelTimed := context.WithTimeout(parent, c.MaxTime)
	defer cancelTimed()
	ctx, finish := context.WithCancel(timed)
	defer finish()

	if c.Bots > 0 {
		// The bots come first: the fans queue behind their places, as
		// behind a crowd of clients that made places and never came back.
		r.sendBots(timed)
	}
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
	if r.refunds != nil {
		watchers.Go(func() { r.refunder(ctx) })
	}

	wg.Wait()
	finish() // the fans are done: so is the refunder
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

// sendBots makes c.Bots places as a client without cookies would: each
// request a new visitor who never comes back, 16 in flight at a time, before
// the fans arrive.
func (r *rehearsal) sendBots(ctx context.Context) {
	n := r.cfg.Bots
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	defer wg.Wait()
	for range n {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			return
		}
		wg.Go(func() {
			defer func() { <-sem }()
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.st.base+r.eventPath, nil)
			if err != nil {
				return
			}
			resp, err := r.client.Do(req)
			if err != nil {
				return
			}
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
			resp.Body.Close()
			for _, ck := range resp.Cookies() {
				if strings.HasSuffix(ck.Name, "_ticket") {
					r.bots.Add(1)
				}
			}
		})
	}
}
