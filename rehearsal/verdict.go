package rehearsal

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"time"
)

// p99Target is the rehearsal's latency target (README, "Rehearsal").
const p99Target = 50 * time.Millisecond

// errOversold makes the command fail: the one rule that never bends.
var errOversold = errors.New("rehearsal failed: a place was sold twice or an invariant does not hold")

// verdict measures what the sale left behind and prints it. Only overselling
// and broken invariants fail the command; every other target is reported
// as met or not.
func (r *rehearsal) verdict() error {
	inv, invErr := r.st.invariants(r.client)
	room, roomErr := r.st.room(r.client)
	r.procs.sample()
	procs := r.procs.snapshot()
	if r.pg != nil {
		r.pg.sample()
	}
	r.st.stop() // the logs are complete once the servers are gone
	foyerLog, bookingLog := r.st.logProblems()
	seatsOver, zoneOver, fanTickets := r.countTickets()
	fifo, excluded := r.fifo()

	fmt.Println()
	switch {
	case r.interrupted:
		fmt.Printf("interrupted after %.1f s: the figures below are what was measured until then\n", r.elapsed.Seconds())
	case r.timedOut:
		fmt.Printf("stopped by -max-time after %.1f s with %d fans not done: the figures below are what was measured until then\n", r.elapsed.Seconds(), r.left.Load())
	default:
		fmt.Printf("every fan done after %.1f s\n", r.elapsed.Seconds())
	}

	// The sale.
	sold := inv.Report.Tickets
	fmt.Println("\nsale")
	soldOut := invErr == nil && sold >= r.capacity
	fmt.Printf("  sold / capacity     %d / %d places (booking service's count of tickets)\n", sold, r.capacity)
	if soldOut {
		fmt.Printf("  sold out            yes: last place paid at %s; fans' orders reached capacity at %s; the room first said sold_out at %s\n",
			r.lastPaid(), offset(r.live.soldAllSeen.Load()), offset(r.live.soldOutSeen.Load()))
	} else {
		fmt.Printf("  sold out            NO: %d places left\n", r.capacity-sold)
	}
	oversold := seatsOver + zoneOver
	if fanTickets > r.capacity {
		oversold += fanTickets - r.capacity
	}
	invOK := invErr == nil && inv.OK
	switch {
	case invErr != nil:
		fmt.Printf("  invariants          UNAVAILABLE: %v\n", invErr)
	case inv.OK:
		fmt.Printf("  invariants          ok (booking service: %d events, %d seats, %d tickets; sold + held <= capacity, one ticket per seat)\n",
			inv.Report.Events, inv.Report.Seats, inv.Report.Tickets)
	default:
		fmt.Printf("  invariants          VIOLATED (%d):\n", len(inv.Report.Violations))
		for _, v := range inv.Report.Violations[:min(10, len(inv.Report.Violations))] {
			fmt.Printf("                        %s\n", v)
		}
	}
	fmt.Printf("  oversold            %d (fans' delivered orders: %d tickets in %d orders, %d seats with more than one ticket, %d zone places over capacity)\n",
		oversold, fanTickets, len(r.orders), seatsOver, zoneOver)

	// The order of the line.
	fmt.Println("\nFIFO")
	fmt.Printf("  checked             %d patient fans with a place in line (%d admitted); left out: %s\n", fifo.checked, fifo.admitted, excluded)
	fmt.Printf("  keys follow arrival %d inversions (a fan who began joining after another's join completed, with a smaller order_key)\n", fifo.keyInversions)
	fmt.Printf("  passes follow keys  %d inversions (a fan told to wait by a poll sent after a larger order_key's pass arrived)\n", fifo.passInversions)
	fmt.Printf("  passes follow arrival %d inversions (the same against fans who joined strictly later, admitted or not)\n", fifo.arrivalInversions)
	between := "each while between two of its own polls: it was never told to wait after the larger key was in"
	if fifo.passInversions > 0 {
		between = "some of them told to wait after the larger key was in (the inversions above)"
	}
	fmt.Printf("  polling granularity %d fans got their pass after a larger key had one, by at most %v, %s\n",
		fifo.late, fifo.maxLateness.Round(time.Millisecond), between)
	for _, e := range fifo.examples {
		fmt.Printf("    e.g. %s\n", e)
	}
	fmt.Printf("  passes              %d decoded, %d with a subject another fan's pass had, %d for another room; %d fans saw their position rise between two polls\n",
		len(r.subs), r.dupSubs, r.badAud, r.positionRises())

	// The fans.
	fmt.Println("\nfans")
	var outs [nOutcomes]int
	for i := range r.fans {
		outs[r.fans[i].outcome]++
	}
	var parts []string
	for o, n := range outs {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", outcomeNames[o], n))
		}
	}
	fmt.Printf("  outcomes            %s\n", strings.Join(parts, ", "))
	revoked := 0
	for _, o := range r.orders {
		if o.revoked {
			revoked++
		}
	}
	fmt.Printf("  sessions ended      %d of %d buyers saw their pass cleared with their tickets (the origin's revoke)\n", revoked, len(r.orders))
	if roomErr == nil {
		c := room.Counters
		fmt.Printf("  room                %d keys issued, %d admitted, %d claimed, %d abandoned in grace; node: %d joins (%d admitted at once), %d polls, %d claims, %d revokes, %d passes refused, %d store errors; sold_out %v\n",
			c.Seq, c.Admitted, c.Claimed, c.Abandoned, room.Node.Joins, room.Node.DirectAdmits, room.Node.Polls, room.Node.Claims, room.Node.Revokes, room.Node.Rejected, room.Node.StoreErrors, room.Settings.SoldOut)
	} else {
		fmt.Printf("  room                counters unavailable: %v\n", roomErr)
	}
	if len(r.notes) > 0 {
		fmt.Println("  unexpected answers:")
		for _, n := range sortedNotes(r.notes) {
			fmt.Printf("    %6d  %s\n", r.notes[n], n)
		}
	}

	// Latency and throughput.
	groups, lag, total := r.latencies()
	fmt.Printf("\nlatency of every request the fans made (target: p99 < %v)\n", p99Target)
	fmt.Printf("  %-10s %9s %9s %9s %9s %12s  %s\n", "", "requests", "p50", "p99", "max", "p99 if due", "answers")
	p99Met := true
	var p99s []string
	for _, g := range groups {
		mark := ""
		if g.top {
			state := "under"
			if g.sum.p99 >= p99Target {
				mark, p99Met, state = "  over target", false, "OVER"
			}
			p99s = append(p99s, fmt.Sprintf("%s %s %s", g.name, ms(g.sum.p99), state))
		}
		fmt.Printf("  %-10s %9d %9s %9s %9s %12s  %s%s\n", g.name, g.sum.n, ms(g.sum.p50), ms(g.sum.p99), ms(g.sum.max), ms(g.due.p99), g.answers, mark)
	}
	fmt.Printf("  p50, p99, max: from sending a request to its answer. \"p99 if due\": from when the fan meant to send it, which adds\n")
	fmt.Printf("  the simulator's own backlog when every worker was busy: steps started p50 %s, p99 %s, max %s late\n",
		ms(lag.p50), ms(lag.p99), ms(lag.max))
	r.printTimeline()
	peak, peakAt := 0, 0
	for i := range r.live.perSecond {
		if n := int(r.live.perSecond[i].Load()); n > peak {
			peak, peakAt = n, i
		}
	}
	fmt.Printf("\nthroughput            %d requests in %.1f s: %.0f req/s on average, %d in the busiest second (second %d)\n",
		total, r.elapsed.Seconds(), float64(total)/r.elapsed.Seconds(), peak, peakAt)

	// Memory and CPU.
	fmt.Println("\nmemory and CPU (peak resident set from /proc; CPU time used)")
	for _, p := range procs {
		fmt.Printf("  %-20s %9s  %6.1f s CPU\n", p.name, mib(p.peakRSS), p.cpu.Seconds())
	}
	var ours time.Duration
	for _, p := range procs {
		ours += p.cpu
	}
	if r.pg != nil {
		cpu, n := r.pg.total()
		ours += cpu
		fmt.Printf("  %-20s %9s  %6.1f s CPU  (%d backends of the booking database; their memory is mostly shared buffers, not shown)\n", "postgres", "", cpu.Seconds(), n)
	}
	if r.totalRun > 0 {
		fmt.Printf("  machine: %d CPUs, busy %.0f%% of the run (%.0f s of %.0f s); the processes above used %.0f s of it, the rest was the kernel's and other processes'\n",
			runtime.NumCPU(), 100*r.busyRun.Seconds()/r.totalRun.Seconds(), r.busyRun.Seconds(), r.totalRun.Seconds(), ours.Seconds())
	}
	var mem runtime.MemStats
	runtime.ReadMemStats(&mem)
	fmt.Printf("  simulator: %d fans in %d workers, at most %d goroutines, Go heap now %s (of %s from the OS)\n",
		len(r.fans), r.cfg.Workers, r.maxGor.Load(), mib(int64(mem.HeapAlloc)), mib(int64(mem.Sys)))

	fmt.Println("\nlogs")
	fmt.Printf("  foyer               %d lines, %d warnings or errors\n", foyerLog.lines, foyerLog.problems)
	for _, s := range foyerLog.samples {
		fmt.Printf("    %s\n", s)
	}
	fmt.Printf("  booking             %d lines, %d warnings or errors\n", bookingLog.lines, bookingLog.problems)
	for _, s := range bookingLog.samples {
		fmt.Printf("    %s\n", s)
	}

	fmt.Println("\ntargets (sold out, 0 oversold, FIFO order kept, p99 < 50 ms)")
	fmt.Printf("  sold out            %s\n", met(soldOut))
	fmt.Printf("  0 oversold          %s\n", met(oversold == 0 && invOK))
	fmt.Printf("  FIFO order kept     %s\n", met(fifo.ok()))
	fmt.Printf("  p99 < 50 ms         %s (%s)\n", met(p99Met), strings.Join(p99s, ", "))
	switch {
	case oversold > 0 || (invErr == nil && !inv.OK):
		return errOversold
	case invErr != nil:
		return fmt.Errorf("rehearsal failed: the booking service's invariants could not be read, so 0 oversold is not proven: %w", invErr)
	}
	return nil
}

