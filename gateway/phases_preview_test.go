package gateway

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// TestPhasePreviews: the previews index links each scheduled phase, and a
// preview under a phase is the page with that phase's settings laid over the
// room's (its title here), whatever phase is in force now; a phase the room
// does not have is a 404 with a JSON error.
func TestPhasePreviews(t *testing.T) {
	clock := useTestClock(t)
	start := clock.Now().Add(time.Hour)
	h := testHandler(t, Handler{Room: "preview", Settings: waitingroom.Settings{
		Title: "Tour night",
		Phases: waitingroom.NewPhases(waitingroom.ScheduledPhase{
			Name: "presale", Start: start, End: start.Add(time.Hour),
			Settings: waitingroom.OverridesOf(waitingroom.Settings{Title: "Presale night"}, "title"),
		}),
	}}, nil)
	d := previewDashboard(h)
	index := dashGet(d, "/ops/?format=preview&room=preview").Body.String()
	if !strings.Contains(index, `<a href="?format=preview&amp;room=preview&amp;phase=presale">presale</a>`) {
		t.Fatalf("the index does not link the phase:\n%s", index)
	}
	under := dashGet(d, "/ops/?format=preview&room=preview&phase=presale").Body.String()
	if !strings.Contains(under, `href="?format=preview&amp;room=preview&amp;phase=presale&amp;state=queued&amp;lang=en"`) || !strings.Contains(under, "Presale night") {
		t.Fatalf("the index under the phase does not link its states:\n%s", under)
	}
	now := dashGet(d, "/ops/?format=preview&room=preview&state=queued").Body.String()
	if !strings.Contains(now, "Tour night") || strings.Contains(now, "Presale night") {
		t.Fatalf("the preview as the room is now shows another title")
	}
	rec := dashGet(d, "/ops/?format=preview&room=preview&phase=presale&state=queued")
	if body := rec.Body.String(); rec.Code != http.StatusOK || !strings.Contains(body, "Presale night") || !strings.Contains(body, "Preview: queued, phase presale") {
		t.Fatalf("the preview under the phase: %d\n%.2000s", rec.Code, body)
	}
	rec = dashGet(d, "/ops/?format=preview&room=preview&phase=encore&state=queued")
	if rec.Code != http.StatusNotFound || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") || !strings.Contains(rec.Body.String(), "unknown_phase") {
		t.Fatalf("an unknown phase: %d %s", rec.Code, rec.Body)
	}
}
