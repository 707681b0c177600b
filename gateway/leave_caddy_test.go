package gateway

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/foyer-dev/foyer/waitingroom"
)

// leave posts the leave form as the waiting page does; site is the value of
// Sec-Fetch-Site the browser would send.
func (f *fan) leave(t *testing.T, site string, form url.Values) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/_waiting-room/leave", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", site)
	resp, err := f.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// TestCaddyLeaveFreesThePlaceAtOnce: a fan admitted and not yet in leaves
// the line: the next fan goes in at the next step, not after the grace. A
// cross-site post of the form is refused and changes nothing; a copy of the
// left fan's ticket rejoins at the back.
func TestCaddyLeaveFreesThePlaceAtOnce(t *testing.T) {
	storesUnderTest(t, func(t *testing.T, store string) {
		clock := useTestClock(t)
		room := "leaver"
		newCaddy(t, returnersConfig(t.TempDir(), room, store, "total_active_users 1"))
		leaver, next, behind := newFan(t), newFan(t), newFan(t)
		leaver.returnStatus(t)
		next.returnStatus(t)
		behind.returnStatus(t)
		u, _ := url.Parse(base)
		copyOf := findJarCookie(leaver, u, "foyer_ticket")

		patchRoom(t, room, `{"queue_all": false}`)
		clock.step(t, 2) // the leaver is admitted: the one slot is theirs, unclaimed

		if code, _ := leaver.leave(t, "cross-site", url.Values{"confirm": {"yes"}}); code != http.StatusForbidden {
			t.Fatalf("cross-site leave: %d, want 403", code)
		}
		if code, body := leaver.leave(t, "same-origin", url.Values{"back": {"/"}}); code != http.StatusOK || !strings.Contains(body, `name="confirm" value="yes"`) {
			t.Fatalf("leave without confirm: %d, want the confirmation form; %q", code, body)
		}
		if findJarCookie(leaver, u, "foyer_ticket") == "" {
			t.Fatal("the confirmation step cleared the ticket")
		}
		if code, body := leaver.leave(t, "same-origin", url.Values{"confirm": {"yes"}, "back": {"/"}}); code != http.StatusOK || !strings.Contains(body, `id="join-again"`) {
			t.Fatalf("leave: %d %q", code, body)
		}
		if findJarCookie(leaver, u, "foyer_ticket") != "" {
			t.Fatal("the ticket cookie was not cleared")
		}

		clock.step(t, 1) // one step: the grace (30 s) is not waited out
		if st := next.returnStatus(t); st.State != waitingroom.StateAdmitted {
			t.Fatalf("the next fan one step after the leave: %+v, want admitted", st)
		}
		if st := behind.returnStatus(t); st.State != waitingroom.StateQueued || st.Position == nil || *st.Position != 0 {
			t.Fatalf("the fan behind: %+v, want queued with nobody ahead", st)
		}

		// A copy of the left ticket is spent: it rejoins behind everyone.
		cp := newFan(t)
		cp.client.Jar.SetCookies(u, []*http.Cookie{{Name: "foyer_ticket", Value: copyOf}})
		st := cp.returnStatus(t)
		if st.State == waitingroom.StateAdmitted || st.Position == nil || *st.Position < 1 {
			t.Fatalf("a copy of the left ticket: %+v, want a new place behind the fan waiting", st)
		}
		if cp.ticketKey(t, room) <= behind.ticketKey(t, room) {
			t.Fatal("the copy's new place is not at the back")
		}
	})
}
