package rehearsal

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
)

// errRequeueBehind fails a rehearsal with the booking service's retry on in
// which a fan the site failed ended behind their place, or the requeued did
// not go in first and in order (docs/rehearsal.md, "An origin that fails 2%
// of checkouts").
var errRequeueBehind = errors.New("rehearsal: a fan the site failed ended behind their place in line")

// failsCheckouts reports whether this run's booking service fails a share
// of checkouts on purpose.
func (r *rehearsal) failsCheckouts() bool { return r.cfg.Stack.FailPayments > 0 }

// retryOn reports whether the booking service asks for requeues this run.
func (r *rehearsal) retryOn() bool { return !r.cfg.Stack.NoRetry }

func (r *rehearsal) requeueErr(q requeueFates) error {
	if !r.failsCheckouts() || !r.retryOn() || q.behindOK() {
		return nil
	}
	return fmt.Errorf("%w: %d behind (passed by up to %d), %d requeued kept waiting after the line got in, %d out of the order requeued",
		errRequeueBehind, q.behind, q.maxPassedBy, q.lineFirst, q.orderInversions)
}

// fateRow is one line of the fates' table: its name and a value per run.
type fateRow struct {
	Name   string
	Values []string
	Bad    bool // the with-retry value misses the scenario's target
}

// fateColumn is one run's figures, as the table shows them.
type fateColumn struct {
	fates    requeueFates
	sale     saleJudgement
	requeued uint64 // the room's count
	retry    bool
}

// fateRows words the fates of the fans the site failed, a column per run
// (without retry first), for the text verdict and the report alike.
func fateRows(cols []fateColumn) []fateRow {
	row := func(name string, bad func(c fateColumn) bool, f func(c fateColumn) string) fateRow {
		out := fateRow{Name: name}
		for _, c := range cols {
			out.Values = append(out.Values, f(c))
			if c.retry && bad != nil && bad(c) {
				out.Bad = true
			}
		}
		return out
	}
	n := func(v int) string { return strconv.Itoa(v) }
	return []fateRow{
		row("booking service's retry", nil, func(c fateColumn) string {
			if c.retry {
				return "sent"
			}
			return "suppressed"
		}),
		row("fans the site failed", nil, func(c fateColumn) string { return n(c.fates.failed) }),
		row("requeued (fans / room's count)", nil, func(c fateColumn) string {
			return fmt.Sprintf("%d / %d", c.fates.requeued, c.requeued)
		}),
		row("let in again", nil, func(c fateColumn) string { return n(c.fates.readmitted) }),
		row("got tickets", nil, func(c fateColumn) string { return n(c.fates.bought) }),
		row("gave up after the failure", nil, func(c fateColumn) string { return n(c.fates.gaveUp) }),
		row("kept their session (a later try went through)", nil, func(c fateColumn) string { return n(c.fates.kept) }),
		row("ended behind their place (most passed by)", func(c fateColumn) bool { return c.fates.behind > 0 }, func(c fateColumn) string {
			return fmt.Sprintf("%d (%d)", c.fates.behind, c.fates.maxPassedBy)
		}),
		row("waited in line in all, median / max", nil, func(c fateColumn) string {
			return fmt.Sprintf("%s / %s", secs(c.fates.waitP50), secs(c.fates.waitMax))
		}),
		row("requeued kept waiting after the line got in", func(c fateColumn) bool { return c.fates.lineFirst > 0 }, func(c fateColumn) string { return n(c.fates.lineFirst) }),
		row("requeued let in out of the order requeued", func(c fateColumn) bool { return c.fates.orderInversions > 0 }, func(c fateColumn) string { return n(c.fates.orderInversions) }),
		row("oversold", func(c fateColumn) bool { return c.sale.oversold > 0 }, func(c fateColumn) string { return n(c.sale.oversold) }),
		row("invariants (no paid order without tickets, sold + held <= capacity)", func(c fateColumn) bool { return !c.sale.invOK }, func(c fateColumn) string {
			if c.sale.invOK {
				return "ok"
			}
			return "NOT ok"
		}),
		row("most sessions at once / cap", func(c fateColumn) bool { return !c.fates.capOK() }, func(c fateColumn) string {
			if !c.fates.capRead {
				return "unread / " + n(c.fates.capSetting)
			}
			return fmt.Sprintf("%d / %d", c.fates.capMax, c.fates.capSetting)
		}),
	}
}

// fateColumns are the runs to set side by side: the baseline without retry,
// when there is one, then this run.
func (r *rehearsal) fateColumns(v verdictFigures) []fateColumn {
	var cols []fateColumn
	if b := r.baseline; b != nil {
		cols = append(cols, fateColumn{fates: b.fates, sale: b.sale, requeued: b.requeued})
	}
	return append(cols, fateColumn{fates: v.fates, sale: v.sale, requeued: r.roomRequeued, retry: r.retryOn()})
}

// printFates prints the fans the site failed and where they ended.
func (r *rehearsal) printFates(w io.Writer, v verdictFigures) {
	cols := r.fateColumns(v)
	fmt.Fprintf(w, "\nfans the site failed (%.3g%% of payments failed by the booking service's rehearsal fault, %d attempts each)\n",
		100*r.cfg.Stack.FailPayments, r.cfg.Stack.FailAttempts)
	if len(cols) > 1 {
		fmt.Fprintf(w, "  %-70s %14s %14s\n", "", "without retry", "with retry")
	}
	for _, row := range fateRows(cols) {
		fmt.Fprintf(w, "  %-70s", row.Name)
		for _, val := range row.Values {
			fmt.Fprintf(w, " %14s", val)
		}
		if row.Bad {
			fmt.Fprint(w, "  MISSED")
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "  behind: passed by a fan behind them in line let in after the failure while they were kept out (told to wait, or gone);")
	fmt.Fprintln(w, "  waited: before their first pass, and from the failure to being let in again")
	if r.retryOn() {
		fmt.Fprintf(w, "  0 failed fans behind their place, requeued first and in order: %s\n", met(v.fates.behindOK()))
	}
}

func secs(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }
