package waitingroom_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// The worked example of docs/PROTOCOL.md is a real sale, run here: the JSON
// the room published and the place of every order key, recomputed from that
// JSON alone. TestProtocolExample fails when the document and the code part
// ways; -update-docs rewrites the example.
const (
	protocolDoc     = "../docs/PROTOCOL.md"
	exampleBegin    = "<!-- example:begin -->"
	exampleEnd      = "<!-- example:end -->"
	exampleSeedText = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
)

// fixedSeed is a store whose room commits to a seed chosen by the test, so
// that the example's numbers are the same on every run.
type fixedSeed struct {
	waitingroom.Store
	seed []byte
}

func (s fixedSeed) DrawSeed(ctx context.Context, room string, _ []byte, now time.Time) ([]byte, time.Time, error) {
	return s.Store.DrawSeed(ctx, room, s.seed, now)
}

// exampleSale runs the sale of the worked example: six registrants drawn at
// the start, one of whom never comes to claim (their admission lapses while
// the operator has paused the sale); three newcomers who join during the
// pause, drawn by the random method's first rolling draw when it resumes, the
// last of whom has not claimed when the room sells out. It returns the draw
// endpoint's and the fairness report's JSON, as the gateway serves them, and
// the place the room gave each order key.
func exampleSale(t *testing.T) (drawJSON, reportJSON []byte, places map[uint64]uint64) {
	t.Helper()
	e := newEnv(t)
	seed, _ := hex.DecodeString(exampleSeedText)
	e.store = fixedSeed{Store: e.store, seed: seed}
	start := e.clock.Now().Add(time.Minute)
	r := e.node("concert", waitingroom.Settings{
		TotalActiveUsers: 100, NewUsersPerMinute: 120, // two a second
		QueueingMethod:      waitingroom.Random,
		EventStart:          start,
		EventEnd:            start.Add(time.Hour),
		ShuffleAtEventStart: true,
	})
	type fan struct {
		tk     waitingroom.Ticket
		absent bool // never comes back to claim
	}
	var fans []*fan
	for i := range 6 {
		fans = append(fans, &fan{tk: e.join(r).Ticket, absent: i == 2})
	}
	e.clock.Advance(time.Minute - 500*time.Millisecond)
	poll := func() {
		for _, f := range fans {
			if !f.absent && !f.tk.Claimed {
				f.tk = e.poll(r, f.tk).Ticket
			}
		}
	}
	for range 3 { // two places a second: the six drawn places are reached
		e.step(1, r)
		poll()
	}
	pause := func(on bool) {
		if _, err := r.Patch(e.ctx, waitingroom.OverridesOf(waitingroom.Settings{Paused: on}, "paused")); err != nil {
			t.Fatal(err)
		}
	}
	pause(true) // the operator pauses the sale
	for i := range 3 {
		fans = append(fans, &fan{tk: e.join(r).Ticket, absent: i == 2})
	}
	for range 31 { // the absent registrant's grace runs out: their admission lapses
		e.step(1, r)
		poll()
	}
	pause(false) // the first rolling draw places the newcomers; two a second go in
	for range 2 {
		e.step(1, r)
		poll()
	}
	places = make(map[uint64]uint64)
	for _, f := range fans {
		st, tk := r.Peek(f.tk)
		if st.DrawIndex == nil || *st.DrawIndex != tk.Key {
			t.Fatalf("order key %d: status %+v, want its draw_index", tk.Key, st)
		}
		places[tk.Key] = tk.Place
	}
	if _, err := r.Patch(e.ctx, waitingroom.OverridesOf(waitingroom.Settings{SoldOut: true}, "sold_out")); err != nil {
		t.Fatal(err)
	}
	e.step(1, r)
	rep, err := r.Fairness(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	return indentJSON(t, r.DrawInfo()), indentJSON(t, rep), places
}

func indentJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// exampleMarkdown words the example as the document shows it.
func exampleMarkdown(t *testing.T, drawJSON, reportJSON []byte, places map[uint64]uint64) string {
	t.Helper()
	var rep waitingroom.FairnessReport
	if err := json.Unmarshal(reportJSON, &rep); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "`GET /_waiting-room/draw` once the sale had sold out:\n\n```json\n%s\n```\n\n", drawJSON)
	fmt.Fprintf(&b, "`GET /_waiting-room/fairness` (with `Accept: application/json`) at the same moment:\n\n```json\n%s\n```\n\n", reportJSON)
	b.WriteString("Every order key of the sale, recomputed from the report alone (the room gave each the same place):\n\n")
	b.WriteString("| draw_index (order key) | draw | index within the draw | permuted index | place | admission that reached it |\n|---|---|---|---|---|---|\n")
	seed, _ := hex.DecodeString(rep.Seed)
	for k := range rep.Counts.Issued {
		v, err := waitingroom.VerifyPlace(rep, k)
		place, adm := v.Place, v.Admission
		if err != nil {
			t.Fatalf("order key %d: %v", k, err)
		}
		if place != places[k] {
			t.Fatalf("order key %d: recomputed place %d, the room gave %d", k, place, places[k])
		}
		draw, start, size, dseed := "pre-queue", uint64(0), uint64(0), seed
		if rep.DrawSize != nil && k < *rep.DrawSize {
			size = *rep.DrawSize
		} else {
			for _, ep := range rep.Epochs {
				if k >= ep.Start && k < ep.Start+ep.Count {
					draw, start, size, dseed = fmt.Sprintf("epoch %d", ep.Number), ep.Start, ep.Count, waitingroom.EpochSeed(seed, ep.Number)
				}
			}
		}
		perm := waitingroom.NewDraw(dseed, size).Place(k - start)
		admitted := "none: the line never reached it"
		if adm != nil {
			admitted = fmt.Sprintf("places %d–%d at %s", adm.Start, adm.Start+adm.Count-1, adm.At.UTC().Format(time.RFC3339Nano))
		}
		fmt.Fprintf(&b, "| %d | %s (n = %d) | %d | %d | %d | %s |\n", k, draw, size, k-start, perm, place, admitted)
	}
	return b.String()
}

func TestProtocolExample(t *testing.T) {
	drawJSON, reportJSON, places := exampleSale(t)
	again, _, _ := exampleSale(t)
	if !bytes.Equal(drawJSON, again) {
		t.Fatal("the example sale is not the same on two runs: its numbers would not stay true")
	}
	old, err := os.ReadFile(protocolDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(old)
	i, j := strings.Index(doc, exampleBegin), strings.Index(doc, exampleEnd)
	if i < 0 || j < i {
		t.Fatalf("%s has no %s ... %s markers", protocolDoc, exampleBegin, exampleEnd)
	}
	doc = doc[:i+len(exampleBegin)] + "\n" + exampleMarkdown(t, drawJSON, reportJSON, places) + doc[j:]
	if doc == string(old) {
		return
	}
	if *updateDocs {
		if err := os.WriteFile(protocolDoc, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Log("docs/PROTOCOL.md: worked example rewritten")
		return
	}
	t.Errorf("docs/PROTOCOL.md's worked example is stale: run `go test ./waitingroom/ -run '^TestProtocolExample$' -update-docs` and commit it")
}
