package waitingroom_test

import (
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
	"github.com/foyer-dev/foyer/waitingroom/storetest"
)

func TestParseJoinLimit(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want waitingroom.JoinLimit
		text string
	}{
		{"20/m", waitingroom.JoinLimit{N: 20, Per: time.Minute}, "20/m"},
		{"5/s burst 10", waitingroom.JoinLimit{N: 5, Per: time.Second, Burst: 10}, "5/s burst 10"},
		{"100/h", waitingroom.JoinLimit{N: 100, Per: time.Hour}, "100/h"},
		{"30/10m", waitingroom.JoinLimit{N: 30, Per: 10 * time.Minute}, "30/10m"},
		{"  20/m   burst  3 ", waitingroom.JoinLimit{N: 20, Per: time.Minute, Burst: 3}, "20/m burst 3"},
		{"off", waitingroom.JoinLimit{}, "off"},
		{"", waitingroom.JoinLimit{}, "off"},
	} {
		got, err := waitingroom.ParseJoinLimit(tc.in)
		if err != nil || got != tc.want || got.String() != tc.text {
			t.Errorf("%q: %+v %q %v, want %+v %q", tc.in, got, got.String(), err, tc.want, tc.text)
		}
	}
	for _, bad := range []string{"20", "20/", "/m", "0/m", "-1/m", "x/m", "20/d", "20/-1m", "20/m burst", "20/m burst 0",
		"20/m burst x", "20/m bursts 4", "20/m burst 4 5", "off off"} {
		if got, err := waitingroom.ParseJoinLimit(bad); err == nil {
			t.Errorf("%q: accepted as %+v", bad, got)
		}
	}
}

// TestJoinLimitBounds: Validate refuses a limit out of bounds, naming it.
func TestJoinLimitBounds(t *testing.T) {
	for _, tc := range []struct {
		l  waitingroom.JoinLimit
		ok bool
	}{
		{waitingroom.JoinLimit{N: 1, Per: time.Second}, true},
		{waitingroom.JoinLimit{N: 1_000_000, Per: 24 * time.Hour, Burst: 1_000_000}, true},
		{waitingroom.JoinLimit{N: 1_000_001, Per: time.Minute}, false},
		{waitingroom.JoinLimit{N: 1, Per: 500 * time.Millisecond}, false},
		{waitingroom.JoinLimit{N: 1, Per: 25 * time.Hour}, false},
		{waitingroom.JoinLimit{N: 1, Per: time.Minute, Burst: 1_000_001}, false},
	} {
		s := waitingroom.Settings{JoinLimit: tc.l}.WithDefaults()
		err := s.Validate()
		var se *waitingroom.SettingError
		if tc.ok != (err == nil) || err != nil && (!errors.As(err, &se) || se.Setting != "join_limit") {
			t.Errorf("%v: %v", tc.l, err)
		}
	}
}

// TestAllowJoin: with the room's clock frozen, one address gets its burst of
// places and is then refused with the time to its next, while another
// address and the same /64's neighbour outside it are not held back; time
// refills it; a room that gives no place does not count; turning the limit
// off at runtime lets everyone in at once.
func TestAllowJoin(t *testing.T) {
	e := newEnv(t)
	r := e.node("limited", waitingroom.Settings{JoinLimit: waitingroom.JoinLimit{N: 20, Per: time.Minute, Burst: 3}})
	a := netip.MustParseAddr("2001:db8:0:1::1")
	sameNet := netip.MustParseAddr("2001:db8:0:1:ffff::2")
	otherNet := netip.MustParseAddr("2001:db8:0:2::1")
	for i := range 3 {
		if err := r.AllowJoin(a); err != nil {
			t.Fatalf("join %d of a burst of 3: %v", i+1, err)
		}
	}
	err := r.AllowJoin(sameNet)
	var le *waitingroom.JoinLimitedError
	if !errors.As(err, &le) || !errors.Is(err, waitingroom.ErrJoinLimited) || le.RetryAfter != 3*time.Second {
		t.Fatalf("fourth join from the same /64: %v, want refused, next in 3s", err)
	}
	if err := r.AllowJoin(otherNet); err != nil {
		t.Fatalf("another /64: %v", err)
	}
	e.clock.Advance(3 * time.Second)
	if err := r.AllowJoin(a); err != nil {
		t.Fatalf("after 3s: %v", err)
	}
	if err := r.AllowJoin(a); err == nil {
		t.Fatal("the token earned in 3s was spent twice")
	}
	if got := r.Stats().JoinsLimited.Load(); got != 2 {
		t.Errorf("JoinsLimited = %d, want 2", got)
	}
	if _, err := r.Patch(e.ctx, waitingroom.OverridesOf(waitingroom.Settings{SoldOut: true}, "sold_out")); err != nil {
		t.Fatal(err)
	}
	if err := r.AllowJoin(a); err != nil {
		t.Fatalf("a sold-out room refused a newcomer by the limit (it gives no place): %v", err)
	}
	if _, err := r.Patch(e.ctx, waitingroom.OverridesOf(waitingroom.Settings{}, "sold_out", "join_limit")); err != nil {
		t.Fatal(err)
	}
	for range 10 {
		if err := r.AllowJoin(a); err != nil {
			t.Fatalf("with the limit turned off: %v", err)
		}
	}
	if r.TrackedClients() != 2 {
		t.Errorf("tracked %d addresses, want 2 (two /64s)", r.TrackedClients())
	}
}

