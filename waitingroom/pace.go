package waitingroom

import (
	"math"
	"time"
)

// Pace is the store's smoothed record of how fast the line moved, kept by the
// admission controller so that every node reads the same figures and so
// estimates the same wait (docs/endpoints.md, "What fans, apps and origins see").
//
// Each controller step that runs while the room admits and people wait first
// ages both sums by PaceDecay per second, then adds the places it admitted and
// the seconds it covered. Places/Seconds is then the admission rate averaged
// over the last few minutes with recent seconds weighing most, and with the
// seconds nobody was admitted (a full room) counted in. Time while the room is
// paused, held, not yet live or empty is not counted at all, so a pause does
// not make the line look slower once it resumes, nor time in which only fans
// of lanes of weight 0 wait (they wait for another phase, not for the line).
type Pace struct {
	// Places is the weighted count of places admitted from the line.
	Places float64 `json:"places"`
	// Seconds is the weighted time measured.
	Seconds float64 `json:"seconds"`
	// Moves is the weighted count of steps that admitted anyone: the line
	// moves by steps, every second when the rate holds it back, in jumps
	// when the cap does.
	Moves float64 `json:"moves"`
	// Still is how many measured seconds have passed since the line last
	// moved (0 while it moves).
	Still int64 `json:"still"`
}

// PaceDecay is the weight a measured second loses each second: a time
// constant of two minutes, long enough to average over the bursts of a room
// whose cap holds people back, short enough to follow an operator's change of
// rate within a few minutes.
const PaceDecay = 1 - 1.0/120

// Step is what a controller step adds to the record: elapsed seconds during
// which people waited, n of whom were admitted. Stores apply exactly this
// arithmetic (the Redis store in Lua), so that both give the same figures.
func (p Pace) Step(elapsed int64, n uint64) Pace {
	for range elapsed {
		p.Places *= PaceDecay
		p.Seconds *= PaceDecay
		p.Moves *= PaceDecay
	}
	p.Places += float64(n)
	p.Seconds += float64(elapsed)
	if n > 0 {
		p.Moves++
		p.Still = 0
	} else {
		p.Still += elapsed
	}
	return p
}

// What the estimate needs before it says anything.
const (
	// paceMinSeconds is the least measured time worth a rate: less, and the
	// first burst of a room that just opened passes for its pace.
	paceMinSeconds = 10
	// paceMinPlaces is the least weighted movement worth a rate: below it
	// the line has not moved within the last several minutes.
	paceMinPlaces = 0.5
	// stoppedGaps and stoppedAfter say when a line has stopped rather than
	// paused between two of its usual steps: it has stood still for three of
	// its usual gaps between movements (a chance of about one in twenty for a
	// line still moving at its pace), and for at least stoppedAfter, so that
	// a hiccup of the controller does not count.
	stoppedGaps  = 3
	stoppedAfter = 15
	// PaceStale is the longest a line may stand still and still be given an
	// estimate, whatever its usual gaps.
	PaceStale = 5 * time.Minute
)

// Rate is the measured admission rate in places per second, and whether
// anything measured supports it.
func (p Pace) Rate() (float64, bool) {
	if p.Seconds < paceMinSeconds || p.Places < paceMinPlaces || p.Moves <= 0 || p.stopped() {
		return 0, false
	}
	return p.Places / p.Seconds, true
}

// stopped reports whether the line has stood still for much longer than it
// usually does between two movements, which its past pace cannot explain.
func (p Pace) stopped() bool {
	still := float64(p.Still)
	if time.Duration(p.Still)*time.Second >= PaceStale {
		return true
	}
	if still < stoppedAfter {
		return false
	}
	// The usual gap as it was when the line last moved: the seconds measured
	// since then are taken back out, the decay undone on both sums alike.
	decayed := math.Pow(PaceDecay, still)
	sinceMoved := (1 - decayed) / (1 - PaceDecay)
	gap := max(0, p.Seconds-sinceMoved) / p.Moves
	return still >= stoppedGaps*gap
}

// Wait estimates the seconds until places more places have gone in, from the
// measured pace, never faster than the rate limit allows (perSecond; 0: no
// limit). ok is false when nothing measured supports an estimate: the line has
// not moved yet, or has stopped (see stopped). A line standing still is
// expected to take at least as long again as it has stood.
func (p Pace) Wait(places, perSecond float64) (sec float64, ok bool) {
	r, ok := p.Rate()
	if !ok {
		return 0, false
	}
	if perSecond > 0 {
		r = min(r, perSecond)
	}
	return max(places/r, float64(p.Still)), true
}
