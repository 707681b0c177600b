// Package serverproc starts the servers onsale measures, foyer and the
// booking service, as child processes on loopback ports, and stops them:
// none is left behind when onsale ends, and a Ctrl-C meant for onsale does
// not reach them before it has read their state.
package serverproc
