package gateway

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/foyer-dev/foyer/internal/redistest"
	"github.com/foyer-dev/foyer/waitingroom"
)

// waitlistOrigin is a sale of a few units behind the room, as the booking
// service run with -waitlist is (docs/waitlist.md): GET /buy sells a unit to
// the pass's holder, reports the supply on every answer, says sold-out when
// none is left, and once sold out sells only to passes with the waitlist
// claim. Refunds come from the test (refund), as they would from the
// service's own pages.
type waitlistOrigin struct {
	mu       sync.Mutex
	units    int
	soldOut  bool
	sold     []string // the buyer of each unit sold, in order
	refused  int      // buys refused for want of the waitlist claim
	negative bool     // a unit sold that was not there
}

func (o *waitlistOrigin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if r.URL.Path == "/buy" {
		sub, fromWaitlist := passClaims(r.Header.Get("X-Waiting-Room-Pass"))
		switch {
		case o.soldOut && !fromWaitlist:
			o.refused++
			w.Header().Set("X-Waiting-Room-Supply", strconv.Itoa(o.units))
			http.Error(w, "waitlist_only", http.StatusConflict)
			return
		case o.units > 0:
			o.units--
			o.sold = append(o.sold, sub)
		default:
			w.Header().Set("X-Waiting-Room-Supply", "0")
			w.Header().Set("X-Waiting-Room-Command", "sold-out")
			http.Error(w, "sold_out", http.StatusConflict)
			return
		}
		if o.units == 0 {
			o.soldOut = true
		}
	}
	if o.units < 0 {
		o.negative = true
	}
	w.Header().Set("X-Waiting-Room-Supply", strconv.Itoa(o.units))
	fmt.Fprint(w, "origin")
}

// refund puts n units back on sale: refunds, or, once the sale reopens, a
// new allocation.
func (o *waitlistOrigin) refund(n int) {
	o.mu.Lock()
	o.units += n
	o.mu.Unlock()
}

// passClaims reads the subject and the waitlist claim of a pass the gateway
// verified before it sent the request on.
func passClaims(tok string) (string, bool) {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return "", false
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return "", false
	}
	var c struct {
		Sub      string `json:"sub"`
		Waitlist bool   `json:"waitlist"`
	}
	if json.Unmarshal(raw, &c) != nil {
		return "", false
	}
	return c.Sub, c.Waitlist
}

// waitlistConfig is a room of 10 slots with the waitlist on, on two nodes
// sharing a Redis (one node on the memory store), in front of the origin on
// 127.0.0.1:originPort.
func waitlistConfig(storage, room, store string, originPort int, two bool) string {
	node := func(port, title string) string {
		return fmt.Sprintf(`
	http://localhost:%s {
		waiting_room {
			room %s
			title "%s"
			%s
			total_active_users 10
			new_users_per_minute 600
			waitlist
		}
		reverse_proxy 127.0.0.1:%d
	}`, port, room, title, store, originPort)
	}
	if !two {
		return caddyConfig(storage, node("9080", "node a"))
	}
	return caddyConfig(storage, node("9080", "node a")+node(strconv.Itoa(nodeBPort), "node b"))
}

// TestCaddyWaitlistRefundsReachTheLineInOrder: on a real Caddy with two
// nodes sharing a Redis, in front of a real origin selling 3 units, the sale
// sells out (the origin says sold-out); the fans waiting then, and one who
// arrives after, stay on the waitlist with their positions, through either
// node; k = 2 refunds, reported on the next answer to a fan in session, let
// exactly the first 2 waitlisted fans in, in order, each with a pass that
// says waitlist, and each buys one of the returned units; the fairness
// report shows the return reaching those places. At the end: the cap was
// never exceeded, one place per visitor, nobody let in out of order, no
// position rose, no unit sold twice or sold that was not there, and a fan
// without the waitlist claim could not buy a returned unit. The operator then
// reopens the sale with 4 more units: the fans left in line are let in with
// passes that may buy them, and a buyer still in session from before the
// sell-out buys the last, their pass signed again with the claim.
func TestCaddyWaitlistRefundsReachTheLineInOrder(t *testing.T) {
	t.Run("redis, two nodes", func(t *testing.T) {
		srv := redistest.StartServer(t, nil)
		admin := redis.NewClient(&redis.Options{Addr: srv.Addr})
		t.Cleanup(func() { admin.Close() })
		testWaitlistSale(t, "store redis redis://"+srv.Addr, true, admin)
	})
	t.Run("memory, one node", func(t *testing.T) { testWaitlistSale(t, "store memory", false, nil) })
}

