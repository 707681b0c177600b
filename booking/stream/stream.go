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
