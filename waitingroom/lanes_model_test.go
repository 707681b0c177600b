package waitingroom_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/foyer-dev/foyer/waitingroom"
)

// TestLanesModel drives random sequences against two nodes of one room with
// three priority lanes (docs/line.md, "Priority lanes") sharing one store, on
// the memory store and on Redis: fans join random lanes through either node
// (a lane the room lacks, or none, is the general lane), poll through either,
// go quiet, and time passes. It checks after every step that:
//
//  1. live sessions and pending admissions never exceed total_active_users;
//  2. within each lane, fans are let in in the order they joined it;
//  3. the position shown to a fan never rises, in any lane;
//  4. over the whole sequence, the store's record of every step's split
//     replays under the weights in force at the step and each lane's share
//     stays within one admission step of its weight while the same lanes
//     wait (waitingroom.CheckLanes, as the fairness report makes it).
//
// Up to two scheduled phases set the lanes' weights of their own (a weight
// of 0, or a lane left out, admits nobody in the phase; a phase may bring a
// lane the room's own lanes lack), or leave the room's in force: fans keep
// their places across every switch, so 2 and 3 hold through them.
//
// Lanes add no state or event to the admission table (a lane is chosen on
// joining, TicketNew on EventArrive; a phase's weights change no state), so
// this runs beside TestAdmissionModel rather than in it.
func TestLanesModel(t *testing.T) {
	for _, b := range modelBackends {
		t.Run(b.name, func(t *testing.T) {
			open := b.open(t)
			rapid.Check(t, func(rt *rapid.T) { lanesProperty(rt, open) })
		})
	}
}

type laneModelFan struct {
	lane   string
	cookie string
	place  uint64
	last   uint64 // last position shown, plus one (0: none yet)
	in     bool
}

