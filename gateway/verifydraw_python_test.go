package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// independentVerifier is docs/verifier/verify_draw.py, a verifier written
// from docs/PROTOCOL.md alone: where it and verify-draw disagree, the
// document or the command is wrong.
const independentVerifier = "../docs/verifier/verify_draw.py"

// python3 is the interpreter that runs the independent verifier. It is
// installed by scripts/deps.sh; without it the test skips, except in CI.
func python3(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("python3 is missing: scripts/deps.sh installs it")
		}
		t.Skip("python3 is missing: scripts/deps.sh installs it")
	}
	return path
}

// crossCheck runs verify-draw and the independent verifier on the document
// at path for every key of keys, and fails unless both print the same
// answer, or refuse with the same error. The independent verifier answers
// every key in one run (--json), and once more in its text form for the
// first and the last key, as a fan would run it.
func crossCheck(t *testing.T, py, path string, keys []uint64) {
	t.Helper()
	args := []string{"-I", independentVerifier, "--report", path, "--json"}
	for _, k := range keys {
		args = append(args, "--draw-index", strconv.FormatUint(k, 10))
	}
	out, err := exec.Command(py, args...).Output()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("running %s: %v", independentVerifier, err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(keys) {
		t.Fatalf("%s: the independent verifier answered %d keys of %d: %v\n%s", filepath.Base(path), len(lines), len(keys), err, out)
	}
	for i, k := range keys {
		var theirs struct {
			Index  uint64  `json:"draw_index"`
			Output *string `json:"output"`
			Error  *string `json:"error"`
		}
		if err := json.Unmarshal([]byte(lines[i]), &theirs); err != nil || theirs.Index != k {
			t.Fatalf("%s: the independent verifier's answer for %d: %q (%v)", filepath.Base(path), k, lines[i], err)
		}
		ours, err := verifyDraw(t, "--report", path, "--draw-index", strconv.FormatUint(k, 10))
		switch {
		case err == nil && (theirs.Output == nil || *theirs.Output != ours):
			t.Errorf("%s, draw_index %d: verify-draw printed\n%s\nthe independent verifier answered\n%s", filepath.Base(path), k, ours, lines[i])
		case err != nil && (theirs.Error == nil || *theirs.Error != err.Error()):
			t.Errorf("%s, draw_index %d: verify-draw refused with\n%v\nthe independent verifier answered\n%s", filepath.Base(path), k, err, lines[i])
		}
		if i != 0 && i != len(keys)-1 {
			continue
		}
		cmd := exec.Command(py, "-I", independentVerifier, "--report", path, "--draw-index", strconv.FormatUint(k, 10))
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		perr := cmd.Run()
		want, wantErr := ours, ""
		if err != nil {
			want, wantErr = "", "Error: "+err.Error()+"\n"
		}
		if stdout.String() != want || stderr.String() != wantErr || (perr == nil) != (err == nil) || (perr != nil && !errors.As(perr, &exit)) || (perr != nil && exit.ExitCode() != 1) {
			t.Errorf("%s, draw_index %d, text form: the independent verifier (%v) printed\n%s%s\nwant\n%s%s", filepath.Base(path), k, perr, stdout.String(), stderr.String(), want, wantErr)
		}
	}
}

// checkSale runs the independent verifier's whole-sale checks on a report.
func checkSale(t *testing.T, py, path string) {
	t.Helper()
	if out, err := exec.Command(py, independentVerifier, "--report", path, "--check-sale").CombinedOutput(); err != nil {
		t.Errorf("the whole-sale checks of %s: %v\n%s", filepath.Base(path), err, out)
	}
}

// checkSaleFinds runs the independent verifier's whole-sale checks on a
// report that must fail them, and fails unless a problem it prints says
// want.
func checkSaleFinds(t *testing.T, py, path, want string) {
	t.Helper()
	out, err := exec.Command(py, independentVerifier, "--report", path, "--check-sale").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "problem: ") || !strings.Contains(string(out), want) {
		t.Errorf("the whole-sale checks of %s: %v\n%s\nwant a problem saying %q", filepath.Base(path), err, out, want)
	}
}

// keysTo lists the keys 0 to n-1.
func keysTo(n uint64) []uint64 {
	keys := make([]uint64, n)
	for i := range keys {
		keys[i] = uint64(i)
	}
	return keys
}

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestIndependentVerifierAgreesOnTheDocumentedExample: on the worked
// example of docs/PROTOCOL.md (its report and its draw endpoint), and on a
// report with every kind of key, whole and with its history cut, the
// verifier written from the document and verify-draw give the same answer
// for every key, and two beyond.
func TestIndependentVerifierAgreesOnTheDocumentedExample(t *testing.T) {
	py := python3(t)
	raw, err := os.ReadFile("../docs/PROTOCOL.md")
	if err != nil {
		t.Fatal(err)
	}
	draw, rest := fencedAfter(t, string(raw), "<!-- example:begin -->")
	report, _ := fencedAfter(t, rest, "```json")
	keys := keysTo(11)
	reportPath := writeFile(t, "example-report.json", report)
	crossCheck(t, py, reportPath, keys)
	checkSale(t, py, reportPath)
	crossCheck(t, py, writeFile(t, "example-draw.json", draw), keys)

	rep := formsReport()
	crossCheck(t, py, writeReport(t, rep), keysTo(14))
	lost := rep
	lost.Complete, lost.Admissions = false, rep.Admissions[1:]
	crossCheck(t, py, writeReport(t, lost), keysTo(14))
	for name, change := range map[string]func(*waitingroom.FairnessReport){
		"another algorithm": func(r *waitingroom.FairnessReport) { r.Algorithm = "other" },
		"uppercase seed":    func(r *waitingroom.FairnessReport) { r.Seed = strings.ToUpper(r.Seed) },
		"uppercase commit":  func(r *waitingroom.FairnessReport) { r.Commitment = strings.ToUpper(r.Commitment) },
		"no draw": func(r *waitingroom.FairnessReport) {
			r.Algorithm, r.Seed, r.Commitment, r.DrawSize, r.Epochs = "", "", "", nil, []waitingroom.HistoryEntry{}
		},
	} {
		bad := formsReport()
		change(&bad)
		t.Run(name, func(t *testing.T) { crossCheck(t, py, writeReport(t, bad), []uint64{4}) })
	}
}

