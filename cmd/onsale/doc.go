// Command onsale rehearses an on-sale against Foyer on this machine and measures
// it. Every load it sends goes to loopback only, and every load loop is bounded
// both in requests and in time.
//
//	onsale rehearsal     a whole on-sale: booking service, Foyer, a crowd of fans
//	onsale bench proxy   admitted requests through Foyer vs bare reverse_proxy
//	onsale bench poll    status polls of fans in line vs Caddy respond
//	onsale bench join    newcomers joining the line vs Caddy respond
//	onsale bench challenge  newcomers handed a proof-of-work seed vs Caddy respond
//	onsale bench redis   Redis commands per join, status poll and admitted request
//
// The command parses flags and nothing more: the rehearsal and its verdict
// are package rehearsal, the benchmarks package bench.
package main