func lanesProperty(t *rapid.T, open modelOpener) {
	ctx := context.Background()
	clk := newClock()
	room := fmt.Sprintf("lanes-model-%d-%d", time.Now().UnixNano(), modelRooms.Add(1))
	stores, truth, drop := open(room)
	defer drop()
	lanes, err := waitingroom.ParseLanes("presale=3 members=2 general=1")
	if err != nil {
		t.Fatal(err)
	}
	cap := rapid.IntRange(1, 12).Draw(t, "cap")
	rate := rapid.SampledFrom([]int{60, 180, 360, 600}).Draw(t, "rate")
	settings := waitingroom.Settings{TotalActiveUsers: cap, NewUsersPerMinute: rate, Lanes: lanes, SessionDuration: time.Minute}
	// Up to two phases, one after the other, each setting the lanes'
	// weights (some of them 0) or leaving the room's.
	var phases []waitingroom.ScheduledPhase
	at := clk.Now()
	for i := range rapid.IntRange(0, 2).Draw(t, "phases") {
		// From a second after the room starts: the nodes commit each
		// phase's weights as they start, which must be before the phase.
		at = at.Add(time.Duration(rapid.IntRange(1, 20).Draw(t, "phase_gap")) * time.Second)
		ph := waitingroom.ScheduledPhase{Name: fmt.Sprintf("p%d", i), Start: at}
		at = at.Add(time.Duration(rapid.IntRange(2, 40).Draw(t, "phase_length")) * time.Second)
		ph.End = at
		if rapid.Bool().Draw(t, "phase_sets_lanes") {
			var spec []string
			for _, name := range []string{"general", "members", "presale", "vip"} {
				if w := rapid.IntRange(-1, 3).Draw(t, "phase_weight_"+name); w >= 0 {
					spec = append(spec, fmt.Sprintf("%s=%d", name, w))
				}
			}
			pl, err := waitingroom.ParseLanes(strings.Join(spec, " "))
			if err != nil {
				t.Skip("weights that admit nobody: ", err)
			}
			ph.Settings = waitingroom.OverridesOf(waitingroom.Settings{Lanes: pl}, "lanes")
		}
		phases = append(phases, ph)
	}
	settings.Phases = waitingroom.NewPhases(phases...)
	lanes = settings.RoomLanes()
	key, err := waitingroom.GenerateSigningKey()
	if err != nil {
		t.Fatal(err)
	}
	var nodes []*waitingroom.Room
	for _, s := range stores {
		r, err := waitingroom.NewRoom(waitingroom.Config{ID: room, Settings: settings, Store: s, Key: key, Now: clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Start(ctx); err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, r)
	}
	var fans []*laneModelFan
	// admitted lists, per lane number, the places seen let in.
	admitted := map[int][]uint64{}
	poll := func(f *laneModelFan, node int) {
		d, err := nodes[node].Admit(ctx, waitingroom.Arrival{Kind: waitingroom.RequestStatus, Ticket: f.cookie, Lane: f.lane})
		if err != nil {
			t.Fatalf("poll of %s fan at %d: %v", f.lane, f.place, err)
		}
		if d.SetTicket {
			f.cookie = nodes[node].SealTicket(d.Ticket)
		}
		if d.Rejoined {
			// Their turn passed while they were quiet: a new place, at
			// the back of the general lane (a rejoin carries no code).
			f.place, f.last, f.lane = d.Ticket.Key, 0, ""
		}
		switch st := d.Status; {
		case st.State == waitingroom.StateAdmitted:
			if !f.in {
				f.in = true
				lane, _ := waitingroom.LaneOfPlace(f.place)
				admitted[lane] = append(admitted[lane], f.place)
			}
		case st.Position != nil:
			if f.last > 0 && *st.Position+1 > f.last {
				t.Fatalf("%s fan at %d: position rose from %d to %d", f.lane, f.place, f.last-1, *st.Position)
			}
			f.last = *st.Position + 1
		}
	}
	t.Repeat(map[string]func(*rapid.T){
		"join": func(t *rapid.T) {
			lane := rapid.SampledFrom([]string{"", "general", "members", "presale", "vip", "nosuchlane"}).Draw(t, "lane")
			f := &laneModelFan{lane: lane}
			d, err := nodes[rapid.IntRange(0, 1).Draw(t, "node")].Admit(ctx, waitingroom.Arrival{Kind: waitingroom.RequestStatus, Lane: lane})
			if err != nil {
				t.Fatalf("join to %q: %v", lane, err)
			}
			f.place, f.cookie = d.Ticket.Key, nodes[0].SealTicket(d.Ticket)
			want := lanes.LaneOf(lane)
			if got, _ := waitingroom.LaneOfPlace(f.place); got != want {
				t.Fatalf("a fan of %q got place %d, lane %d; want lane %d", lane, f.place, got, want)
			}
			if d.Status.State == waitingroom.StateAdmitted {
				f.in = true
				admitted[want] = append(admitted[want], f.place)
			} else if d.Status.Position != nil {
				f.last = *d.Status.Position + 1
			}
			fans = append(fans, f)
		},
		"poll": func(t *rapid.T) {
			if len(fans) == 0 {
				t.Skip("nobody joined")
			}
			f := fans[rapid.IntRange(0, len(fans)-1).Draw(t, "fan")]
			poll(f, rapid.IntRange(0, 1).Draw(t, "node"))
		},
		"wait": func(t *rapid.T) {
			clk.Advance(time.Duration(rapid.IntRange(1, 3).Draw(t, "seconds")) * time.Second)
			for _, n := range nodes {
				if err := n.Tick(ctx); err != nil {
					t.Fatalf("tick: %v", err)
				}
			}
			// Fans poll as their pages do.
			for k, f := range fans {
				if !f.in {
					poll(f, k%2)
				}
			}
		},
		"": func(t *rapid.T) {
			snap, err := truth.Snapshot(ctx, room, clk.Now(), 0)
			if err != nil {
				t.Fatalf("snapshot: %v", err)
			}
			if snap.Active+snap.Pending > cap {
				t.Fatalf("%d live and %d pending over a cap of %d", snap.Active, snap.Pending, cap)
			}
			// First come, first served within each lane: the line reached
			// every place let in (and the store's history, checked at the
			// end, shows each lane's places let in in order).
			for lane, places := range admitted {
				for _, p := range places {
					_, n := waitingroom.LaneOfPlace(p)
					serving := snap.Serving
					if lane > 0 {
						serving = snap.Lanes[lane].Serving
					}
					if n >= serving {
						t.Fatalf("lane %d: place %d let in before the line reached it (serving %d)", lane, n, serving)
					}
				}
			}
		},
	})
	hist, err := truth.History(ctx, room, 0, waitingroom.MaxHistoryPage)
	if err != nil {
		t.Fatal(err)
	}
	rep := waitingroom.LanesReport{Weights: lanes.String(), Commitment: waitingroom.LaneCommitment(lanes.String())}
	for _, l := range lanes.List() {
		rep.Lanes = append(rep.Lanes, waitingroom.LaneAdmissions{Name: l.Name, Weight: l.Weight})
	}
	for _, e := range hist {
		if e.Kind == waitingroom.HistoryLanes {
			rep.Steps = append(rep.Steps, e)
			continue
		}
		lane, n := waitingroom.LaneOfPlace(e.Start)
		e.Start = n
		rep.Lanes[lane].Admissions = append(rep.Lanes[lane].Admissions, e)
	}
	rep.Phases = waitingroom.PhaseLanesOf(nodes[0], settings, rep.Lanes)
	// Nobody was let in from a lane of weight 0 by a step of a phase.
	for _, p := range rep.Phases {
		for i, l := range p.Lanes {
			for _, e := range rep.Steps {
				if p.Weights != "" && e.At.After(p.Start) && e.At.Before(p.End) && l.Weight == 0 && e.Shares[i].Admitted > 0 {
					t.Fatalf("phase %s: a step at %s let in %d from lane %s of weight 0", p.Name, e.At, e.Shares[i].Admitted, l.Name)
				}
			}
		}
	}
	if c := waitingroom.CheckLanes(rep); !c.OK {
		t.Fatalf("the lanes check: %+v", c)
	}
}
