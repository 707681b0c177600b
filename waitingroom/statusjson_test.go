package waitingroom

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"
)

func TestStatusAppendJSONMatchesEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	u := func(v uint64) *uint64 { return &v }
	i := func(v int64) *int64 { return &v }
	tm := func(v time.Time) *time.Time { return &v }
	titles := []string{"", "Night of the Foyer", `Quotes "and" \slashes`, "<b>&amp;</b>", "Café Ünïcode ✓", "tab\there", "bad \xff utf8"}
	states := []State{StatePrequeue, StateQueued, StateAdmitted, StateSoldOut, StateClosed, StatePaused}
	for n := range 2000 {
		st := Status{
			Room:           "room-" + string(rune('a'+n%26)),
			Title:          titles[n%len(titles)],
			State:          states[n%len(states)],
			RefreshSeconds: rng.IntN(30),
			Progress:       roundProgress(rng.Float64()),
			Waiting:        rng.Uint64() >> rng.IntN(64),
			Reconnecting:   rng.IntN(2) == 0,
			AwaitingDraw:   rng.IntN(4) == 0,
			Returned:       rng.IntN(4) == 0,
			TurnPassed:     rng.IntN(4) == 0,
			QueueAll:       rng.IntN(4) == 0,
		}
		if rng.IntN(3) > 0 {
			st.Position = u(rng.Uint64() >> rng.IntN(64))
		}
		if rng.IntN(3) > 0 {
			st.ETASeconds = i(rng.Int64N(1 << 40))
		}
		if rng.IntN(2) == 0 {
			st.OpensAt = tm(time.Unix(rng.Int64N(4e9), rng.Int64N(1e9)).UTC())
		}
		if rng.IntN(2) == 0 {
			st.DrawIndex = u(rng.Uint64N(1e9))
		}
		if rng.IntN(2) == 0 {
			outcomes := []Outcome{OutcomeLikely, OutcomeAtRisk, OutcomeUnlikely}
			st.Outcome = outcomes[rng.IntN(len(outcomes))]
			c := chanceOf(rng.Float64())
			st.Chance = &c
			st.SupplyEnds = &SupplyEnds{Low: rng.Uint64N(1e6), High: rng.Uint64N(1e7)}
		}
		if rng.IntN(2) == 0 {
			st.SessionEnds = tm(time.Unix(rng.Int64N(4e9), 0).In(time.FixedZone("x", 3600)))
		}
		want, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		if got := st.AppendJSON(nil); string(got) != string(want) {
			t.Fatalf("AppendJSON differs from encoding/json:\n got %s\nwant %s", got, want)
		}
	}
}
