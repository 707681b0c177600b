package waitingroom

import (
	"math"
	"time"
)

// The waitlist (docs/waitlist.md): with the waitlist setting on, a sold-out
// room keeps its line. Fans keep their places (state "waitlist"), newcomers
// join at the back, and nobody is let in until the supply comes back: then
// each controller step lets in, from the front and in order, as many fans
// as the units that came back serve, within the rate and the cap. The store
// does the accounting in the step itself, atomically, so that every node
// sharing it agrees and a unit that came back reaches one fan.
//
// The accounting: the units let in for (owed) are counted out of the last
// supply reported. A fall of the supply (a hold, an order) pays the oldest
// of them; those not paid run out when the session they were let in for
// could have ended (grace + session), and the units count as free again.
// So the room lets in for at most what the origin says is free, less what
// fans it let in may still take.

// WaitlistState is the store's record of the room's waitlist, carried by
// every snapshot.
type WaitlistState struct {
	// Since is when the line became a waitlist; zero while it is not one.
	Since time.Time
	// From is serving when it began: places from it on that the line
	// reached while waitlisting went in on units that came back.
	From uint64
	// Admitted counts the fans let in from this waitlist.
	Admitted uint64
	// Owed is the units let in for and not yet paid by a fall of the
	// supply, nor run out.
	Owed uint64
	// Ended is when the line last stopped being a waitlist (the sale
	// reopened, or the waitlist was turned off), while it is not one; zero
	// if it never was, or since the store lost the room.
	Ended time.Time
}

// On reports whether the line is a waitlist.
func (w WaitlistState) On() bool { return !w.Since.IsZero() }

// WaitlistGrant is units let in for by one step, owed until they are paid
// or Until passes.
type WaitlistGrant struct {
	Units uint64
	Until time.Time
}

// WaitlistStep is what a history entry of kind HistoryWaitlist records: a
// controller step that let fans in from the waitlist.
type WaitlistStep struct {
	// Fans let in (live places; ghosts among the places reached are
	// skipped as anywhere else), and the units let in for them.
	Fans  uint64 `json:"fans"`
	Units uint64 `json:"units"`
	// Supply is the last supply reported when the step ran (sample
	// HistoryEntry.Number), and Owed the units owed after the step: Owed
	// never exceeds Supply, which is how anyone checks that every unit
	// that came back reached one fan.
	Supply uint64 `json:"supply"`
	Owed   uint64 `json:"owed"`
}

// The history kinds of the waitlist.
const (
	// HistoryWaitlistStart: the line became a waitlist; Start is the first
	// place it may let in.
	HistoryWaitlistStart HistoryKind = "waitlist_start"
	// HistoryWaitlistEnd: the line stopped being a waitlist (sold_out or
	// waitlist turned off).
	HistoryWaitlistEnd HistoryKind = "waitlist_end"
	// HistoryWaitlist: a step let places [Start, Start+Count) in from the
	// waitlist (HistoryEntry.Waitlist says how many fans, for how many
	// units).
	HistoryWaitlist HistoryKind = "waitlist"
)

// WaitlistFans is how many fans one step may let in from the waitlist, and
// the grants still owed at now: the supply last reported, less the units
// owed, served units a fan each. A leftover smaller than one fan's worth,
// with nothing owed, goes to the next fan all the same (for what it is,
// WaitlistGrantUnits): else a one-place refund in a sale of two places a fan
// would reach nobody. Both stores call it so that they agree.
func WaitlistFans(supply uint64, grants []WaitlistGrant, units int, now time.Time) (fans uint64, owed uint64, kept []WaitlistGrant) {
	kept = grants[:0:0]
	for _, g := range grants {
		if now.Before(g.Until) {
			kept = append(kept, g)
			owed += g.Units
		}
	}
	if units <= 0 || supply <= owed {
		return 0, owed, kept
	}
	fans = (supply - owed) / uint64(units)
	if fans == 0 && owed == 0 {
		fans = 1
	}
	return fans, owed, kept
}

// WaitlistGrantUnits is what got fans let in from the waitlist are owed:
// units each, but never more than the supply serves beyond what was owed
// already (the leftover fan of WaitlistFans is owed the leftover).
func WaitlistGrantUnits(got uint64, units int, supply, owed uint64) uint64 {
	if supply <= owed {
		return 0
	}
	return min(got*uint64(units), supply-owed)
}

// PayWaitlist pays the oldest grants with a fall of the supply by fallen
// units: a hold or an order of a fan let in takes from what was owed.
func PayWaitlist(grants []WaitlistGrant, fallen uint64) []WaitlistGrant {
	out := grants[:0:0]
	for _, g := range grants {
		pay := min(g.Units, fallen)
		fallen -= pay
		if g.Units > pay {
			out = append(out, WaitlistGrant{Units: g.Units - pay, Until: g.Until})
		}
	}
	return out
}

// waitlistUnits is the units a fan is let in for from the waitlist: the
// estimate's units per fan (the middle of its range, rounded up) once it is
// measured, one before (docs/waitlist.md).
func waitlistUnits(e SupplyEstimate) int {
	if !e.Known || !e.Measured {
		return 1
	}
	return max(1, int(math.Ceil((e.PerFan[0]+e.PerFan[1])/2-1e-9)))
}

// claimReturns signs a session's pass again with the waitlist claim when the
// room gives it now and the pass lacks it: a session let in before the sell-
// out, still going when the sale reopens, may then take what came back as
// anyone may. Same id, subject, place and times; only the claim is added. It
// is never taken away: a node whose view lags may not know yet that a
// waitlist began, and a pass of the waitlist must not lose its claim there.
// A pass that is no session's (a passthrough one) is left as it is. The
// check is a field compare on the request path; the signature is made once
// per session on this node, and kept until the pass expires.
func (r *Room) claimReturns(p Pass) (string, Pass, bool) {
	if p.Waitlist || !r.view.Load().holdsReturns(p.OrderKey) || p.ID != SessionPassID(r.id, p.Subject, p.ExpiresAt) {
		return "", p, false
	}
	if c, ok := r.resigned.get(p.ID); ok {
		// Signed already: a client that keeps sending the pass without the
		// claim, and never keeps the new cookie, costs a map lookup.
		return c.token, c.pass, true
	}
	p.Waitlist = true
	tok, err := r.key.IssuePass(p, r.issuer)
	if err != nil {
		return "", p, false
	}
	r.resigned.put(p.ID, resignedPass{token: tok, pass: p})
	return tok, p, true
}

// resignedPass is a session's pass signed again with the waitlist claim,
// kept by the session's pass ID until the pass expires (claimReturns).
type resignedPass struct {
	token string
	pass  Pass
}

func (rp resignedPass) forgetAt() time.Time { return rp.pass.ExpiresAt }

// holdsReturns reports whether a session of place may hold units that came
// back after a sell-out, as this node's view knows it: it was let in from
// the waitlist, or the line stopped being a waitlist since (the sale
// reopened, and what is left is anyone's). Its pass says so to the origin
// (the "waitlist" claim, docs/PROTOCOL.md).
func (v *view) holdsReturns(place uint64) bool {
	w := v.snap.Waitlist
	if !w.On() {
		return !w.Ended.IsZero()
	}
	return place >= w.From && place < v.snap.Serving
}
