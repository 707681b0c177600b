package rehearsal

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/foyer-dev/foyer/internal/servertiming"
)

// servedSample is one shop request's latency as the fan saw it beside the
// booking service's own account of it (its Server-Timing header), in
// microseconds: how long the service had it, and of that how long it waited
// for a database connection and spent in the database.
type servedSample struct {
	kind                    reqKind
	us, total, poolWait, db uint32
	roundTrips              uint16
}

// recordServed keeps the service's account of a shop request, if it gave one.
func (w *worker) recordServed(kind reqKind, latency time.Duration, header string) {
	if kind.groupIndex() != 2 || header == "" {
		return
	}
	f, ok := servertiming.Parse(header)
	if !ok {
		return
	}
	w.served = append(w.served, servedSample{
		kind: kind, us: usOf(latency), total: usOf(f.Total), poolWait: usOf(f.PoolWait), db: usOf(f.DB),
		roundTrips: uint16(min(f.RoundTrips, 1<<16-1)),
	})
}

// servedLine says where the slowest 1% of one kind of shop request spent
// their time, on average.
type servedLine struct {
	name                                  string
	n                                     int     // requests with the service's account
	slowest                               int     // of them, at or over their p99
	latency, service, poolWait, db, other float64 // mean milliseconds
	roundTrips                            float64
}

// whereTimeWent works out, for shop requests as a whole and for each kind,
// how the slowest 1% divide into waiting for a connection, the database,
// the rest of the service's own time, and time outside the service (the
// gateway, the network and waiting for a CPU, which the service cannot see).
func whereTimeWent(workers []*worker) []servedLine {
	var byKind [nKinds][]servedSample
	var all []servedSample
	for _, w := range workers {
		for _, s := range w.served {
			byKind[s.kind] = append(byKind[s.kind], s)
			all = append(all, s)
		}
	}
	lines := []servedLine{slowestShare("shop", all)}
	for _, k := range []reqKind{kindSeats, kindHold, kindCheckout, kindPay, kindOrder} {
		if len(byKind[k]) > 0 {
			lines = append(lines, slowestShare("  "+k.String(), byKind[k]))
		}
	}
	return lines
}

func slowestShare(name string, s []servedSample) servedLine {
	l := servedLine{name: name, n: len(s)}
	if len(s) == 0 {
		return l
	}
	// The slowest 1% (at least one), the tail a p99 describes.
	sorted := slices.Clone(s)
	slices.SortFunc(sorted, func(a, b servedSample) int { return cmp.Compare(b.us, a.us) })
	for _, x := range sorted[:max(1, (len(s)+99)/100)] {
		l.slowest++
		l.latency += float64(x.us)
		l.service += float64(x.total)
		l.poolWait += float64(x.poolWait)
		l.db += float64(x.db)
		l.roundTrips += float64(x.roundTrips)
	}
	n := float64(l.slowest) * 1000 // microseconds to milliseconds
	l.latency, l.service, l.poolWait, l.db = l.latency/n, l.service/n, l.poolWait/n, l.db/n
	l.roundTrips /= float64(l.slowest)
	l.other = max(l.service-l.poolWait-l.db, 0)
	return l
}

// printWhereTimeWent prints the lines, when the service gave any account.
func printWhereTimeWent(w io.Writer, lines []servedLine) {
	if len(lines) == 0 || lines[0].n == 0 {
		return
	}
	fmt.Fprintln(w, "\nwhere the slowest 1% of shop requests spent their time (mean ms; the booking service's Server-Timing)")
	fmt.Fprintf(w, "  %-10s %7s %9s %9s %10s %15s %10s %9s\n", "", "slowest", "latency", "service", "pool wait", "database", "the rest", "outside")
	for _, l := range lines {
		if l.slowest == 0 {
			continue
		}
		fmt.Fprintf(w, "  %-10s %7d %9.1f %9.1f %10.1f %8.1f (%3.1f rt) %9.1f %9.1f\n",
			l.name, l.slowest, l.latency, l.service, l.poolWait, l.db, l.roundTrips, l.other, max(l.latency-l.service, 0))
	}
	fmt.Fprintln(w, "  service: from the request reaching the booking service to its answer's header; pool wait: for a database")
	fmt.Fprintln(w, "  connection; database: sending statements until their answers were read (rt: round trips); outside:")
	fmt.Fprintln(w, "  the gateway, the network and waiting for a CPU, which the service cannot see.")
}
