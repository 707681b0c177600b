// Package redisserver runs private redis-server processes on free loopback
// ports, and reads a server's INFO. It is the machinery behind the test
// helpers of internal/redistest and behind `onsale bench redis`, which both
// need a server of their own: one they may stop, restart, flush or measure
// without disturbing anybody else.
//
// It must never stop, flush or reconfigure a server it did not start, and a
// server it starts listens on 127.0.0.1 only and keeps nothing on disk
// (--save "" --appendonly no), so a restart always loses its data.
package redisserver
