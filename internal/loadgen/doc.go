// Package loadgen is the load generator that onsale's benchmarks and
// rehearsal share: bounded rounds of requests over keep-alive connections,
// their latencies, and a dialer that refuses anything but loopback, so that
// no load ever leaves the machine it runs on.
package loadgen
