package bench

import "time"

// Options are what every side-by-side benchmark takes.
type Options struct {
	Foyer       string  // path of the foyer binary
	Conns       int     // concurrent keep-alive connections
	Rounds      int     // rounds per contender, alternated
	RoundSecs   float64 // length of a round, in seconds
	MaxRequests int     // upper bound on requests per round
}

// RedisOptions are what the Redis round-trip count takes.
type RedisOptions struct {
	Foyer   string        // path of the foyer binary
	N       int           // requests of each kind
	Conns   int           // concurrent keep-alive connections
	MaxTime time.Duration // upper bound on each run
}
