package clientlimit

import (
	"hash/maphash"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// shards spreads the addresses over this many locks, so that requests from
// different addresses rarely wait for each other.
const shards = 32

// chunk is how many entries a shard allocates at a time: memory grows with
// the addresses seen, up to the table's capacity, and entries never move.
const chunk = 256

// Table is the token buckets of the addresses seen lately, at most Capacity
// of them. It is safe for concurrent use.
type Table struct {
	seed     maphash.Seed
	capacity int
	shard    [shards]shard
}

type shard struct {
	mu    sync.Mutex
	index map[Key]int32
	// entries live in chunks that are never reallocated (a rate.Limiter
	// holds a lock and must not be copied once used).
	chunks     [][]entry
	used, max  int32
	head, tail int32 // most and least recently used; -1 when empty
}

// entry is one address's bucket, linked into its shard's recency order.
type entry struct {
	key        Key
	prev, next int32
	lim        rate.Limiter
}

// New returns a table that tracks at most capacity addresses (rounded up to
// a multiple of the shard count).
func New(capacity int) *Table {
	per := max(1, (capacity+shards-1)/shards)
	t := &Table{seed: maphash.MakeSeed(), capacity: per * shards}
	for i := range t.shard {
		t.shard[i] = shard{index: make(map[Key]int32), max: int32(min(per, math.MaxInt32)), head: -1, tail: -1}
	}
	return t
}

// Capacity is the most addresses the table tracks at once.
func (t *Table) Capacity() int { return t.capacity }

// Len is the number of addresses tracked now.
func (t *Table) Len() int {
	n := 0
	for i := range t.shard {
		s := &t.shard[i]
		s.mu.Lock()
		n += int(s.used)
		s.mu.Unlock()
	}
	return n
}

// Allow spends one of k's tokens at now, under a limit of r per second with
// bursts of burst. When k has none left it returns false and how long until
// it will have one. An address seen for the first time, or again after it
// was forgotten, starts with a full bucket. A change of r or burst applies to
// every address from its next call on, with the tokens it had.
func (t *Table) Allow(k Key, now time.Time, r rate.Limit, burst int) (bool, time.Duration) {
	s := &t.shard[maphash.Comparable(t.seed, k)%shards]
	s.mu.Lock()
	defer s.mu.Unlock()
	i, known := s.index[k]
	if known {
		s.touch(i)
	} else {
		i = s.add(k)
	}
	e := s.at(i)
	if !known {
		// As rate.NewLimiter leaves it: no tokens, last seen never, so the
		// first call fills the bucket.
		e.lim = rate.Limiter{}
		e.lim.SetLimitAt(time.Time{}, r)
		e.lim.SetBurstAt(time.Time{}, burst)
	} else if e.lim.Limit() != r || e.lim.Burst() != burst {
		e.lim.SetLimitAt(now, r)
		e.lim.SetBurstAt(now, burst)
	}
	if e.lim.AllowN(now, 1) {
		return true, 0
	}
	if r <= 0 {
		return false, time.Duration(math.MaxInt64)
	}
	missing := 1 - e.lim.TokensAt(now)
	return false, time.Duration(missing / float64(r) * float64(time.Second))
}

// Return gives k back the token a refused or failed place took: a join that
// made no place (the store was away, or the room was settling) must not count
// against the address. The bucket never holds more than burst.
func (t *Table) Return(k Key, now time.Time, burst int) {
	s := &t.shard[maphash.Comparable(t.seed, k)%shards]
	s.mu.Lock()
	defer s.mu.Unlock()
	i, known := s.index[k]
	if !known {
		return
	}
	e := s.at(i)
	if e.lim.TokensAt(now) <= float64(burst)-1 {
		e.lim.AllowN(now, -1) // a negative take adds the token back
	}
}

func (s *shard) at(i int32) *entry { return &s.chunks[i/chunk][i%chunk] }

// add gives k an entry at the front: a new one while the shard has room, else
// the least recently used one, whose address is forgotten.
func (s *shard) add(k Key) int32 {
	var i int32
	if s.used < s.max {
		i = s.used
		if int(i/chunk) == len(s.chunks) {
			s.chunks = append(s.chunks, make([]entry, min(chunk, s.max-i)))
		}
		s.used++
	} else {
		i = s.tail
		s.unlink(i)
		delete(s.index, s.at(i).key)
	}
	s.at(i).key = k
	s.index[k] = i
	s.pushFront(i)
	return i
}

// touch moves entry i to the front of the recency order.
func (s *shard) touch(i int32) {
	if s.head == i {
		return
	}
	s.unlink(i)
	s.pushFront(i)
}

func (s *shard) unlink(i int32) {
	e := s.at(i)
	if e.prev >= 0 {
		s.at(e.prev).next = e.next
	} else {
		s.head = e.next
	}
	if e.next >= 0 {
		s.at(e.next).prev = e.prev
	} else {
		s.tail = e.prev
	}
}

func (s *shard) pushFront(i int32) {
	e := s.at(i)
	e.prev, e.next = -1, s.head
	if s.head >= 0 {
		s.at(s.head).prev = i
	}
	s.head = i
	if s.tail < 0 {
		s.tail = i
	}
}
