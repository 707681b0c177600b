package rehearsal

import (
	"fmt"
	"io"
	"time"
)

// printTimeline shows the run in about thirty windows of whole tens of
// seconds: where in the sale the tail latencies were.
func (r *rehearsal) printTimeline(w io.Writer) {
	var reqs []reqSample
	var lags []lagSample
	for _, w := range r.workers {
		reqs = append(reqs, w.reqs...)
		lags = append(lags, w.lags...)
	}
	window := max(10*time.Second, (r.elapsed / 30).Truncate(10*time.Second))
	tl := timeline(reqs, lags, window, p99Target)
	fmt.Fprintf(w, "  timeline, %v windows:  req/s, p99 of join / poll / shop, share at or over %v, schedule lag p99,\n    machine CPU busy (all processes; \"not ours\": the kernel's and other processes' share)\n", window, p99Target)
	for _, win := range tl {
		// The machine's busy share, sampled each second, over the window.
		var cpu, peak, other float64
		var secs int
		for i := int(win.from / time.Second); i < int((win.from+window)/time.Second) && i < len(r.cpuBySec); i++ {
			if r.cpuBySec[i] > 0 {
				cpu += r.cpuBySec[i]
				other += r.otherBySec[i]
				peak = max(peak, r.cpuBySec[i])
				secs++
			}
		}
		var p [3]string
		for g := range 3 {
			p[g] = "-"
			if win.p99[g] >= 0 {
				p[g] = ms(win.p99[g])
			}
		}
		span := max(time.Millisecond, min(window, r.elapsed-win.from)) // the last window is cut short
		fmt.Fprintf(w, "    %4.0f s  %6.0f/s  %9s %9s %9s  %5.1f%%  lag %9s  cpu %3.0f%% (busiest second %3.0f%%, not ours %2.0f%%)\n", win.from.Seconds(), float64(win.requests)/span.Seconds(),
			p[0], p[1], p[2], 100*float64(win.over)/float64(max(1, win.requests)), ms(win.lagP99), 100*cpu/float64(max(1, secs)), 100*peak, 100*other/float64(max(1, secs)))
	}
}