// TestAllowJoinMemoryBound: three times as many addresses as the room keeps
// leave it keeping MaxTrackedClients, and the one address that keeps
// knocking stays refused throughout.
func TestAllowJoinMemoryBound(t *testing.T) {
	e := newEnv(t)
	r := e.node("bounded", waitingroom.Settings{JoinLimit: waitingroom.JoinLimit{N: 1, Per: time.Hour}})
	abuser := netip.MustParseAddr("198.51.100.1")
	if err := r.AllowJoin(abuser); err != nil {
		t.Fatal(err)
	}
	for i := range 3 * waitingroom.MaxTrackedClients {
		var b [16]byte
		b[0], b[1], b[4], b[5], b[6] = 0x20, 0x01, byte(i>>16), byte(i>>8), byte(i)
		_ = r.AllowJoin(netip.AddrFrom16(b))
		if i%64 == 0 && r.AllowJoin(abuser) == nil {
			t.Fatalf("the abuser was forgotten after %d other addresses", i)
		}
	}
	if n := r.TrackedClients(); n != waitingroom.MaxTrackedClients {
		t.Fatalf("the room keeps %d addresses, want its bound %d", n, waitingroom.MaxTrackedClients)
	}
}

// TestJoinThatMadeNoPlaceKeepsTheAllowance: join_limit counts places, so a
// join refused with a 503 (the store away) gives its allowance back: once the
// store answers, the address has its whole burst, not a minute of 429s.
func TestJoinThatMadeNoPlaceKeepsTheAllowance(t *testing.T) {
	e := newEnv(t)
	flaky := storetest.NewFlaky(e.store)
	e.store = flaky
	r := e.node("limited-down", waitingroom.Settings{TotalActiveUsers: 1, JoinLimit: waitingroom.JoinLimit{N: 3, Per: time.Minute, Burst: 3}})
	fan := waitingroom.Arrival{Client: netip.MustParseAddr("192.0.2.44")}
	flaky.SetDown(true)
	e.clock.Advance(3 * time.Second)
	_ = r.Tick(e.ctx)
	for i := range 5 {
		_, err := r.Admit(e.ctx, fan)
		if !errors.Is(err, waitingroom.ErrStoreUnavailable) {
			t.Fatalf("join %d with the store down: %v, want ErrStoreUnavailable (not a spent allowance)", i, err)
		}
	}
	flaky.SetDown(false)
	e.step(1, r)
	for i := range 3 {
		if d, err := r.Admit(e.ctx, fan); err != nil || d.Ticket.Room == "" {
			t.Fatalf("join %d once the store is back: %+v %v, want a place", i, d.Status, err)
		}
	}
	var jl *waitingroom.JoinLimitedError
	if _, err := r.Admit(e.ctx, fan); !errors.As(err, &jl) {
		t.Fatalf("fourth join in the minute: %v, want the limit", err)
	}
}
