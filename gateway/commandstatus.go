package gateway

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// writeSummary prints a room as `foyer waiting-room status` shows it: what
// an operator checks first during an on-sale, on a screen's width.
func writeSummary(w io.Writer, v roomView) error {
	s := v.Settings
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := v.Room
	if s.Title != "" {
		head += " - " + s.Title
	}
	fmt.Fprintln(tw, head)
	fmt.Fprintf(tw, "  state\t%s\n", describeState(v))
	store := "healthy"
	if !v.StoreHealthy {
		store = "UNREACHABLE: nobody is admitted, new visitors get 503"
	}
	fmt.Fprintf(tw, "  store\t%s (as of %s)\n", store, v.AsOf.Local().Format(time.TimeOnly))
	fmt.Fprintf(tw, "  waiting\t%s\n", describeLine(v))
	fmt.Fprintf(tw, "  active\t%d of %d (%d admitted not yet in, %d returning)\n", v.Active, s.TotalActiveUsers, v.Pending, v.Returning)
	rate := fmt.Sprintf("%d/min allowed", s.NewUsersPerMinute)
	if v.ServingRatePerMinute != nil {
		rate += fmt.Sprintf(", %.1f/min measured", *v.ServingRatePerMinute)
	}
	fmt.Fprintf(tw, "  rate\t%s\n", rate)
	fmt.Fprintf(tw, "  session\t%s, %s\n", shortDuration(s.SessionDuration), s.QueueingMethod)
	if sched := schedule(s); sched != "" {
		fmt.Fprintf(tw, "  schedule\t%s\n", sched)
	}
	if v.CurrentPhase != nil || v.NextPhase != nil {
		fmt.Fprintf(tw, "  phase\t%s\n", describePhases(v.CurrentPhase, v.NextPhase))
	}
	c := v.Counters
	fmt.Fprintf(tw, "  counters\tseq %d, serving %d, admitted %d, claimed %d, abandoned %d, ghosts skipped %d, sessions idled out %d\n",
		c.Seq, c.Serving, c.Admitted, c.Claimed, c.Abandoned, c.Skipped, c.IdledOut)
	if len(v.Overrides) > 0 {
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(v.Overrides)) {
			parts = append(parts, fmt.Sprintf("%s=%v", k, v.Overrides[k]))
		}
		fmt.Fprintf(tw, "  overrides\tv%d: %s\n", v.OverridesVersion, strings.Join(parts, " "))
	}
	n := v.Node
	fmt.Fprintf(tw, "  this node\tjoins %d, polls %d, claims %d, passes rejected %d, revokes %d, store errors %d, reseeds %d\n",
		n.Joins, n.Polls, n.Claims, n.PassesRejected, n.Revokes, n.StoreErrors, n.Reseeds)
	return tw.Flush()
}

// describeLine says who is waiting and when the last of them goes in. An
// empty line has nobody last in it: the API's wait of 0 s for it is not
// printed as "last in line in about 0s".
func describeLine(v roomView) string {
	switch {
	case v.Places == 0:
		return "nobody is waiting"
	case v.Waiting == 0:
		return "nobody is waiting: 0 live of " + count(v.Places, "place", "places")
	}
	line := fmt.Sprintf("%d live of %s", v.Waiting, count(v.Places, "place", "places"))
	if v.LastInLineETASeconds != nil && *v.LastInLineETASeconds > 0 {
		line += ", last in line in about " + shortDuration(time.Duration(*v.LastInLineETASeconds)*time.Second)
	}
	return line
}

// describeState says whether the line moves, and if not, why.
func describeState(v roomView) string {
	s := v.Settings
	switch {
	case s.SoldOut && s.Waitlist:
		return v.Phase + ", sold out, the line a waitlist (let in as tickets come back)"
	case s.SoldOut:
		return v.Phase + ", sold out"
	case s.QueueingMethod == "reject":
		return v.Phase + ", turning new visitors away (queueing_method reject)"
	case s.Paused:
		return v.Phase + ", paused"
	case s.QueueAll:
		return v.Phase + ", holding everyone (queue_all)"
	case v.Admitting:
		return v.Phase + ", admitting"
	}
	return v.Phase
}

// describePhases says which scheduled phase is in force and which is next.
func describePhases(cur, next *phaseView) string {
	parts := []string{"none now"}
	if cur != nil {
		parts[0] = fmt.Sprintf("%s until %s", cur.Name, rfc3339(cur.End))
	}
	if next != nil {
		line := fmt.Sprintf("next %s from %s to %s", next.Name, rfc3339(next.Start), rfc3339(next.End))
		if next.PrequeueStart != nil {
			line += ", its own pre-queue from " + rfc3339(*next.PrequeueStart)
			if next.ShuffleAtStart {
				line += " (a fair draw at its start)"
			}
		}
		parts = append(parts, line)
	}
	return strings.Join(parts, "; ")
}

func schedule(s settingsView) string {
	var parts []string
	for _, p := range []struct {
		name string
		at   time.Time
	}{
		{"pre-queue", s.PrequeueStart}, {"start", s.EventStart}, {"end", s.EventEnd},
	} {
		if !p.at.IsZero() {
			parts = append(parts, p.name+" "+rfc3339(p.at))
		}
	}
	if s.ShuffleAtEventStart {
		parts = append(parts, "fair draw at start")
	}
	return strings.Join(parts, ", ")
}
