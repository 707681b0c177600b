package browser

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/gateway"
	"github.com/foyer-dev/foyer/waitingroom"
	"github.com/foyer-dev/foyer/waitingroom/memstore"
	"github.com/foyer-dev/foyer/waitingroom/storetest"
)

// TestBrowserLiveAgreesWithReload follows one fan, in a real browser, through
// every state an operator can put a live line in (held by queue_all, moving,
// at the front, paused, the store away, sold out), at a desktop and a phone
// width. At each step the page the live updates drew must read, field for
// field, as a fresh load of it does; a tab with JavaScript off shows the same;
// no page writes an error to the console; and a screenshot of each is kept.
func TestBrowserLiveAgreesWithReload(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	t.Parallel()
	browser := headlessBrowser(t)
	dir := artifactDir(t)
	for _, w := range pageWidths {
		t.Run(w.name, func(t *testing.T) {
			clock := newTestClock()
			flaky := storetest.NewFlaky(memstore.New())
			// The cap is the 25 ahead of the fan: once they are all let in
			// the fan is next and stays so until their grace lapses.
			h := newRoom(t, gateway.Handler{Settings: waitingroom.Settings{
				Title: "Browser night", NewUsersPerMinute: 60, TotalActiveUsers: 25, SessionDuration: time.Hour, QueueAll: true,
			}}, flaky, clock.Now)
			room := h.LiveRoom()
			ctx := context.Background()
			for range 25 {
				if _, err := room.Join(ctx); err != nil {
					t.Fatal(err)
				}
			}
			tick := func(n int) {
				t.Helper()
				for range n {
					clock.Advance(time.Second)
					_ = room.Tick(ctx) // fails while the store is down, as it should
				}
			}
			patch := func(s waitingroom.Settings, names ...string) {
				t.Helper()
				if _, err := room.Patch(ctx, waitingroom.OverridesOf(s, names...)); err != nil {
					t.Fatal(err)
				}
				tick(1)
			}
			site := serveHandler(t, h)
			fan := newBrowserFan(t, browser, w.name, w.width, true)
			fan.open(site + "/events/42")

			// check compares the live page with a reload and a page drawn
			// without JavaScript, once the live page shows variant.
			check := func(step, variant string, ok func(shown) bool) {
				t.Helper()
				live := fan.await(variant, func(s shown) bool { return s.Variant == variant && ok(s) })
				if want := headline(h, "en", strings.TrimSuffix(variant, variantReconnecting)); live.Headline != want {
					t.Errorf("%s: headline %q, want %q", step, live.Headline, want)
				}
				fan.shot(dir, fmt.Sprintf("%s-js-%s", w.name, step))
				fan.reload()
				fresh := fan.read()
				for _, d := range sameView(live, fresh) {
					t.Errorf("%s: the live page and a reload differ: %s", step, d)
				}
				noJS := fan.sibling(w.name+" without JavaScript", w.width, false)
				noJS.open(site + "/events/42")
				plain := noJS.read()
				if plain.Headline != fresh.Headline || plain.Position != fresh.Position || plain.ETA != fresh.ETA || plain.Bar != fresh.Bar {
					t.Errorf("%s: without JavaScript the page reads %+v, with it %+v", step, plain, fresh)
				}
				noJS.shot(dir, fmt.Sprintf("%s-nojs-%s", w.name, step))
				noJS.noErrors(step)
				fan.noErrors(step)
			}
			anything := func(shown) bool { return true }

			check("queue_all", variantQueueAll, anything)

			patch(waitingroom.Settings{}, "queue_all")
			check("queued-moving", variantQueued, anything)
			// A dozen seconds at one a second: the pace is measured, and
			// the live figures move without a new variant.
			tick(12)
			moving := fan.await("12 ahead, under a minute", func(s shown) bool { return s.Position == "12" && s.ETA == "under a minute" })
			if moving.Bar == "" || moving.Bar == "100%" || moving.Bar == "0%" {
				t.Errorf("half way through the line, the bar is %q", moving.Bar)
			}
			check("queued-measured", variantQueued, func(s shown) bool { return s.Position == "12" })

			// The last twelve ahead go in and fill the room: the fan is next.
			tick(13)
			next := fan.await("next", func(s shown) bool { return s.Variant == variantNext })
			if next.Bar == "100%" {
				t.Errorf("at the front, not yet in: the bar is full (%q) beside %q", next.Bar, next.ETA)
			}
			check("next", variantNext, anything)

			patch(waitingroom.Settings{Paused: true}, "paused")
			check("paused", variantPaused, anything)

			patch(waitingroom.Settings{Paused: false, QueueAll: true}, "paused", "queue_all")
			check("queue_all-again", variantQueueAll, anything)

			flaky.SetDown(true)
			tick(3)
			check("reconnecting", variantQueueAll+variantReconnecting, func(s shown) bool { return s.Notice })

			flaky.SetDown(false)
			tick(1)
			check("queue_all-back", variantQueueAll, func(s shown) bool { return !s.Notice })

			patch(waitingroom.Settings{SoldOut: true}, "sold_out")
			check("sold_out", variantSoldOut, anything)
			if s := fan.read(); s.Live != "" {
				t.Errorf("the sold-out page opens a live connection (%q), which has no place to follow", s.Live)
			}
			// Let a sold-out page sit through its own refresh: still no error.
			time.Sleep(2 * time.Second)
			fan.noErrors("sold out, a while later")
		})
	}
}

