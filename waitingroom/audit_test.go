package waitingroom_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/foyer-dev/foyer/waitingroom"
)

// TestAuditTrailAndPauseEffect makes every kind of change a running room
// takes, and checks that each is in the audit trail with its author, reason,
// old and new values, and in the fairness report with the pause's effect.
func TestAuditTrailAndPauseEffect(t *testing.T) {
	e := newEnv(t)
	r := e.node("concert", waitingroom.Settings{TotalActiveUsers: 100, NewUsersPerMinute: 60, Title: "Concert"})
	for range 8 {
		e.join(r)
	}
	e.step(2, r)
	patch := func(who, note string, o waitingroom.Overrides) *waitingroom.Operator {
		t.Helper()
		op := &waitingroom.Operator{Who: who, Note: note}
		if _, err := r.Patch(waitingroom.WithOperator(e.ctx, op), o); err != nil {
			t.Fatal(err)
		}
		return op
	}
	pausedAt := e.clock.Now()
	op := patch("127.0.0.1:5000", "payment provider down", waitingroom.OverridesOf(waitingroom.Settings{Paused: true}, "paused"))
	if op.Entry == nil || op.AuditErr != nil || op.Entry.Seq != 1 || op.Entry.Action != waitingroom.AuditPause {
		t.Fatalf("pause recorded as %+v (%v)", op.Entry, op.AuditErr)
	}
	// Pausing a paused room changes nothing, and records nothing.
	if again := patch("127.0.0.1:5001", "", waitingroom.OverridesOf(waitingroom.Settings{Paused: true}, "paused")); again.Entry != nil {
		t.Fatalf("a change that changes nothing was recorded: %+v", again.Entry)
	}
	e.step(5, r)
	resumedAt := e.clock.Now()
	patch("cli on box via 127.0.0.1:5002", "", waitingroom.OverridesOf(waitingroom.Settings{Paused: false}, "paused"))
	e.step(3, r)
	patch("127.0.0.1:5003", "", waitingroom.OverridesOf(waitingroom.Settings{QueueAll: true}, "queue_all"))
	patch("127.0.0.1:5004", "", waitingroom.OverridesOf(waitingroom.Settings{Title: "Concert, late show", NewUsersPerMinute: 120}, "title", "new_users_per_minute"))
	if err := r.DeclareSoldOut(e.ctx); err != nil {
		t.Fatal(err)
	}

	trail, err := r.AuditTrail(e.ctx, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range trail {
		var ch []string
		for _, c := range a.Changes {
			ch = append(ch, fmt.Sprintf("%s %s->%s", c.Setting, c.Old, c.New))
		}
		got = append(got, fmt.Sprintf("%d %s %s [%s] %q", a.Seq, a.Action, a.Who, strings.Join(ch, ", "), a.Note))
	}
	want := []string{
		`1 pause 127.0.0.1:5000 [paused false->true] "payment provider down"`,
		`2 resume cli on box via 127.0.0.1:5002 [paused true->false] ""`,
		`3 queue_all 127.0.0.1:5003 [queue_all false->true] ""`,
		`4 patch 127.0.0.1:5004 [title "Concert"->"Concert, late show", new_users_per_minute 60->120] ""`,
		`5 sold_out origin [sold_out false->true] ""`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("trail:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !trail[0].At.Equal(pausedAt) || !trail[1].At.Equal(resumedAt) {
		t.Fatalf("pause at %v, resume at %v; want %v and %v", trail[0].At, trail[1].At, pausedAt, resumedAt)
	}

	e.step(1, r)
	rep, err := r.Fairness(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Operations) != len(want) || rep.Operations[0].Note != "payment provider down" || string(rep.Operations[3].Changes[1].New) != "120" {
		t.Fatalf("report's operations %+v, want the trail without its authors", rep.Operations)
	}
	if len(rep.Pauses) != 1 || !rep.Pauses[0].From.Equal(pausedAt) || rep.Pauses[0].To == nil || !rep.Pauses[0].To.Equal(resumedAt) || rep.Pauses[0].LetIn != 0 {
		t.Fatalf("pauses %+v, want one from %v to %v letting in nobody", rep.Pauses, pausedAt, resumedAt)
	}
	var before, after uint64
	for _, a := range rep.Admissions {
		switch {
		case a.At.Before(pausedAt):
			before += a.Count
		case !a.At.Before(resumedAt):
			after += a.Count
		}
	}
	if before == 0 || after == 0 {
		t.Fatalf("admissions %+v: want some before the pause and some after it, to tell the pause's effect", rep.Admissions)
	}
}
