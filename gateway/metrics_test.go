package gateway

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/foyer-dev/foyer/waitingroom"
)

// gather scrapes reg into name → room → value, checking that every series is
// labelled by room and nothing else.
func gather(t *testing.T, reg *prometheus.Registry) map[string]map[string]float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	out := make(map[string]map[string]float64)
	for _, f := range families {
		for _, m := range f.GetMetric() {
			labels := m.GetLabel()
			name := f.GetName()
			if len(labels) == 2 && labels[0].GetName() == "result" && name == metricPrefix+"code_attempts_total" {
				// The one metric by result: read as one family per result.
				name += "{" + labels[0].GetValue() + "}"
				labels = labels[1:]
			}
			if len(labels) != 1 || labels[0].GetName() != "room" {
				t.Fatalf("%s has labels %v, want room only", f.GetName(), labels)
			}
			v := m.GetGauge().GetValue()
			if f.GetType().String() == "COUNTER" {
				v = m.GetCounter().GetValue()
			}
			if out[name] == nil {
				out[name] = make(map[string]float64)
			}
			out[name][labels[0].GetValue()] = v
		}
	}
	return out
}

func TestMetricsReportLiveRooms(t *testing.T) {
	e := newAdminEnv(t, nil)
	concert := e.node("concert", waitingroom.Settings{NewUsersPerMinute: 60, TotalActiveUsers: 100, SessionDuration: 10 * time.Minute})
	// A reload in progress: a second handle on the concert, counting its own
	// node events, must not make the registry see the room twice.
	concert2 := e.node("concert", waitingroom.Settings{NewUsersPerMinute: 60, TotalActiveUsers: 100, SessionDuration: 10 * time.Minute, Title: "new"})
	quiet := e.node("quiet", waitingroom.Settings{})
	e.join(concert, 4) // one walks in, three wait
	e.join(concert2, 2)
	e.step(1, concert, concert2, quiet) // one more admitted, not yet claimed
	if err := concert.Revoke(context.Background(), waitingroom.Pass{ID: "p1", Subject: "s", ExpiresAt: e.clock.Now().Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if _, err := concert.CheckPass("not-a-pass"); err == nil {
		t.Fatal("a garbage pass was accepted")
	}

	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(&roomCollector{rooms: func() []liveRoom { return groupRooms([]*waitingroom.Room{concert, concert2, quiet}) }})
	got := gather(t, reg)
	want := map[string]float64{
		"waiting":               4, // six keys, two admitted; all young, so live
		"places":                4,
		"skipped_total":         0,
		"idled_out_total":       0,
		"heartbeats_total":      0, // no tick since the joins
		"active":                1,
		"pending":               1,
		"returning":             0,
		"admitted_total":        2,
		"claimed_total":         1,
		"abandoned_total":       0,
		"store_healthy":         1,
		"joins_total":           6, // both handles
		"joins_limited_total":   0, // no join_limit
		"direct_admits_total":   1,
		"polls_total":           0, // joining is not polling
		"claims_total":          0,
		"passes_rejected_total": 1,
		"revokes_total":         1,
		"store_errors_total":    0,
		"reseeds_total":         0,
		"reclaims_total":        0,
		"revocations_unsent":    0,
		"challenges_total":      0, // the room asks nothing of newcomers
		"answers_refused_total": 0,
		// Histograms, read here as 0: waittimes_test.go reads them.
		"wait_duration_seconds":    0,
		"session_duration_seconds": 0,
		"requeued_total":           0,
		"requeues_total":           0,
		"requeues_refused_total":   0,
		// No code was tried.
		"code_attempts_total{accepted}": 0,
		"code_attempts_total{wrong}":    0,
		"code_attempts_total{used_up}":  0,
		"code_attempts_total{limited}":  0,
		"code_attempts_total{returned}": 0, "code_attempts_total{unreturned}": 0,
		// The supply's counters; its gauges are absent while no supply
		// was reported (TestCaddySupplyFromTheOrigin reads them).
		"supply_reports_total": 0,
		"supply_refused_total": 0,
		// No last_in_line_eta_seconds: the line has moved for a second,
		// too little to measure a pace by.
	}
	for name, v := range want {
		if g, ok := got[metricPrefix+name]["concert"]; !ok || g != v {
			t.Errorf("%s{room=concert} = %v (present %v), want %v", metricPrefix+name, g, ok, v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d metric families, want %d: %v", len(got), len(want), got)
	}
	if v, ok := got[metricPrefix+"waiting"]["quiet"]; !ok || v != 0 {
		t.Errorf("the quiet room is missing or not empty: %v %v", v, ok)
	}

	// A paused line has no ETA: the series goes away rather than lie.
	paused := true
	if _, err := concert.Patch(context.Background(), waitingroom.OverridesOf(waitingroom.Settings{Paused: paused}, "paused")); err != nil {
		t.Fatal(err)
	}
	e.step(1, concert2)
	if v, ok := gather(t, reg)[metricPrefix+"last_in_line_eta_seconds"]["concert"]; ok {
		t.Errorf("paused room still reports an ETA of %v", v)
	}
}

// TestMetricsRegisterOncePerRegistry: every handler of a config registers the
// collector on the config's registry; only the first does anything, and a new
// config's registry takes it again.
func TestMetricsRegisterOncePerRegistry(t *testing.T) {
	first := prometheus.NewPedanticRegistry()
	for range 3 {
		registerMetrics(first, zap.NewNop())
	}
	if _, err := first.Gather(); err != nil {
		t.Fatalf("gather after registering three times: %v", err)
	}
	if !first.Unregister(roomMetrics) || first.Unregister(roomMetrics) {
		t.Error("the collector was not registered exactly once")
	}
	reload := prometheus.NewPedanticRegistry()
	registerMetrics(reload, zap.NewNop())
	if !reload.Unregister(roomMetrics) {
		t.Error("a new config's registry did not get the collector")
	}
	registerMetrics(nil, zap.NewNop()) // a context without metrics
}

// TestMetricsAndAdminShowLiveness: ghosts skipped and sessions idled out are
// counted, and the admin view shows the raw line (places) beside the live
// one (waiting).
func TestMetricsAndAdminShowLiveness(t *testing.T) {
	e := newAdminEnv(t, nil)
	r := e.node("ghosts", waitingroom.Settings{NewUsersPerMinute: 60, TotalActiveUsers: 100, SessionIdleTimeout: time.Minute})
	e.join(r, 1) // walks in, and then goes quiet
	queueAll := true
	if _, err := r.Patch(context.Background(), waitingroom.OverridesOf(waitingroom.Settings{QueueAll: queueAll}, "queue_all")); err != nil {
		t.Fatal(err)
	}
	e.join(r, 200) // places nobody looks at again
	e.step(160, r)
	in := r.Info()
	v := newRoomView(in, nodeStats{})
	if v.Places != 200 || v.Waiting != 0 {
		t.Fatalf("admin view: %d places, %d waiting; want the raw line of 200 and no one live", v.Places, v.Waiting)
	}
	if _, err := r.Patch(context.Background(), waitingroom.OverridesOf(waitingroom.Settings{}, "queue_all")); err != nil {
		t.Fatal(err)
	}
	e.step(2, r)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(&roomCollector{rooms: func() []liveRoom { return groupRooms([]*waitingroom.Room{r}) }})
	got := gather(t, reg)
	for name, want := range map[string]float64{"skipped_total": 200, "idled_out_total": 1, "places": 0, "waiting": 0} {
		if g := got[metricPrefix+name]["ghosts"]; g != want {
			t.Errorf("%s = %v, want %v", name, g, want)
		}
	}
}