// TestBrowserPageStates opens the page in every other state a fan can meet
// (not open yet, registered for the draw, a place before the start, waiting
// for the random draw, closed, sold out, the store away for a newcomer) at
// both widths, with JavaScript on and off: it says what the table says, no
// page writes an error to the console, and a screenshot of each is kept.
func TestBrowserPageStates(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	t.Parallel()
	browser := headlessBrowser(t)
	dir := artifactDir(t)
	// Each case runs a room on a clock of its own, from the moment its
	// settings are written for.
	now := time.Now().Truncate(time.Second)
	cases := []struct {
		name     string
		settings waitingroom.Settings
		// prepare puts the room in its state, moving its clock.
		prepare func(t *testing.T, h *gateway.Handler, clock *testClock, flaky *storetest.Flaky)
		variant string
		// live: the page opens a live connection (data-ws-url), which only
		// a fan holding a place has something to follow on.
		live bool
	}{
		{name: "not_open", variant: variantNotOpen,
			settings: waitingroom.Settings{PrequeueStart: now.Add(time.Hour), EventStart: now.Add(2 * time.Hour)}},
		{name: "registered", variant: variantRegistered, live: true,
			settings: waitingroom.Settings{PrequeueStart: now.Add(-time.Minute), EventStart: now.Add(time.Hour), ShuffleAtEventStart: true}},
		{name: "prequeue", variant: variantPrequeue, live: true,
			settings: waitingroom.Settings{PrequeueStart: now.Add(-time.Minute), EventStart: now.Add(time.Hour)}},
		{name: "awaiting_draw", variant: variantAwaitingDraw, live: true,
			settings: waitingroom.Settings{QueueingMethod: waitingroom.Random, TotalActiveUsers: 1, NewUsersPerMinute: 60},
			prepare: func(t *testing.T, h *gateway.Handler, clock *testClock, _ *storetest.Flaky) {
				for range 3 { // one walks in, two are drawn into the first group
					if _, err := h.LiveRoom().Join(context.Background()); err != nil {
						t.Fatal(err)
					}
				}
				clock.Advance(time.Second)
				if err := h.LiveRoom().Tick(context.Background()); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "closed", variant: variantClosed,
			settings: waitingroom.Settings{EventStart: now.Add(-2 * time.Hour), EventEnd: now.Add(-time.Hour)}},
		{name: "sold_out", variant: variantSoldOut,
			prepare: func(t *testing.T, h *gateway.Handler, _ *testClock, _ *storetest.Flaky) {
				if _, err := h.LiveRoom().Patch(context.Background(), waitingroom.OverridesOf(waitingroom.Settings{SoldOut: true}, "sold_out")); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "unavailable", variant: variantUnavailable,
			prepare: func(t *testing.T, h *gateway.Handler, clock *testClock, flaky *storetest.Flaky) {
				flaky.SetDown(true)
				for range 3 {
					clock.Advance(time.Second)
					_ = h.LiveRoom().Tick(context.Background())
				}
			}},
	}
	for _, w := range pageWidths {
		for _, tc := range cases {
			for _, js := range []bool{true, false} {
				name := fmt.Sprintf("%s-%s-js", w.name, tc.name)
				if !js {
					name = fmt.Sprintf("%s-%s-nojs", w.name, tc.name)
				}
				t.Run(name, func(t *testing.T) {
					flaky := storetest.NewFlaky(memstore.New())
					s := tc.settings
					s.Title = "Browser night"
					clock := newTestClockAt(now)
					h := newRoom(t, gateway.Handler{Settings: s}, flaky, clock.Now)
					if tc.prepare != nil {
						tc.prepare(t, h, clock, flaky)
					}
					site := serveHandler(t, h)
					fan := newBrowserFan(t, browser, name, w.width, js)
					fan.open(site + "/events/42")
					got := fan.await(tc.variant, func(s shown) bool { return s.Variant == tc.variant })
					if want := headline(h, "en", tc.variant); got.Headline != want {
						t.Errorf("headline %q, want %q", got.Headline, want)
					}
					if (got.Live != "") != tc.live {
						t.Errorf("live connection %q on a %s page", got.Live, tc.variant)
					}
					if js {
						// Long enough for the page's first poll or live
						// connection to have been made and answered.
						time.Sleep(2500 * time.Millisecond)
						if again := fan.read(); again.Variant != tc.variant {
							t.Errorf("a while later the page shows %q, want %q", again.Variant, tc.variant)
						}
					}
					fan.shot(dir, name)
					if tc.variant == variantUnavailable {
						fan.noErrors(tc.name, http.StatusServiceUnavailable)
					} else {
						fan.noErrors(tc.name)
					}
				})
			}
		}
	}
}