// testWaitlistSale plays the sale; with admin (the Redis store), it also
// counts the store's commands over polls of waitlisted fans: none.
func testWaitlistSale(t *testing.T, store string, two bool, admin *redis.Client) {
	clock := useTestClock(t)
	origin := &waitlistOrigin{units: 3}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: origin}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	room := "waitlist"
	newCaddy(t, waitlistConfig(t.TempDir(), room, store, ln.Addr().(*net.TCPAddr).Port, two))
	nodes, bNode := []string{base, nodeBBase}, nodeBBase
	if !two {
		nodes, bNode = []string{base, base}, base
	}
	handles := func() []*waitingroom.Room {
		if two {
			return supplyHandles(t, room)
		}
		var one []*waitingroom.Room
		rooms.Range(func(_, v any) bool {
			one = append(one, v.(*roomHandle).room)
			return true
		})
		return one
	}
	maxActive := 0
	step := func(n int) {
		t.Helper()
		for range n {
			clock.step(t, 1)
			for _, r := range handles() {
				maxActive = max(maxActive, r.Snapshot().Active)
			}
		}
	}

	// Three buyers sell the sale out.
	var buyers []*fan
	for i := range 3 {
		f := newFan(t)
		buyers = append(buyers, f)
		f.requeueStatus(t, nodes[i%2])
		step(1)
		if st := f.requeueStatus(t, nodes[i%2]); st.State != waitingroom.StateAdmitted {
			t.Fatalf("buyer %d: %+v; want admitted", i, st)
		}
		if resp, _ := f.get(nodes[i%2] + "/buy"); resp.StatusCode != http.StatusOK {
			t.Fatalf("buyer %d's buy: %d", i, resp.StatusCode)
		}
	}
	// The last answer said sold-out and 0 left.
	step(2)
	if s := handles()[len(handles())-1].Settings(); !s.SoldOut || !s.Waitlist {
		t.Fatalf("after the last unit: sold_out %v waitlist %v; want both", s.SoldOut, s.Waitlist)
	}

	// Five fans wait; the last arrives after the sell-out.
	var line []*fan
	last := map[*fan]uint64{}
	look := func(f *fan, node string) waitingroom.Status {
		t.Helper()
		st := f.requeueStatus(t, node)
		if st.State == waitingroom.StateWaitlist && st.Position != nil {
			if was, ok := last[f]; ok && *st.Position > was {
				t.Fatalf("a position rose from %d to %d", was, *st.Position)
			}
			last[f] = *st.Position
		}
		return st
	}
	for i := range 5 {
		f := newFan(t)
		line = append(line, f)
		if st := look(f, nodes[i%2]); st.State != waitingroom.StateWaitlist || st.Position == nil || *st.Position != uint64(i) {
			t.Fatalf("fan %d at sold out: %+v; want waitlist with %d ahead", i, st, i)
		}
	}
	step(3)
	for i, f := range line {
		if st := look(f, nodes[(i+1)%2]); st.State != waitingroom.StateWaitlist || *st.Position != uint64(i) {
			t.Fatalf("fan %d after 3 s: %+v; want still waitlisted, %d ahead", i, st, i)
		}
	}
	if admin != nil {
		calls := func() int64 {
			var n int64
			for _, v := range redistest.CommandCalls(context.Background(), t, admin) {
				n += v
			}
			return n
		}
		// The nodes' own loops go on meanwhile, a handful of calls a tick
		// each: a poll that cost a round trip would add 100 of them.
		const polls = 100
		before := calls()
		for i := range polls {
			look(line[i%len(line)], nodes[i%2])
		}
		if extra := calls() - before; extra >= polls/2 {
			t.Fatalf("%d polls of waitlisted fans cost %d Redis commands, as many as half the polls: polls reached the store", polls, extra)
		}
	}
	// A fan in session without the claim cannot buy a returned unit.
	origin.refund(1)
	if resp, _ := buyers[0].get(base + "/buy"); resp.StatusCode != http.StatusConflict {
		t.Fatalf("a buy without the waitlist claim after the sell-out: %d; want 409", resp.StatusCode)
	}

	// Two refunds in all: the supply (2) reaches the room on the answer to
	// a fan in session.
	origin.refund(1)
	clock.Advance(100 * time.Millisecond)
	if resp, _ := buyers[1].get(bNode + "/events"); resp.StatusCode != http.StatusOK {
		t.Fatalf("a fan in session: %d", resp.StatusCode)
	}
	step(2)
	var in []int
	for i, f := range line {
		st := look(f, nodes[i%2])
		if st.State == waitingroom.StateAdmitted {
			in = append(in, i)
		}
	}
	if len(in) != 2 || in[0] != 0 || in[1] != 1 {
		t.Fatalf("after 2 refunds let in %v; want fans 0 and 1", in)
	}
	for i, f := range line[:2] {
		// Answers read at distinct instants, as on a real clock: the
		// latest report wins, whichever node sends it first.
		clock.Advance(100 * time.Millisecond)
		resp, _ := f.get(nodes[i%2] + "/buy")
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("waitlisted fan %d's buy: %d", i, resp.StatusCode)
		}
	}
	step(3)
	for i, f := range line[2:] {
		if st := look(f, nodes[i%2]); st.State != waitingroom.StateWaitlist || *st.Position != uint64(i) {
			t.Fatalf("fan %d after the returns were sold: %+v; want waitlisted with %d ahead", i+2, st, i)
		}
	}

	// The fairness report shows the return and the places it reached.
	rep, err := handles()[0].Fairness(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	w := rep.Waitlist
	if w == nil || w.Admitted != 2 || !w.EachReturnReachesOneFan || !w.InOrder {
		t.Fatalf("the fairness report's waitlist: %+v", w)
	}
	var fans uint64
	for _, s := range w.Steps {
		fans += s.Fans
		if s.Owed > s.Supply {
			t.Fatalf("a step owed %d of %d units", s.Owed, s.Supply)
		}
	}
	back := uint64(0)
	for _, r := range w.Returns {
		back += r.Back
	}
	if fans != 2 || back < 2 || len(w.Steps) == 0 || w.Steps[0].Start != w.Periods[0].From {
		t.Fatalf("returns %+v steps %+v; want the 2 units back reaching the first 2 places of the waitlist", w.Returns, w.Steps)
	}

	// The operator reopens the sale with a new allocation of 4 units: the
	// line moves at the rate, and the passes issued from then on carry the
	// claim (what is left is anyone's), so the origin, which still holds
	// what it sells for the waitlist since it sold out, sells to the 3 fans
	// left in line. Without it they would be let in to a sale that refuses
	// them. A buyer let in before the sell-out, still in session, buys the
	// fourth: their pass is signed again with the claim on the way.
	origin.refund(4)
	patchRoom(t, room, `{"sold_out": false}`)
	step(3)
	for i, f := range line[2:] {
		if st := look(f, nodes[i%2]); st.State != waitingroom.StateAdmitted {
			t.Fatalf("fan %d after the sale reopened: %+v; want admitted", i+2, st)
		}
		clock.Advance(100 * time.Millisecond)
		if resp, _ := f.get(nodes[i%2] + "/buy"); resp.StatusCode != http.StatusOK {
			t.Fatalf("fan %d's buy after the sale reopened: %d; want 200", i+2, resp.StatusCode)
		}
	}
	clock.Advance(100 * time.Millisecond)
	if resp, _ := buyers[0].get(bNode + "/buy"); resp.StatusCode != http.StatusOK {
		t.Fatalf("a buyer let in before the sell-out, after the sale reopened: %d; want 200", resp.StatusCode)
	}

	// The invariants.
	origin.mu.Lock()
	defer origin.mu.Unlock()
	if maxActive > 10 {
		t.Errorf("the cap: %d live sessions, cap 10", maxActive)
	}
	if len(origin.sold) != 9 || origin.negative || origin.refused != 1 {
		t.Errorf("the origin sold %d units (%v), negative %v, refused %d; want the 3, the 2 returned and the 4 after the reopening, 1 refused",
			len(origin.sold), origin.sold, origin.negative, origin.refused)
	}
	seen := map[string]bool{}
	for _, s := range origin.sold[:8] { // buyers[0] bought twice: before the sell-out and after the reopening
		if seen[s] || s == "" {
			t.Errorf("unit sold twice to %q, or to nobody", s)
		}
		seen[s] = true
	}
	snap := handles()[0].Snapshot()
	if snap.Seq != 8 {
		t.Errorf("%d places issued for 8 visitors: one place each", snap.Seq)
	}
}
