// Command onsale rehearses an on-sale against Foyer on this machine and measures
// it. Every load it sends goes to loopback only, and every load loop is bounded
// both in requests and in time.
//
//	onsale rehearsal     a whole on-sale: booking service, Foyer, a crowd of fans
//	onsale bench proxy   admitted requests through Foyer vs bare reverse_proxy
//	onsale bench poll    status polls of fans in line vs Caddy respond
//	onsale bench join    newcomers joining the line vs Caddy respond
//	onsale bench redis   Redis commands per join, status poll and admitted request
//
// The rehearsal reports what the sale came to against the README's targets, and
// fails only when a place was sold twice or an invariant of the booking
// service does not hold. Benchmark figures are reported as ratios against a
// baseline measured in the same run, alternating the two so that drift in the
// machine hits both alike.
package main
