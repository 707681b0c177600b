// Package rehearsal plays a whole on-sale on this machine and judges it:
// it starts the booking service and Foyer in front of it as child processes
// on loopback ports (with a private redis-server when the room's store is
// Redis), lets a crowd of simulated fans loose on them (a bounded pool of
// workers steps each fan's small state machine: join, poll, seat map, hold,
// checkout, pay, order), and then reads what the sale left behind.
//
// The verdict answers four questions against the targets of docs/rehearsal.md: did the
// sale sell out; was any place sold twice (the fans' delivered tickets set
// against the venue, and the booking service's own invariant check); did
// admission keep the order of the line (no fan told to wait once a later
// order key, or a later arrival, had its pass); and was every kind of
// request answered in under 50 ms at the 99th percentile. It also accounts
// for the servers' memory and CPU, and the database backends' CPU when the
// booking service runs on PostgreSQL, so that a latency can be set against
// what the machine was busy with. Only overselling, a broken invariant, or
// invariants that could not be read fail the run: 0 oversold is the one
// rule that must be proven, not assumed.
//
// The verdict is worked out once from what the run recorded (the fans'
// records, every request's latency, the delivered orders, the sale sampled
// each second) and printed; with Config.Report the same figures, with
// charts drawn by gonum/plot, go to an HTML page that stands alone.
//
// What it must never do: send traffic off loopback (every connection goes
// through a dialer that refuses other addresses, and database and Redis
// URLs are refused unless they are on loopback); run a loop without bounds
// (every fan's loop is bounded in count, polls, retries, holds, seat maps
// and order looks, and the whole run by Config.MaxTime); or leave a server
// behind (the children die with it).
package rehearsal
