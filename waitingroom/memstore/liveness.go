package memstore

import (
	"context"
	"math/bits"
	"sort"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// Liveness in memory: per heartbeat window, a bitmap of the places seen in it,
// kept in blocks of waitingroom.LiveBlock places so that a window costs one
// bit per waiting place and nothing for the places long admitted. The same
// rules as the Redis store's (lua/liveness.lua), which the differential test
// holds them to.

const wordsPerBlock = waitingroom.LiveBlock / 64

// beatWindow is the places seen in one window, by block.
type beatWindow map[uint64]*[wordsPerBlock]uint64

// windowSeq is the order key counter as the first controller step of a window
// found it: every key below it was handed out before the window began.
type windowSeq struct {
	idx int64
	seq uint64
}

// Beat implements waitingroom.Store.
func (s *Store) Beat(_ context.Context, name string, b waitingroom.Beats, now time.Time, lim waitingroom.Limits) error {
	r, err := s.lockRoom(name)
	if err != nil {
		return err
	}
	defer r.mu.Unlock()
	if lim.WaitingIdle > 0 && len(b.Places) > 0 {
		idx := windowIndex(now, lim.WaitingIdle)
		w := r.windows[idx]
		if w == nil {
			w = make(beatWindow)
			r.windows[idx] = w
		}
		for _, p := range b.Places {
			if _, gone := r.left[p]; gone || p < r.c.Serving || p >= r.c.Seq {
				continue
			}
			blk := w[p/waitingroom.LiveBlock]
			if blk == nil {
				blk = new([wordsPerBlock]uint64)
				w[p/waitingroom.LiveBlock] = blk
			}
			off := p % waitingroom.LiveBlock
			blk[off/64] |= 1 << (63 - off%64)
		}
	}
	for _, t := range b.Told {
		r.tell(t.Place, t.Marks)
	}
	r.expireSessions(now)
	for _, v := range b.Sessions {
		if _, ok := r.live[v]; !ok {
			continue
		}
		if at, ok := r.seen[v]; !ok || now.After(at) {
			r.seen[v] = now
		}
	}
	return nil
}

// ToldTally implements waitingroom.Store.
func (s *Store) ToldTally(_ context.Context, name string) (waitingroom.ToldTally, error) {
	r, err := s.lockRoom(name)
	if err != nil {
		return waitingroom.ToldTally{}, err
	}
	defer r.mu.Unlock()
	var t waitingroom.ToldTally
	for _, bits := range r.told {
		t.AddBitmap(bits)
	}
	return t, nil
}

// tell adds marks m to place's in its lane's bitmap, laid out as the Redis
// store lays it out (waitingroom.ToldTally), so that a room keeps half a
// byte per place told anything rather than an entry per fan.
func (r *memRoom) tell(place uint64, m waitingroom.ToldMarks) {
	lane, n := waitingroom.LaneOfPlace(place)
	if n >= waitingroom.MaxToldPlace || m&0xF == 0 {
		return
	}
	if r.told == nil {
		r.told = make(map[int][]byte)
	}
	bits := r.told[lane]
	if i := int(n / 2); i >= len(bits) {
		bits = append(bits, make([]byte, i+1-len(bits))...)
	}
	shift := 4 * (1 - n%2)
	bits[n/2] |= byte(m&0xF) << shift
	r.told[lane] = bits
}

// windowIndex numbers the heartbeat window holding now.
func windowIndex(now time.Time, idle time.Duration) int64 {
	w := waitingroom.BeatWindow(idle).Microseconds()
	return now.UnixMicro() / w
}

// judgeFrom is noteWindow when liveness is on; otherwise every place is
// young (0).
func (r *memRoom) judgeFrom(now time.Time, lim waitingroom.Limits) uint64 {
	if lim.WaitingIdle <= 0 {
		return 0
	}
	return r.noteWindow(now, lim.WaitingIdle)
}

// noteWindow records the counter at the first step of the window holding now,
// drops the windows no step will look at again, and returns the first key
// whose holder may be judged: keys below it were handed out before the oldest
// window looked at began, so an unseen one went unseen for a whole timeout.
// Zero when the history is too short (or has a gap: no step ran in some
// window, and beats may not have reached the store).
func (r *memRoom) noteWindow(now time.Time, idle time.Duration) uint64 {
	cur := windowIndex(now, idle)
	if n := len(r.wseq); n == 0 || r.wseq[n-1].idx < cur {
		r.wseq = append(r.wseq, windowSeq{idx: cur, seq: r.c.Seq})
	}
	for len(r.wseq) > waitingroom.BeatWindows+1 {
		r.wseq = r.wseq[1:]
	}
	for idx := range r.windows {
		if idx < cur-waitingroom.BeatWindows+1 {
			delete(r.windows, idx)
		}
	}
	return youngFrom(r.wseq, cur)
}

// youngFrom finds the counter recorded in the window just before the oldest
// one looked at, provided every window since has its record.
func youngFrom(wseq []windowSeq, cur int64) uint64 {
	want := cur - waitingroom.BeatWindows
	for i := len(wseq) - 1; i >= 0; i-- {
		if wseq[i].idx != cur-int64(len(wseq)-1-i) {
			return 0 // a gap
		}
		if wseq[i].idx == want {
			return wseq[i].seq
		}
	}
	return 0
}

// resetBeats forgets the history: after a draw places are no longer keys, so
// the beats so far say nothing of them.
func (r *memRoom) resetBeats() {
	r.wseq = nil
	clear(r.windows)
	clear(r.left)
}

// liveBlock is the union of the looked-at windows over one block.
func (r *memRoom) liveBlock(blk uint64) [wordsPerBlock]uint64 {
	var out [wordsPerBlock]uint64
	for _, w := range r.windows {
		if b := w[blk]; b != nil {
			for i := range out {
				out[i] |= b[i]
			}
		}
	}
	return out
}

// admitLive finds where serving goes to admit up to n live places: it returns
// the new serving, the live places admitted and the runs of ghosts passed
// over on the way (as lapses with no time yet). Places below young, and those
// in a re-seed's margin, are judged by their beats; the rest (up to end) are
// all live.
func (r *memRoom) admitLive(serving, end, young, n uint64) (uint64, uint64, []lapse) {
	w := liveWalk{r: r, p: serving, cached: ^uint64(0)}
	// A step walks at most LiveStepBlocks blocks of ghosts; a longer run of
	// them is skipped over the next steps, as in the Redis store.
	walk := serving + waitingroom.LiveStepBlocks*waitingroom.LiveBlock
	w.judge(min(young, end, walk), n)
	for w.got < n && w.p < end && w.p < walk {
		switch mf, mt := r.margin[0], r.margin[1]; {
		case w.p >= mf && w.p < mt:
			w.judge(min(mt, end, walk), n)
		default:
			to := end
			if w.p < mf {
				to = min(end, mf)
			}
			more := min(n-w.got, to-w.p)
			w.p += more
			w.got += more
		}
	}
	return w.p, w.got, w.ghosts
}

// liveWalk is admitLive's way along the line.
type liveWalk struct {
	r      *memRoom
	p, got uint64
	ghosts []lapse
	u      [wordsPerBlock]uint64
	cached uint64
}

// judge walks the places up to to by their beats, until n are live.
func (w *liveWalk) judge(to, n uint64) {
	for w.got < n && w.p < to {
		if blk := w.p / waitingroom.LiveBlock; blk != w.cached {
			w.u, w.cached = w.r.liveBlock(blk), blk
		}
		off := w.p % waitingroom.LiveBlock
		switch k := len(w.ghosts) - 1; {
		case w.u[off/64]&(1<<(63-off%64)) != 0:
			w.got++
		case k >= 0 && w.ghosts[k].start+w.ghosts[k].count == w.p:
			w.ghosts[k].count++
		default:
			w.ghosts = append(w.ghosts, lapse{start: w.p, count: 1})
		}
		w.p++
	}
}

// countLiveness makes the counts nodes compute positions from.
func (r *memRoom) countLiveness(young uint64) waitingroom.Liveness {
	from := r.c.Serving / waitingroom.LiveBlock * waitingroom.LiveBlock
	lv := waitingroom.Liveness{From: from, Young: young}
	if young <= from {
		return lv
	}
	for i := uint64(0); from+i*waitingroom.LiveBlock < young; i++ {
		blk := from/waitingroom.LiveBlock + i
		u := r.liveBlock(blk)
		if end := (blk + 1) * waitingroom.LiveBlock; end > young {
			// Places from young on count as live anyway: leave them out.
			keep := young - blk*waitingroom.LiveBlock
			for w := range u {
				switch lo := uint64(w) * 64; {
				case lo >= keep:
					u[w] = 0
				case lo+64 > keep:
					u[w] &= ^uint64(0) << (64 - (keep - lo))
				}
			}
		}
		var c int
		for _, w := range u {
			c += bits.OnesCount64(w)
		}
		lv.Counts = append(lv.Counts, uint16(c))
		if i < waitingroom.LiveHeadBlocks {
			for _, w := range u {
				for sh := 56; sh >= 0; sh -= 8 {
					lv.Head = append(lv.Head, byte(w>>sh))
				}
			}
		}
	}
	return lv
}

// idleOut ends the sessions not used for lim.SessionIdle, freeing their
// slots, and records each so that nodes refuse its passes and a claim from its
// visitor is a lapsed admission.
func (r *memRoom) idleOut(now time.Time, lim waitingroom.Limits) {
	// In the order of their last use, then of their names, as the Redis
	// store's sorted set gives them: cursors follow it.
	var idle []string
	for v, at := range r.seen {
		ses, live := r.live[v]
		switch {
		case !live:
			delete(r.seen, v)
		case lim.SessionIdle > 0 && !now.Before(at.Add(lim.SessionIdle)):
			idle = append(idle, ses.visitor)
		}
	}
	sort.Slice(idle, func(i, j int) bool {
		a, b := r.seen[idle[i]], r.seen[idle[j]]
		if !a.Equal(b) {
			return a.Before(b)
		}
		return idle[i] < idle[j]
	})
	for _, v := range idle {
		ses := r.live[v]
		removeSession(r, ses)
		delete(r.seen, v)
		r.idled[v] = idledSession{at: now, ends: ses.expires}
		r.c.IdledOut++
		r.revCursor++
		r.revoked = append(r.revoked, waitingroom.Revocation{Cursor: r.revCursor, Visitor: v, IdledAt: now, ExpiresAt: ses.expires})
	}
	for v, io := range r.idled {
		if !now.Before(io.at.Add(lim.Retention)) {
			delete(r.idled, v)
		}
	}
}
