package rehearsal

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"
)

// p99Target is the rehearsal's latency target (docs/rehearsal.md, "Rehearsal").
const p99Target = 50 * time.Millisecond

// afterRun is what the verdict reads from the servers once the fans have
// stopped; with the rehearsal's own records, it is all a verdict is made of.
type afterRun struct {
	inv                  invariants
	invErr               error
	room                 roomCounters
	roomErr              error
	procs                []procUsage
	pool                 bookingPools // the booking service's pools, on PostgreSQL
	poolErr              error
	foyerLog, bookingLog logSummary
}

// verdictFigures are the verdict's judgements, worked out once from the
// recorded inputs, so that the text verdict and the HTML report say the same.
type verdictFigures struct {
	sale     saleJudgement
	fifo     fifoResult
	excluded string // who the FIFO check left out, and why
	groups   []latencyLine
	lag      summary // how late steps started
	total    int     // requests
	p99Met   bool
	fates    requeueFates // the fans the site failed, when the scenario fails checkouts
}

func (r *rehearsal) figures(a afterRun) verdictFigures {
	v := verdictFigures{sale: judgeSale(r.orders, r.cfg.Standing, r.capacity, a.inv, a.invErr), p99Met: true}
	v.fifo, v.excluded = fifoOf(r.fans)
	v.groups, v.lag, v.total = latencyLines(r.workers)
	v.fates = judgeFates(failedRecords(r.fans))
	v.fates.capSetting = r.cfg.Stack.Cap
	v.fates.capMax, v.fates.capRead = capOf(r.series)
	for _, g := range v.groups {
		if g.top && g.sum.p99 >= p99Target {
			v.p99Met = false
		}
	}
	return v
}

// verdict measures what the sale left behind, prints it, and writes the
// report when one was asked for. Only overselling and broken invariants
// fail the command; every other target is reported as met or not.
func (r *rehearsal) verdict() error {
	var a afterRun
	a.inv, a.invErr = r.st.invariants(r.client)
	a.room, a.roomErr = r.st.room(r.client)
	r.procs.sample()
	a.procs = r.procs.snapshot()
	if r.pg != nil {
		r.pg.sample()
		a.pool, a.poolErr = r.st.bookingPool(r.client)
	}
	if r.cfg.Calibration {
		rep, err := r.fairnessSupply()
		c := r.calibrate(rep, err)
		r.calibration = &c
	}
	if r.refunds != nil {
		rep, err := r.fairnessWaitlist()
		j := r.judgeRefunds(rep, err)
		r.refundJudged = &j
	}
	r.st.stop() // the logs are complete once the servers are gone
	a.foyerLog, a.bookingLog = r.st.logProblems()
	v := r.figures(a)
	r.roomRequeued, r.roomRead = a.room.Counters.Requeued, a.roomErr == nil
	var text bytes.Buffer
	r.judge(io.MultiWriter(os.Stdout, &text), a, v)
	if r.calibration != nil {
		r.calibration.print(io.MultiWriter(os.Stdout, &text))
	}
	if r.refundJudged != nil {
		r.refundJudged.print(io.MultiWriter(os.Stdout, &text))
	}
	if r.report != nil {
		if err := r.writeReport(a, v, text.String()); err != nil {
			fmt.Fprintf(os.Stderr, "onsale: the report was not written: %v\n", err)
			if v.sale.err == nil {
				return err
			}
		} else {
			fmt.Printf("\nreport              %s\n", r.report.path)
		}
	}
	r.summary.fates, r.summary.sale, r.summary.requeued = v.fates, v.sale, r.roomRequeued
	if v.sale.err != nil {
		return v.sale.err
	}
	if c := r.calibration; c != nil && !c.ok {
		return fmt.Errorf("%w: %d of %d told unlikely got tickets, %d served after unlikely without at risk (%d excused by a rise), the fairness report %s",
			errCalibration, c.toldServed[2], c.told[2], c.skips, c.skipsExcused, reportState(c))
	}
	if j := r.refundJudged; j != nil {
		if err := j.err(); err != nil {
			return err
		}
	}
	return r.requeueErr(v.fates)
}