// countTickets counts, from the orders the fans saw delivered, seats with
// more than one ticket and zone places beyond a zone's capacity (the zone
// capacity is the venue's standing places).
func (r *rehearsal) countTickets() (seatsOver, zoneOver, tickets int) {
	perSeat := map[string]int{}
	perZone := map[string]int{}
	for _, o := range r.orders {
		for _, s := range o.seats {
			perSeat[s]++
		}
		for _, z := range o.zones {
			perZone[z]++
		}
		tickets += len(o.seats) + len(o.zones)
	}
	for _, n := range perSeat {
		if n > 1 {
			seatsOver += n - 1
		}
	}
	for _, n := range perZone {
		zoneOver += max(0, n-r.cfg.Standing)
	}
	return seatsOver, zoneOver, tickets
}

// fifo builds the records of the fans the check applies to: patient fans
// who got a place in line. Leavers are left out (they never claim, by
// design) and so are late returners (the room lets them in at the front
// when they come back, by design).
func (r *rehearsal) fifo() (fifoResult, string) {
	var recs []fifoRecord
	var leavers, returners, placeless int
	for i := range r.fans {
		f := &r.fans[i]
		switch {
		case f.behaviour == leaveAtJoin || f.behaviour == leaveInLine:
			leavers++
			continue
		case f.behaviour == lateReturner:
			returners++
			continue
		case f.joinStart < 0:
			placeless++ // arrived after the sale, or never got an answer
			continue
		}
		recs = append(recs, fifoRecord{
			fan: int32(i), joinStart: f.joinStart, joinEnd: f.joinEnd,
			admitted: f.admitted, key: f.key, passAt: f.passAt, lastWait: f.lastWait,
		})
	}
	return checkFIFO(recs), fmt.Sprintf("%d leavers, %d late returners, %d without a place (came after the sell-out or got no answer)", leavers, returners, placeless)
}

