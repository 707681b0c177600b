// Package stream carries the booking outbox from the database to its
// consumers: a Redis Stream in production, an in-process log otherwise.
//
// Publishing is idempotent by the outbox id: the relay may publish a message
// again after a crash between publishing and marking it published, and the
// stream keeps one copy. Consumers must still be idempotent themselves: a
// message is delivered at least once, never exactly once. This package must
// never drop a message that a handler did not accept.
package stream

import (
	"context"
	"time"
)

// Message is one outbox message.
type Message struct {
	// ID is the outbox id: the deduplication key.
	ID      int64
	Topic   string
	Payload []byte
}

// Handler processes one message. An error leaves it unacknowledged, to be
// delivered again.
type Handler func(ctx context.Context, m Message) error

// Stream is an at-least-once log with idempotent publishing.
type Stream interface {
	// Publish appends m unless a message with its ID was published before;
	// it reports whether it appended.
	Publish(ctx context.Context, m Message) (bool, error)
	// Consume delivers messages to handle as consumer within group until ctx
	// ends. Each message is handled by one consumer of the group; a message
	// whose handler failed is delivered again after a retry delay.
	Consume(ctx context.Context, group, consumer string, handle Handler) error
}

// DefaultRetryAfter is how long a failed or abandoned message waits before it
// is delivered again.
const DefaultRetryAfter = 5 * time.Second
