package rehearsal

import (
	"fmt"
	"os"
	"runtime"
	"time"
)

// watch samples the servers' memory every second and prints progress every
// five, until done is closed.
func (r *rehearsal) watch(done <-chan struct{}) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	last, lastAt := int64(0), time.Duration(0)
	busy0, total0, ours0 := r.busy0, r.total0, r.ours0
	for n := 1; ; n++ {
		select {
		case <-done:
			return
		case <-tick.C:
		}
		ours := r.ourCPU()
		if busy, total, err := machineCPU(); err == nil && total > total0 {
			if i := int(r.now() / time.Second); i < len(r.cpuBySec) {
				r.cpuBySec[i] = float64(busy-busy0) / float64(total-total0)
				r.otherBySec[i] = max(0, float64(busy-busy0-(ours-ours0))/float64(total-total0))
			}
			busy0, total0 = busy, total
		}
		ours0 = ours
		r.maxGor.Store(max(r.maxGor.Load(), int64(runtime.NumGoroutine())))
		if n%5 != 0 {
			continue
		}
		now := r.now()
		var total int64
		for i := range r.live.perSecond {
			total += r.live.perSecond[i].Load()
		}
		rate := float64(total-last) / (now - lastAt).Seconds()
		last, lastAt = total, now
		l := &r.live
		sold := ""
		if at := l.soldOutSeen.Load(); at > 0 {
			sold = fmt.Sprintf("  sold_out since %.0fs", time.Duration(at).Seconds())
		}
		// The room's own counters say what the fans cannot see: who was
		// let in but has not come back to claim yet.
		room := ""
		if rc, err := r.st.room(r.client); err == nil {
			room = fmt.Sprintf("  room: serving %d, active %d, pending %d", rc.Counters.Serving, rc.Active, rc.Pending)
		}
		fmt.Fprintf(os.Stderr, "  %4.0fs  arrived %d  waiting %d  admitted %d  shopping %d  bought %d (%d places)  %.0f req/s%s%s\n",
			now.Seconds(), l.arrived.Load(), l.waiting.Load(), l.admitted.Load(), l.shopping.Load(), l.bought.Load(), l.places.Load(), rate, room, sold)
	}
}

// ourCPU samples the CPU time our processes have used so far: the servers,
// the simulator, and the booking database's backends.
func (r *rehearsal) ourCPU() time.Duration {
	r.procs.sample()
	var sum time.Duration
	for _, p := range r.procs.snapshot() {
		sum += p.cpu
	}
	if r.pg != nil {
		r.pg.sample()
		cpu, _ := r.pg.total()
		sum += cpu
	}
	return sum
}