func (r *rehearsal) positionRises() int {
	n := 0
	for i := range r.fans {
		if r.fans[i].posRises > 0 {
			n++
		}
	}
	return n
}

// lastPaid is when the last delivered order was paid, from the start.
func (r *rehearsal) lastPaid() string {
	var last time.Time
	for _, o := range r.orders {
		if o.paidAt.After(last) {
			last = o.paidAt
		}
	}
	if last.IsZero() {
		return "-"
	}
	return fmt.Sprintf("%.1f s", last.Sub(r.t0).Seconds())
}

type latencyLine struct {
	name    string
	top     bool    // a group the target applies to
	sum     summary // from sending to the answer
	due     summary // from when the fan meant to send it to the answer
	answers string
}

// latencies merges the workers' samples into the verdict's lines: each
// group the target applies to, each shopping request, and everything.
func (r *rehearsal) latencies() ([]latencyLine, summary, int) {
	var byKind, fromDue [nKinds]samples
	var class [nKinds][6]int
	var failed [nKinds]int
	var lag samples
	for _, w := range r.workers {
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

func sortedNotes(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int { return m[b] - m[a] })
	return keys
}

func offset(ns int64) string {
	if ns <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f s", time.Duration(ns).Seconds())
}

func ms(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}

func met(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}

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
