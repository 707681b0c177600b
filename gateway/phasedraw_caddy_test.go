package gateway

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/internal/redistest"
	"github.com/foyer-dev/foyer/waitingroom"
)

// phaseDrawBlocks are a first phase admitting from first, and a second
// whose own pre-queue opens at opens and is drawn at its start, start.
func phaseDrawBlocks(first, opens, start time.Time) string {
	f := func(t time.Time) string { return t.UTC().Format(time.RFC3339) }
	return fmt.Sprintf(`phase first {
				start %s
				end %s
				total_active_users 50
			}
			phase second {
				prequeue_start %s
				start %s
				end %s
				shuffle_at_start
				total_active_users 50
			}`, f(first), f(start), f(opens), f(start), f(start.Add(time.Hour)))
}

// TestCaddyPhaseDrawOnTwoNodes: two nodes of a room on one Redis, a first
// phase admitting, then a second with its own pre-queue and draw. Fans
// already in line keep being let in, in order, while the second's
// pre-queue is open; its fans are registered with no place until its
// start, through either node, and nobody of them is let in before it;
// at the start the draw places them, those who came later behind them;
// and the fairness report's draw for the phase verifies: its seed matches
// the commitment made before the pre-queue opened, and every place
// recomputed from it is the one the room gave.
func TestCaddyPhaseDrawOnTwoNodes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Caddy and redis-server")
	}
	srv := redistest.StartServer(t, nil)
	clock := useTestClock(t)
	room := "phasedraw"
	t0 := clock.Now()
	first, opens, start := t0.Add(2*time.Second), t0.Add(15*time.Second), t0.Add(40*time.Second)
	newCaddy(t, requeueConfig(t.TempDir(), room, "store redis redis://"+srv.Addr, phaseDrawBlocks(first, opens, start)))
	nodes := []string{base, nodeBBase}

	// The phase's seed is committed, on whichever node, before its
	// pre-queue opens, and not revealed.
	clock.step(t, 1)
	var info waitingroom.DrawInfo
	for _, node := range nodes {
		resp, body := newFan(t).get(node+"/_waiting-room/draw", "Accept", "application/json")
		if err := json.Unmarshal([]byte(body), &info); resp.StatusCode != http.StatusOK || err != nil || len(info.PhaseDraws) != 1 {
			t.Fatalf("draw through %s: %d %s", node, resp.StatusCode, body)
		}
		pd := info.PhaseDraws[0]
		if pd.Phase != "second" || pd.Commitment == "" || pd.CommittedAt == nil || !pd.CommittedAt.Before(opens) || pd.Seed != "" {
			t.Fatalf("the phase's draw through %s before its pre-queue: %s", node, body)
		}
	}
	commitment := info.PhaseDraws[0].Commitment

	poll := func(fans []*held, i0 int) {
		t.Helper()
		for i, h := range fans {
			st := h.f.requeueStatus(t, nodes[(i0+i)%2])
			if st.DrawIndex != nil {
				h.key = *st.DrawIndex
			}
			switch {
			case st.State == waitingroom.StateAdmitted:
				if h.admitted.IsZero() {
					h.admitted = clock.Now()
				}
			case st.Position != nil:
				if h.pos != 0 && *st.Position > h.pos {
					t.Fatalf("key %d: position rose from %d to %d", h.key, h.pos, *st.Position)
				}
				h.pos = *st.Position + 1
			}
		}
	}
	var early []*held
	for range 20 {
		early = append(early, &held{f: newFan(t)})
	}
	poll(early, 0)
	for clock.Now().Before(opens) {
		clock.step(t, 1)
		poll(early, 0)
	}
	code, body := adminCall(t, http.MethodGet, "/waiting-room/"+room, "")
	var view struct {
		NextPhase *phaseView `json:"next_phase"`
	}
	if code != http.StatusOK || json.Unmarshal([]byte(body), &view) != nil || view.NextPhase == nil || view.NextPhase.Name != "second" ||
		view.NextPhase.PrequeueStart == nil || !view.NextPhase.PrequeueStart.Equal(opens) || !view.NextPhase.ShuffleAtStart {
		t.Fatalf("admin view: %d %s, want the next phase with its pre-queue", code, body)
	}
	clock.step(t, 1)
	var pre []*held
	for i := range 6 {
		h := &held{f: newFan(t)}
		st := h.f.requeueStatus(t, nodes[i%2])
		if st.State != waitingroom.StatePrequeue || st.Position != nil || st.OpensAt == nil || !st.OpensAt.Equal(start) || st.DrawIndex == nil {
			t.Fatalf("a fan joining the second phase's pre-queue: %+v, want registered until its start", st)
		}
		h.key = *st.DrawIndex
		pre = append(pre, h)
	}
	inDuring := 0
	for clock.Now().Before(start.Add(-time.Second)) {
		before := countAdmitted(early)
		clock.step(t, 1)
		poll(early, 0)
		inDuring += countAdmitted(early) - before
		for i, h := range pre {
			if st := h.f.requeueStatus(t, nodes[(i+1)%2]); st.State != waitingroom.StatePrequeue || st.Position != nil {
				t.Fatalf("pre-queue key %d before the start: %+v, want registered with no place", h.key, st)
			}
		}
	}
	if inDuring == 0 || countAdmitted(early) != len(early) {
		t.Fatalf("%d early fans let in during the pre-queue, %d of %d in all: the line ahead must go on", inDuring, countAdmitted(early), len(early))
	}
	var prev time.Time
	for i, h := range early {
		if h.admitted.Before(prev) || (i > 0 && h.key < early[i-1].key) {
			t.Fatalf("early fans out of order: key %d let in at %v, after one at %v", h.key, h.admitted, prev)
		}
		prev = h.admitted
	}

	// The start: the draw; later fans behind it.
	clock.step(t, 1)
	var late []*held
	for range 2 {
		late = append(late, &held{f: newFan(t)})
	}
	for range 20 {
		clock.step(t, 1)
		poll(pre, 0)
		poll(late, 1)
	}
	for _, h := range append(append([]*held{}, pre...), late...) {
		if h.admitted.IsZero() || h.admitted.Before(start) {
			t.Fatalf("key %d let in at %v; want after the phase's start %v", h.key, h.admitted, start)
		}
	}

	if code, body := adminCall(t, http.MethodPost, "/waiting-room/"+room+"/sold-out", ""); code != http.StatusOK {
		t.Fatalf("sold out: %d %s", code, body)
	}
	clock.step(t, 1)
	resp, body := newFan(t).get(base+"/_waiting-room/fairness", "Accept", "application/json")
	var rep waitingroom.FairnessReport
	if resp.StatusCode != http.StatusOK || json.Unmarshal([]byte(body), &rep) != nil || len(rep.PhaseDraws) != 1 {
		t.Fatalf("fairness report: %d %s", resp.StatusCode, body)
	}
	pd := rep.PhaseDraws[0]
	if pd.Commitment != commitment || pd.Seed == "" || pd.FirstKey == nil || pd.DrawSize == nil || *pd.DrawSize != uint64(len(pre)) || *pd.FirstKey != pre[0].key {
		t.Fatalf("the report's draw for the phase: %+v, want the commitment published before, the seed, keys %d-%d", pd, pre[0].key, pre[0].key+5)
	}
	seed, _ := hex.DecodeString(pd.Seed)
	d := waitingroom.NewDraw(seed, *pd.DrawSize)
	path := writeReport(t, rep)
	for _, h := range pre {
		place := *pd.FirstKey + d.Place(h.key-*pd.FirstKey)
		out, err := verifyDraw(t, "--report", path, "--draw-index", fmt.Sprint(h.key))
		if err != nil || !strings.Contains(out, fmt.Sprintf("has place %d ", place)) ||
			!strings.Contains(out, fmt.Sprintf("placed by phase second's draw of order keys %d-%d", *pd.FirstKey, *pd.FirstKey+5)) || strings.Contains(out, "warning") {
			t.Fatalf("verify-draw of key %d: %v\n%s\nwant place %d by the phase's draw", h.key, err, out, place)
		}
	}
	// The verifier written from docs/PROTOCOL.md alone agrees with
	// verify-draw on every key, and two beyond, from the report and from
	// the draw endpoint.
	t.Run("independent verifier", func(t *testing.T) {
		py := python3(t)
		_, draw := newFan(t).get(base + "/_waiting-room/draw")
		keys := keysTo(rep.Counts.Issued + 2)
		crossCheck(t, py, path, keys)
		crossCheck(t, py, writeFile(t, "draw.json", draw), keys)
		// The report passes the whole-sale checks, and fails them when
		// the phase's draw is tampered with, each for its reason.
		checkSale(t, py, path)
		first, n := *pd.FirstKey, *pd.DrawSize
		for name, c := range map[string]struct {
			change func(*waitingroom.PhaseDraw, []waitingroom.HistoryEntry)
			want   string
		}{
			"another seed": {func(p *waitingroom.PhaseDraw, _ []waitingroom.HistoryEntry) { p.Seed = strings.Repeat("ab", 32) },
				"does not match the commitment"},
			"committed after the pre-queue opened": {func(p *waitingroom.PhaseDraw, _ []waitingroom.HistoryEntry) {
				late := p.PrequeueStart.Add(time.Second)
				p.CommittedAt = &late
			}, "not before its pre-queue opened"},
			"keys never handed out": {func(p *waitingroom.PhaseDraw, _ []waitingroom.HistoryEntry) {
				more := rep.Counts.Issued - first + 1
				p.DrawSize = &more
			}, "beyond the"},
			"an admission before the start": {func(p *waitingroom.PhaseDraw, adm []waitingroom.HistoryEntry) {
				for i, a := range adm {
					if a.Start < first+n && first < a.Start+a.Count {
						adm[i].At = p.Start.Add(-time.Second)
						return
					}
				}
				t.Fatal("no admission reached the phase's places")
			}, "before its start"},
		} {
			bad := rep
			bad.PhaseDraws = slices.Clone(rep.PhaseDraws)
			bad.Admissions = slices.Clone(rep.Admissions)
			c.change(&bad.PhaseDraws[0], bad.Admissions)
			checkSaleFinds(t, py, writeReport(t, bad), c.want)
			if t.Failed() {
				t.Fatalf("tampered: %s", name)
			}
		}
	})
	// Nobody of the pre-queue went in before the start: every admission
	// before it reached only places below the range.
	for _, a := range rep.Admissions {
		if a.At.Before(start) && a.Start+a.Count > *pd.FirstKey {
			t.Fatalf("admission of places %d-%d at %v, before the phase's start %v, reached the pre-queue's range from %d",
				a.Start, a.Start+a.Count-1, a.At, start, *pd.FirstKey)
		}
	}
	// In drawn order: a place drawn earlier went in no later.
	for _, a := range pre {
		for _, b := range pre {
			if d.Place(a.key-*pd.FirstKey) < d.Place(b.key-*pd.FirstKey) && a.admitted.After(b.admitted) {
				t.Fatalf("key %d (drawn before key %d) let in at %v, after it at %v", a.key, b.key, a.admitted, b.admitted)
			}
		}
	}
}

// held is a fan of the test, with what their statuses told: their order
// key, their last position (plus one; 0 before any), and when they were
// first seen let in.
type held struct {
	f        *fan
	key      uint64
	pos      uint64
	admitted time.Time
}

// countAdmitted counts the fans seen let in.
func countAdmitted(fans []*held) int {
	n := 0
	for _, h := range fans {
		if !h.admitted.IsZero() {
			n++
		}
	}
	return n
}
