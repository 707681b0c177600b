// Package stream carries the booking outbox from the database to its
// consumers: a Redis Stream in production, an in-process log otherwise.
//
// Publishing is idempotent by the outbox id: the relay may publish a message
// again after a crash between publishing and marking it published, and the
// stream keeps one copy. Consumers must still be idempotent themselves: a
// message is delivered at least once, never exactly once. This package must
// never drop a message that a handler did not accept.
package stream
