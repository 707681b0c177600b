package rehearsal

import (
	"fmt"
	"time"
)

// printTimeline shows the run in about thirty windows of whole tens of
// seconds: where in the sale the tail latencies were.
func (r *rehearsal) printTimeline() {
	var reqs []reqSample
	var lags []lagSample
	for _, w := range r.workers {
		reqs = append(reqs, w.reqs...)
		lags = append(lags, w.lags...)
	}
	window := max(10*time.Second, (r.elapsed / 30).Truncate(10*time.Second))
	tl := timeline(reqs, lags, window, p99Target)
	fmt.Printf("  timeline, %v windows:  req/s, p99 of join / poll / shop, share at or over %v, schedule lag p99,\n    machine CPU busy (all processes; \"not ours\": the kernel's and other processes' share)\n", window, p99Target)
	for _, w := range tl {
		// The machine's busy share, sampled each second, over the window.
		var cpu, peak, other float64
		var secs int
		for i := int(w.from / time.Second); i < int((w.from+window)/time.Second) && i < len(r.cpuBySec); i++ {
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
			if w.p99[g] >= 0 {
				p[g] = ms(w.p99[g])
			}
		}
		span := max(time.Millisecond, min(window, r.elapsed-w.from)) // the last window is cut short
		fmt.Printf("    %4.0f s  %6.0f/s  %9s %9s %9s  %5.1f%%  lag %9s  cpu %3.0f%% (busiest second %3.0f%%, not ours %2.0f%%)\n", w.from.Seconds(), float64(w.requests)/span.Seconds(),
			p[0], p[1], p[2], 100*float64(w.over)/float64(max(1, w.requests)), ms(w.lagP99), 100*cpu/float64(max(1, secs)), 100*peak, 100*other/float64(max(1, secs)))
	}
}
