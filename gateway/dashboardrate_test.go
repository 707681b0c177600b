package gateway

import (
	"testing"
	"time"
)

// TestDashboardAdmittedPerMinute: the dashboard's admission rate is the
// places admitted in the minute before each sample. A room letting one fan
// in every five seconds reads 12 a minute at every sample, where one
// second's admissions times 60 swung between 0 and 60; before the node has
// watched a minute there is no figure, and a counter that goes back (a
// re-seeded store) starts the minute again.
func TestDashboardAdmittedPerMinute(t *testing.T) {
	h := newRoomHistory()
	t0 := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	at := func(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }
	for sec := 0; sec <= 180; sec++ {
		s := h.observe(at(sec), roomFigures{admitted: uint64(sec / 5)})
		switch {
		case sec < 60 && s.Admitted != nil:
			t.Fatalf("at %d s, before a whole minute was watched: %v a minute, want none", sec, *s.Admitted)
		case sec >= 60 && (s.Admitted == nil || *s.Admitted != 12):
			t.Fatalf("at %d s: %v a minute, want 12", sec, s.Admitted)
		}
	}
	if len(h.admitted) > 62 {
		t.Errorf("%d counter samples kept for a one-minute window", len(h.admitted))
	}
	// The hour's ten-second samples average the minute's rate.
	for _, s := range h.history(0) {
		if s.Admitted != nil && *s.Admitted != 12 {
			t.Errorf("sample at %d: %v a minute, want 12", s.T, *s.Admitted)
		}
	}

	// A burst: 30 let in at once, then nothing. The rate shows the 30 for a
	// minute, then falls to 0, never 30 × 60.
	h = newRoomHistory()
	for sec := 0; sec <= 150; sec++ {
		n := uint64(0)
		if sec >= 70 {
			n = 30
		}
		s := h.observe(at(sec), roomFigures{admitted: n})
		want := 0.0
		if sec >= 70 && sec < 130 {
			want = 30
		}
		if sec >= 60 && (s.Admitted == nil || *s.Admitted != want) {
			t.Fatalf("burst, at %d s: %v a minute, want %v", sec, s.Admitted, want)
		}
	}

	// The counter goes back: no figure until a minute of the new count.
	s := h.observe(at(151), roomFigures{admitted: 2})
	if s.Admitted != nil {
		t.Errorf("after the counter went back: %v a minute, want none", *s.Admitted)
	}
	for sec := 152; sec <= 211; sec++ {
		s = h.observe(at(sec), roomFigures{admitted: 2})
	}
	if s.Admitted == nil || *s.Admitted != 0 {
		t.Errorf("a minute after the counter went back: %v, want 0", s.Admitted)
	}

	// A late sampler: the rate is over the time since the base, per minute.
	h = newRoomHistory()
	h.observe(at(0), roomFigures{admitted: 0})
	s = h.observe(at(90), roomFigures{admitted: 30})
	if s.Admitted == nil || *s.Admitted != 20 {
		t.Errorf("30 over 90 s: %v a minute, want 20", s.Admitted)
	}
}