// TestIndependentVerifierAgreesOnARealSale runs a random room with a
// pre-queue draw through a real Caddy: registrants placed by the pre-queue's
// draw, newcomers by rolling draws, a fan let in on the spot (first come),
// and fans still waiting for a draw when it sells out. For every order key,
// and two beyond, the verifier written from docs/PROTOCOL.md and verify-draw
// give the same answer from the published report and from the draw
// endpoint; the report passes the whole-sale checks; and the place verified
// for each fan let in is the one their pass carries.
func TestIndependentVerifierAgreesOnARealSale(t *testing.T) {
	py := python3(t)
	clock := useTestClock(t)
	start := clock.Now().Add(time.Minute).UTC().Format(time.RFC3339)
	newCaddy(t, caddyConfig(t.TempDir(), fmt.Sprintf(`
	http://localhost:9080 {
		waiting_room {
			room cross-check
			total_active_users 100
			new_users_per_minute 120
			event_start %s
			shuffle_at_event_start
			queueing_method random
		}
		respond "origin"
	}`, start)))
	var fans []*fan
	join := func(n int) {
		for range n {
			f := newFan(t)
			st := f.status(base)
			if st.DrawIndex == nil || *st.DrawIndex != uint64(len(fans)) {
				t.Fatalf("fan %d: %+v, want draw_index %d", len(fans), st, len(fans))
			}
			fans = append(fans, f)
		}
	}
	places := map[uint64]uint64{} // order key: the place the room gave, from the pass
	collect := func() {
		for k, f := range fans {
			if _, in := places[uint64(k)]; in {
				continue
			}
			if st := f.status(base); st.State == waitingroom.StateAdmitted {
				places[uint64(k)] = passPlace(t, f)
			}
		}
	}
	poll := func(seconds int) {
		for range seconds {
			collect()
			clock.step(t, 1)
		}
	}
	join(8)
	clock.step(t, 60) // the pre-queue's draw; then two a second go in
	join(5)           // waiting for rolling draw epoch 1
	poll(5)
	join(3) // waiting for the next
	poll(8)
	clock.step(t, 5)
	join(1) // nobody waits: let in on the spot
	join(6) // the rate is spent: they wait for a draw that never comes
	collect()
	if code, body := adminCall(t, http.MethodPost, "/waiting-room/cross-check/sold-out", ""); code != http.StatusOK {
		t.Fatalf("sold-out: %d %s", code, body)
	}
	clock.step(t, 1)

	resp, report := newFan(t).get(base+"/_waiting-room/fairness", "Accept", "application/json")
	var rep waitingroom.FairnessReport
	if resp.StatusCode != http.StatusOK || json.Unmarshal([]byte(report), &rep) != nil {
		t.Fatalf("report: %d %s", resp.StatusCode, report)
	}
	_, draw := newFan(t).get(base + "/_waiting-room/draw")
	reportPath, drawPath := writeFile(t, "report.json", report), writeFile(t, "draw.json", draw)

	kinds := map[waitingroom.PlacedBy]int{}
	for k := range rep.Counts.Issued {
		v, err := waitingroom.VerifyPlace(rep, k)
		if err != nil {
			t.Fatalf("order key %d: %v", k, err)
		}
		kinds[v.By]++
		if p, in := places[k]; in && (v.Place != p || v.Admission == nil) {
			t.Errorf("order key %d: verified place %d, admission %v; the pass says %d", k, v.Place, v.Admission, p)
		}
	}
	if rep.DrawSize == nil || *rep.DrawSize != 8 || len(rep.Epochs) < 2 || !rep.Complete ||
		kinds[waitingroom.PlacedFirstCome] == 0 || kinds[waitingroom.NotPlaced] == 0 {
		t.Fatalf("the sale placed %v (by prequeue, epoch, first come, not placed) with %d epochs:\n%s\nwant each kind, and a pre-queue draw of 8", kinds, len(rep.Epochs), report)
	}
	if len(places) != int(rep.Counts.Serving) {
		t.Fatalf("%d passes seen for %d places reached", len(places), rep.Counts.Serving)
	}
	keys := keysTo(rep.Counts.Issued + 2)
	crossCheck(t, py, reportPath, keys)
	crossCheck(t, py, drawPath, keys)
	checkSale(t, py, reportPath)
}

// passPlace reads the place (the order_key claim) from the pass a fan
// holds.
func passPlace(t *testing.T, f *fan) uint64 {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/", nil)
	for _, c := range f.client.Jar.Cookies(req.URL) {
		if strings.HasSuffix(c.Name, "_pass") {
			return readPass(t, c.Value).OrderKey
		}
	}
	t.Fatal("an admitted fan holds no pass")
	return 0
}
