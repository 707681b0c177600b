package memstore

import (
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// What a join is weighed by before its place is made (waitingroom.Joiner):
// the places each client network took under join_limit, and the seeds that
// bought a place. The memory store serves one node, so these are that node's
// alone; they follow the Redis store's rules to the microsecond, so that the
// two answer alike (the conformance suite and the differential test hold
// them to it).

// joinChecks is a room's record of them. A network's entry is its tat (Unix
// microseconds): once it has passed, the network has its whole burst again
// and the entry is dropped. A seed's entry is when it may be forgotten.
type joinChecks struct {
	tats      map[string]int64
	seeds     map[string]int64
	lastSweep int64 // Unix seconds
}

// sweepEvery is how often a controller step drops the entries that have run
// out: each is worth nothing once it has, so the sweep only bounds memory.
const sweepEvery = 60

// weigh decides whether j may have a place at now. It refuses a seed that
// bought one already, then a network over its limit; otherwise it records
// the seed and takes the network's allowance, and the caller makes the place.
func (c *joinChecks) weigh(j waitingroom.Joiner, now time.Time, lim waitingroom.Limits) (waitingroom.Refusal, time.Duration) {
	us := now.UnixMicro()
	if j.Seed != "" {
		if until, ok := c.seeds[j.Seed]; ok && until > us {
			return waitingroom.RefusedSeedSpent, 0
		}
	}
	var tat int64
	weighed := j.Client != "" && !lim.JoinLimit.IsZero()
	if weighed {
		next, wait, ok := lim.JoinLimit.Take(c.tats[j.Client], us)
		if !ok {
			return waitingroom.RefusedJoinLimit, wait
		}
		tat = next
	}
	if j.Seed != "" {
		if c.seeds == nil {
			c.seeds = make(map[string]int64)
		}
		c.seeds[j.Seed] = j.SeedUntil.UnixMicro()
	}
	if weighed {
		if c.tats == nil {
			c.tats = make(map[string]int64)
		}
		c.tats[j.Client] = tat
	}
	return waitingroom.NotRefused, 0
}

// sweep drops the networks whose tat has passed and the seeds past their
// time, at most once every sweepEvery seconds.
func (c *joinChecks) sweep(now time.Time) {
	if now.Unix()-c.lastSweep < sweepEvery {
		return
	}
	c.lastSweep = now.Unix()
	us := now.UnixMicro()
	for k, tat := range c.tats {
		if tat <= us {
			delete(c.tats, k)
		}
	}
	for k, until := range c.seeds {
		if until <= us {
			delete(c.seeds, k)
		}
	}
}