// judge prints the verdict on the recorded run to w.
func (r *rehearsal) judge(w io.Writer, a afterRun, v verdictFigures) {
	sale, fifo, excluded := v.sale, v.fifo, v.excluded
	inv, invErr, room, roomErr, procs := a.inv, a.invErr, a.room, a.roomErr, a.procs
	foyerLog, bookingLog := a.foyerLog, a.bookingLog
	fmt.Fprintln(w)
	switch {
	case r.interrupted:
		fmt.Fprintf(w, "interrupted after %.1f s: the figures below are what was measured until then\n", r.elapsed.Seconds())
	case r.timedOut:
		fmt.Fprintf(w, "stopped by -max-time after %.1f s with %d fans not done: the figures below are what was measured until then\n", r.elapsed.Seconds(), r.left.Load())
	default:
		fmt.Fprintf(w, "every fan done after %.1f s\n", r.elapsed.Seconds())
	}

	// The sale.
	fmt.Fprintln(w, "\nsale")
	fmt.Fprintf(w, "  sold / capacity     %d / %d places (booking service's count of tickets)\n", sale.sold, r.capacity)
	if sale.soldOut {
		fmt.Fprintf(w, "  sold out            yes: last place paid at %s; fans' orders reached capacity at %s; the room first said sold_out at %s\n",
			r.lastPaid(), offset(r.live.soldAllSeen.Load()), offset(r.live.soldOutSeen.Load()))
	} else {
		fmt.Fprintf(w, "  sold out            NO: %d places left\n", r.capacity-sale.sold)
	}
	switch {
	case invErr != nil:
		fmt.Fprintf(w, "  invariants          UNAVAILABLE: %v\n", invErr)
	case inv.OK:
		fmt.Fprintf(w, "  invariants          ok (booking service: %d events, %d seats, %d tickets; sold + held <= capacity, one ticket per seat)\n",
			inv.Report.Events, inv.Report.Seats, inv.Report.Tickets)
	default:
		fmt.Fprintf(w, "  invariants          VIOLATED (%d):\n", len(inv.Report.Violations))
		for _, v := range inv.Report.Violations[:min(10, len(inv.Report.Violations))] {
			fmt.Fprintf(w, "                        %s\n", v)
		}
	}
	fmt.Fprintf(w, "  oversold            %d (fans' delivered orders: %d tickets in %d orders, %d seats with more than one ticket, %d zone places over capacity)\n",
		sale.oversold, sale.fanTickets, len(r.orders), sale.seatsOver, sale.zoneOver)

	// The order of the line.
	fmt.Fprintln(w, "\nFIFO")
	fmt.Fprintf(w, "  checked             %d patient fans with a place in line (%d admitted); left out: %s\n", fifo.checked, fifo.admitted, excluded)
	fmt.Fprintf(w, "  keys follow arrival %d inversions (a fan who began joining after another's join completed, with a smaller order_key)\n", fifo.keyInversions)
	fmt.Fprintf(w, "  passes follow keys  %d inversions (a fan told to wait by a poll sent after a larger order_key's pass arrived)\n", fifo.passInversions)
	fmt.Fprintf(w, "  passes follow arrival %d inversions (the same against fans who joined strictly later, admitted or not)\n", fifo.arrivalInversions)
	between := "each while between two of its own polls: it was never told to wait after the larger key was in"
	if fifo.passInversions > 0 {
		between = "some of them told to wait after the larger key was in (the inversions above)"
	}
	fmt.Fprintf(w, "  polling granularity %d fans got their pass after a larger key had one, by at most %v, %s\n",
		fifo.late, fifo.maxLateness.Round(time.Millisecond), between)
	for _, e := range fifo.examples {
		fmt.Fprintf(w, "    e.g. %s\n", e)
	}
	fmt.Fprintf(w, "  passes              %d decoded, %d with a subject another fan's pass had, %d for another room; %d fans saw their position rise between two polls\n",
		len(r.subs), r.dupSubs, r.badAud, r.positionRises())

	// The fans.
	fmt.Fprintln(w, "\nfans")
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
	fmt.Fprintf(w, "  outcomes            %s\n", strings.Join(parts, ", "))
	revoked := 0
	for _, o := range r.orders {
		if o.revoked {
			revoked++
		}
	}
	fmt.Fprintf(w, "  sessions ended      %d of %d buyers saw their pass cleared with their tickets (the origin's revoke)\n", revoked, len(r.orders))
	if roomErr == nil {
		c := room.Counters
		r.summary = runSummary{soldAt: r.live.soldAllSeen.Load(), abandoned: c.Abandoned, skipped: c.Skipped}
		fmt.Fprintf(w, "  ghosts              %d places made by cookieless bots; %d slots spent on places never claimed (abandoned in grace), %d ghost places skipped without a slot; %d places left in line, %d of them live\n",
			r.bots.Load(), c.Abandoned, c.Skipped, room.Places, room.Waiting)
		fmt.Fprintf(w, "  room                %d keys issued, %d admitted, %d claimed, %d abandoned in grace; node: %d joins (%d admitted at once), %d polls, %d claims, %d revokes, %d passes refused, %d store errors; sold_out %v\n",
			c.Seq, c.Admitted, c.Claimed, c.Abandoned, room.Node.Joins, room.Node.DirectAdmits, room.Node.Polls, room.Node.Claims, room.Node.Revokes, room.Node.Rejected, room.Node.StoreErrors, room.Settings.SoldOut)
	} else {
		fmt.Fprintf(w, "  room                counters unavailable: %v\n", roomErr)
	}
	if len(r.notes) > 0 {
		fmt.Fprintln(w, "  unexpected answers:")
		for _, n := range sortedNotes(r.notes) {
			fmt.Fprintf(w, "    %6d  %s\n", r.notes[n], n)
		}
	}

	// Latency and throughput.
	groups, lag, total := v.groups, v.lag, v.total
	fmt.Fprintf(w, "\nlatency of every request the fans made (target: p99 < %v)\n", p99Target)
	fmt.Fprintf(w, "  %-10s %9s %9s %9s %9s %12s  %s\n", "", "requests", "p50", "p99", "max", "p99 if due", "answers")
	var p99s []string
	for _, g := range groups {
		mark := ""
		if g.top {
			state := "under"
			if g.sum.p99 >= p99Target {
				mark, state = "  over target", "OVER"
			}
			p99s = append(p99s, fmt.Sprintf("%s %s %s", g.name, ms(g.sum.p99), state))
		}
		fmt.Fprintf(w, "  %-10s %9d %9s %9s %9s %12s  %s%s\n", g.name, g.sum.n, ms(g.sum.p50), ms(g.sum.p99), ms(g.sum.max), ms(g.due.p99), g.answers, mark)
	}
	fmt.Fprintf(w, "  p50, p99, max: from sending a request to its answer. \"p99 if due\": from when the fan meant to send it, which adds\n")
	fmt.Fprintf(w, "  the simulator's own backlog when every worker was busy: steps started p50 %s, p99 %s, max %s late\n",
		ms(lag.p50), ms(lag.p99), ms(lag.max))
	printWhereTimeWent(w, whereTimeWent(r.workers))
	r.printTimeline(w)
	peak, peakAt := 0, 0
	for i := range r.live.perSecond {
		if n := int(r.live.perSecond[i].Load()); n > peak {
			peak, peakAt = n, i
		}
	}
	fmt.Fprintf(w, "\nthroughput            %d requests in %.1f s: %.0f req/s on average, %d in the busiest second (second %d)\n",
		total, r.elapsed.Seconds(), float64(total)/r.elapsed.Seconds(), peak, peakAt)

	// Memory and CPU.
	fmt.Fprintln(w, "\nmemory and CPU (peak resident set from /proc; CPU time used)")
	for _, p := range procs {
		fmt.Fprintf(w, "  %-20s %9s  %6.1f s CPU\n", p.name, mib(p.peakRSS), p.cpu.Seconds())
	}
	var ours time.Duration
	for _, p := range procs {
		ours += p.cpu
	}
	if r.pg != nil {
		cpu, n := r.pg.total()
		ours += cpu
		fmt.Fprintf(w, "  %-20s %9s  %6.1f s CPU  (%d backends of the booking database; their memory is mostly shared buffers, not shown)\n", "postgres", "", cpu.Seconds(), n)
		if a.poolErr != nil {
			fmt.Fprintf(w, "  booking's pool      unavailable: %v\n", a.poolErr)
		} else {
			fmt.Fprintf(w, "  booking's pool      %s\n", a.pool.requests)
			if bg := a.pool.background; bg != nil {
				fmt.Fprintf(w, "  background pool     %s\n", bg)
			}
		}
	}
	if r.totalRun > 0 {
		fmt.Fprintf(w, "  machine: %d CPUs, busy %.0f%% of the run (%.0f s of %.0f s); the processes above used %.0f s of it, the rest was the kernel's and other processes'\n",
			runtime.NumCPU(), 100*r.busyRun.Seconds()/r.totalRun.Seconds(), r.busyRun.Seconds(), r.totalRun.Seconds(), ours.Seconds())
	}
	var mem runtime.MemStats
	runtime.ReadMemStats(&mem)
	fmt.Fprintf(w, "  simulator: %d fans in %d workers, at most %d goroutines, Go heap now %s (of %s from the OS)\n",
		len(r.fans), r.cfg.Workers, r.maxGor.Load(), mib(int64(mem.HeapAlloc)), mib(int64(mem.Sys)))

	if r.failsCheckouts() {
		r.printFates(w, v)
	}

	fmt.Fprintln(w, "\nlogs")
	fmt.Fprintf(w, "  foyer               %d lines, %d warnings or errors\n", foyerLog.lines, foyerLog.problems)
	for _, s := range foyerLog.samples {
		fmt.Fprintf(w, "    %s\n", s)
	}
	fmt.Fprintf(w, "  booking             %d lines, %d warnings or errors\n", bookingLog.lines, bookingLog.problems)
	for _, s := range bookingLog.samples {
		fmt.Fprintf(w, "    %s\n", s)
	}

	fmt.Fprintln(w, "\ntargets (sold out, 0 oversold, FIFO order kept, p99 < 50 ms)")
	fmt.Fprintf(w, "  sold out            %s\n", met(sale.soldOut))
	fmt.Fprintf(w, "  0 oversold          %s\n", met(sale.proven()))
	fmt.Fprintf(w, "  FIFO order kept     %s\n", met(fifo.ok()))
	fmt.Fprintf(w, "  p99 < 50 ms         %s (%s)\n", met(v.p99Met), strings.Join(p99s, ", "))
	if r.failsCheckouts() && r.retryOn() {
		fmt.Fprintf(w, "  0 failed fans behind their place  %s (%d of %d the site failed; requeued first and in order)\n", met(v.fates.behindOK()), v.fates.behind, v.fates.failed)
	}
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
