package rehearsal

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"golang.org/x/term"
)

// secondSample is the sale as it stood at the end of one second of the run:
// the fans' own view, and the room's as its admin API told it (when it
// answered). The report draws its timelines from these.
type secondSample struct {
	at                                    time.Duration
	arrived, waiting, admitted, shopping  int64
	bought, places, requests              int64
	roomRead                              bool
	roomActive, roomPending               int
	roomWaiting, roomServing, roomClaimed uint64
}

// watch samples the servers' memory and the sale every second, and shows
// progress until done is closed: a bar redrawn in place on a terminal,
// a plain line every five seconds otherwise (a log, a pipe).
func (r *rehearsal) watch(done <-chan struct{}) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	tty := isTerminal(os.Stderr)
	last, lastAt := int64(0), time.Duration(0)
	busy0, total0, ours0 := r.busy0, r.total0, r.ours0
	for n := 1; ; n++ {
		select {
		case <-done:
			if tty {
				fmt.Fprintln(os.Stderr)
			}
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
		s := r.sampleSecond()
		r.series = append(r.series, s)
		if tty {
			fmt.Fprint(os.Stderr, "\r\033[K"+r.progressBar(s))
			continue
		}
		if n%5 != 0 {
			continue
		}
		rate := float64(s.requests-last) / (s.at - lastAt).Seconds()
		last, lastAt = s.requests, s.at
		sold := ""
		if at := r.live.soldOutSeen.Load(); at > 0 {
			sold = fmt.Sprintf("  sold_out since %.0fs", time.Duration(at).Seconds())
		}
		// The room's own counters say what the fans cannot see: who was
		// let in but has not come back to claim yet.
		room := ""
		if s.roomRead {
			room = fmt.Sprintf("  room: serving %d, active %d, pending %d", s.roomServing, s.roomActive, s.roomPending)
		}
		fmt.Fprintf(os.Stderr, "  %4.0fs  arrived %d  waiting %d  admitted %d  shopping %d  bought %d (%d places)  %.0f req/s%s%s\n",
			s.at.Seconds(), s.arrived, s.waiting, s.admitted, s.shopping, s.bought, s.places, rate, room, sold)
	}
}

// sampleSecond reads the live counters and the room.
func (r *rehearsal) sampleSecond() secondSample {
	l := &r.live
	s := secondSample{
		at: r.now(), arrived: l.arrived.Load(), waiting: l.waiting.Load(), admitted: l.admitted.Load(),
		shopping: l.shopping.Load(), bought: l.bought.Load(), places: l.places.Load(),
	}
	for i := range l.perSecond {
		s.requests += l.perSecond[i].Load()
	}
	if rc, err := r.st.room(r.client); err == nil {
		s.roomRead = true
		s.roomActive, s.roomPending, s.roomWaiting = rc.Active, rc.Pending, rc.Waiting
		s.roomServing, s.roomClaimed = rc.Counters.Serving, rc.Counters.Claimed
	}
	return s
}

// progressBar is one line: how many fans are done, and the sale so far.
func (r *rehearsal) progressBar(s secondSample) string {
	const width = 24
	done := r.cfg.Fans - int(r.left.Load())
	frac := float64(done) / float64(max(1, r.cfg.Fans))
	filled := min(width, int(frac*width))
	rate := 0.0
	if n := len(r.series); n >= 2 {
		prev := r.series[n-2]
		rate = float64(s.requests-prev.requests) / (s.at - prev.at).Seconds()
	}
	// Whole percents rounded down: 100% only once every fan is done.
	return fmt.Sprintf("%4.0fs [%s%s] %3d%% of fans done  waiting %d  shopping %d  sold %d/%d  %.0f req/s",
		s.at.Seconds(), strings.Repeat("█", filled), strings.Repeat("░", width-filled), done*100/max(1, r.cfg.Fans),
		s.waiting, s.shopping, s.places, r.capacity, rate)
}

// isTerminal reports whether f is a terminal, where a line can be redrawn
// (not merely a character device: /dev/null is one too).
func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

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
