// Package servertiming adds up, for one request, the time a service spent
// waiting for a database connection and the time it spent in the database,
// and states them in the response's Server-Timing header (W3C Server
// Timing), which browsers' developer tools show and load tests read. A slow
// answer then says itself whether the service, its database, or neither
// (the network, the machine's scheduling, a proxy in front) was slow.
package servertiming
