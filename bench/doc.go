// Package bench measures what Foyer costs against bare Caddy on this
// machine, side by side: an admitted request against reverse_proxy to the
// same upstream, a status poll, a join and a join refused by join_limit
// against Caddy's respond, each pair served by one Caddy process and run in
// alternating rounds so that drift in the machine weighs on both alike; and
// how many Redis round trips a join, a poll and an admitted request cost, on
// a private redis-server.
//
// It must never send load off loopback (every connection goes through
// loadgen's loopback-only dialer), and every load loop is bounded both in
// requests and in time. The figures are printed as ratios against the
// baseline measured in the same run, never as absolute claims.
package bench
