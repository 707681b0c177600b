package stream

import (
	"context"
	"sync"
	"time"
)

// Memory is an in-process Stream for a single booking process.
type Memory struct {
	mu       sync.Mutex
	messages []Message
	seen     map[int64]bool
	groups   map[string]*memGroup
	wake     chan struct{}
	// RetryAfter delays the redelivery of a message whose handler failed.
	RetryAfter time.Duration
}

type memGroup struct {
	next  int               // index of the first message never delivered
	retry map[int]time.Time // failed messages and when to retry them
}

var _ Stream = (*Memory)(nil)

// NewMemory returns an empty stream.
func NewMemory() *Memory {
	return &Memory{RetryAfter: DefaultRetryAfter, seen: map[int64]bool{}, groups: map[string]*memGroup{}, wake: make(chan struct{})}
}

// Publish appends m once per ID.
func (s *Memory) Publish(_ context.Context, m Message) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen[m.ID] {
		return false, nil
	}
	s.seen[m.ID] = true
	s.messages = append(s.messages, m)
	close(s.wake)
	s.wake = make(chan struct{})
	return true, nil
}

// Len is the number of messages in the stream.
func (s *Memory) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.messages)
}

// Consume hands messages to handle until ctx ends.
func (s *Memory) Consume(ctx context.Context, group, _ string, handle Handler) error {
	for {
		idx, m, wake, wait := s.take(group)
		if idx >= 0 {
			err := handle(ctx, m)
			s.finish(group, idx, err)
			continue
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		case <-wake:
		case <-timer.C:
		}
		timer.Stop()
	}
}

// take claims the next message for the group: a due retry first, else the
// next new one. With nothing to do it says what to wait for.
func (s *Memory) take(group string) (int, Message, <-chan struct{}, time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.groups[group]
	if g == nil {
		g = &memGroup{retry: map[int]time.Time{}}
		s.groups[group] = g
	}
	now := time.Now()
	wait := time.Second
	for idx, at := range g.retry {
		if !now.Before(at) {
			g.retry[idx] = now.Add(s.RetryAfter) // claimed: back after RetryAfter if never finished
			return idx, s.messages[idx], nil, 0
		}
		wait = min(wait, at.Sub(now))
	}
	if g.next < len(s.messages) {
		idx := g.next
		g.next++
		g.retry[idx] = now.Add(s.RetryAfter)
		return idx, s.messages[idx], nil, 0
	}
	return -1, Message{}, s.wake, wait
}

func (s *Memory) finish(group string, idx int, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil {
		delete(s.groups[group].retry, idx)
	}
}
