package memstore

import (
	"container/heap"
	"time"
)

// What time takes away from a room: sessions past their end, visitors past
// the time they are remembered as finished, revocations of passes that have
// expired anyway. Each runs from the operations that need it current, so no
// goroutine of the store's own ever touches a room.

// expireSessions ends the sessions whose end has come, freeing their slots.
func (r *memRoom) expireSessions(now time.Time) {
	for len(r.sessions) > 0 && !now.Before(r.sessions[0].expires) {
		ses := heap.Pop(&r.sessions).(*session)
		delete(r.live, ses.visitor)
	}
}

// forgetFinished drops the finished marks whose tickets have expired.
func (r *memRoom) forgetFinished(now time.Time) {
	i := 0
	for ; i < len(r.finishedQ) && !now.Before(r.finishedQ[i].at); i++ {
		f := r.finishedQ[i]
		if at, ok := r.finished[f.visitor]; ok && !now.Before(at) {
			delete(r.finished, f.visitor)
		}
	}
	r.finishedQ = r.finishedQ[i:]
}

// expireRevocations drops revocations of passes that no node would honour anyway.
func (r *memRoom) expireRevocations(now time.Time) {
	kept := r.revoked[:0]
	for _, rv := range r.revoked {
		if rv.ExpiresAt.After(now) {
			kept = append(kept, rv)
		}
	}
	r.revoked = kept
}

// session is a live session, kept in a heap ordered by expiry.
type session struct {
	visitor string
	expires time.Time
	index   int
}

type sessionHeap []*session

func (h sessionHeap) Len() int { return len(h) }

func (h sessionHeap) Less(i, j int) bool { return h[i].expires.Before(h[j].expires) }

func (h sessionHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}

func (h *sessionHeap) Push(x any) {
	s := x.(*session)
	s.index = len(*h)
	*h = append(*h, s)
}

func (h *sessionHeap) Pop() any {
	old := *h
	s := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return s
}
