package rehearsal

import (
	"fmt"
	"strings"
)

type latencyLine struct {
	name    string
	top     bool    // a group the target applies to
	sum     summary // from sending to the answer
	due     summary // from when the fan meant to send it to the answer
	answers string
}

// latencyLines merges the workers' samples into the verdict's lines: each
// group the target applies to (join, poll, shop), each shopping request, and
// everything; with the summary of how late steps started, and the number
// of requests in all.
func latencyLines(workers []*worker) ([]latencyLine, summary, int) {
	var byKind, fromDue [nKinds]samples
	var class [nKinds][6]int
	var failed [nKinds]int
	var lag samples
	for _, w := range workers {
		for _, s := range w.reqs {
			byKind[s.kind] = append(byKind[s.kind], s.us)
			fromDue[s.kind] = append(fromDue[s.kind], s.us+s.lag)
		}
		for k := range nKinds {
			failed[k] += w.failed[k]
			for c := range 6 {
				class[k][c] += w.byClass[k][c]
			}
		}
		for _, l := range w.lags {
			lag = append(lag, l.us)
		}
	}
	answers := func(ks ...reqKind) string {
		var c [6]int
		f := 0
		for _, k := range ks {
			for i := range 6 {
				c[i] += class[k][i]
			}
			f += failed[k]
		}
		var parts []string
		for i, n := range c {
			if n > 0 {
				parts = append(parts, fmt.Sprintf("%dxx %d", i, n))
			}
		}
		if f > 0 {
			parts = append(parts, fmt.Sprintf("no answer %d", f))
		}
		return strings.Join(parts, ", ")
	}
	merge := func(from *[nKinds]samples, ks ...reqKind) samples {
		var s samples
		for _, k := range ks {
			s = append(s, from[k]...)
		}
		return s
	}
	line := func(name string, top bool, ks ...reqKind) latencyLine {
		return latencyLine{name: name, top: top, sum: summarize(merge(&byKind, ks...)), due: summarize(merge(&fromDue, ks...)), answers: answers(ks...)}
	}
	shop := []reqKind{kindSeats, kindHold, kindCheckout, kindPay, kindOrder}
	all := append([]reqKind{kindJoin, kindPoll}, shop...)
	lines := []latencyLine{line("join", true, kindJoin), line("poll", true, kindPoll), line("shop", true, shop...)}
	for _, k := range shop {
		lines = append(lines, line("  "+k.String(), false, k))
	}
	everything := line("all", false, all...)
	lines = append(lines, everything)
	return lines, summarize(lag), everything.sum.n
}
