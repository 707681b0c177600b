package integration

import (
	"net/http"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/gateway"
	"github.com/foyer-dev/foyer/waitingroom"
)

// TestFaultRedisAndGatewayLostTogether: the line is full (the cap holds it
// back) when redis-server is killed together with a gateway, or with every
// gateway; it comes back empty and the lost gateways restart with empty
// memory (also before Redis is back). Newcomers are held (503) while the line re-announces itself: the
// surviving node restores what it saw, or, with none left, the waiting fans'
// tickets raise the keys and the admitted fans' passes restore serving and
// hold their slots. Then newcomers are placed behind every ticket issued
// before the loss, serving has not jumped, and the line moves in order with
// never more sessions valid than the cap.
func TestFaultRedisAndGatewayLostTogether(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		survivor bool
		// gatewayFirst: the lost gateway is back before redis-server is.
		gatewayFirst bool
	}{
		{name: "one gateway survives", survivor: true},
		{name: "every gateway lost"},
		{name: "every gateway lost, one back before Redis", gatewayFirst: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newTestClock()
			srv, dial := privateRedis(t)
			key := deploymentKey(t)
			const capacity = 3
			cfg := gateway.Handler{Room: "together", Settings: waitingroom.Settings{TotalActiveUsers: capacity, NewUsersPerMinute: 60, SessionDuration: time.Minute, AdmissionGrace: grace}}
			a := newNode(t, clock.Now, cfg, redisNodeStore(t, dial, "foyer"), key)
			b := newNode(t, clock.Now, cfg, redisNodeStore(t, dial, "foyer"), key)
			nodes := []*node{a, b}
			tr := sharedTransport(t)
			l := newLedger()

			// Three inside, eight waiting.
			first := walkIn(t, a, tr)
			l.record(t, first, a)
			fans := joinLine(t, nodes, tr, "fan", 10, 1)
			for _, f := range fans[:2] {
				step(t, clock, nodes)
				if st := f.status(t, b); st.State != waitingroom.StateAdmitted {
					t.Fatalf("%s: %s, want admitted", f.name, st.State)
				}
				l.record(t, f, b)
			}
			inside, waiting := []*lineFan{first, fans[0], fans[1]}, fans[2:]
			shown := make(map[*lineFan]uint64)
			var lastKey uint64
			for _, f := range waiting {
				shown[f] = *f.status(t, a).Position
				lastKey = max(lastKey, f.key)
			}
			before := a.room().Snapshot()

			// The client of the gateway that comes back while Redis is down,
			// made while it is up, as redisNodeStore needs.
			lateStore := redisNodeStore(t, dial, "foyer")
			// redis-server and gateways die together; the outage lasts a few
			// seconds.
			srv.Stop(t)
			loseNode(b)
			if !tc.survivor {
				loseNode(a)
			}
			for range 3 {
				clock.Advance(time.Second)
				if tc.survivor {
					_ = a.room().Tick(t.Context())
				}
			}
			if tc.gatewayFirst {
				b = newNodeWhileDown(t, clock.Now, cfg, lateStore, key)
			}
			srv.Restart(t)
			lossAt, restartedAt := time.Now(), clock.Now()
			if tc.gatewayFirst {
				recoverNode(t, b)
			} else {
				b = newNodeResumed(t, clock.Now, cfg, redisNodeStore(t, dial, "foyer"), key, true)
			}
			nodes = []*node{b}
			if tc.survivor {
				nodes = []*node{a, b}
			}
			// Newcomers are held, on every node, while the line re-announces
			// itself.
			for i, n := range nodes {
				v := newVisitor(tr)
				resp, body, err := v.get(n.url+"/_waiting-room/status", true)
				if err != nil || resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
					t.Fatalf("newcomer on node %d right after the loss: %v %d %q, want 503 with Retry-After", i, err, code(resp), body)
				}
				if v.cookie(n.url, "foyer_ticket") != "" {
					t.Fatalf("node %d gave a newcomer a ticket before the line re-announced itself", i)
				}
			}
			if tc.survivor {
				recoverNode(t, a)
			}
			// The line re-announces itself: those inside browse on, those
			// waiting poll, each through some node.
			for i, f := range inside {
				if !f.visit(t, nodes[i%len(nodes)], "/events/42") {
					t.Fatalf("%s, inside before the loss, lost access", f.name)
				}
			}
			for i, f := range waiting {
				n := nodes[i%len(nodes)]
				st := f.status(t, n)
				if st.State == waitingroom.StateAdmitted {
					t.Fatalf("%s admitted while the room settles", f.name)
				}
				if st.Position != nil && *st.Position > shown[f] {
					t.Fatalf("%s's position rose from %d to %d", f.name, shown[f], *st.Position)
				}
			}
			settle := b.room().Snapshot().SettleUntil
			for !clock.Now().After(settle) {
				step(t, clock, nodes)
			}
			step(t, clock, nodes)
			recovered := time.Since(lossAt)
			after := b.room().Snapshot()
			if after.Serving != before.Serving {
				t.Fatalf("serving %d after the loss, was %d: it must not jump", after.Serving, before.Serving)
			}
			if after.Seq <= lastKey {
				t.Fatalf("seq %d after the loss, below the waiting ticket of key %d", after.Seq, lastKey)
			}
			if after.Active < capacity {
				t.Fatalf("%d sessions held after the loss, want the %d from before", after.Active, capacity)
			}
			t.Logf("line restored in %v of real time; newcomers held for %v of room time", recovered.Round(time.Millisecond), settle.Sub(restartedAt))

			newcomers := joinLine(t, nodes, tr, "new", 3, 0)
			for _, f := range newcomers {
				if f.key <= lastKey {
					t.Fatalf("%s joined after the loss with key %d, ahead of a ticket issued before it (key %d)", f.name, f.key, lastKey)
				}
			}
			faultLine(t, clock, nodes, append(waiting, newcomers...), l, capacity, grace, 120)
		})
	}
}
