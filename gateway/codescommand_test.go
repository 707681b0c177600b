package gateway

import (
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foyer-dev/foyer/waitingroom"
)

// TestCommandCodes: `foyer waiting-room codes` adds a CSV file's codes and
// generated ones, printing each code with its id once, and lists the uses
// by id; a bad batch fails with the API's words and adds nothing.
func TestCommandCodes(t *testing.T) {
	e := newAdminEnv(t, nil)
	r := e.node("concert", waitingroom.Settings{Lanes: mustLanes(t, "presale=1 members=1")})
	addr := adminServer(t, r)
	file := filepath.Join(t.TempDir(), "codes.csv")
	if err := os.WriteFile(file, []byte("code,lane,max_uses\nFAN-CLUB-1,members,3\npresale-a1,presale\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := runCommand(t, addr, "codes", "add", "concert", file, "--reason", "fan club list")
	if err != nil {
		t.Fatalf("codes add: %v\n%s", err, out)
	}
	added, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(added) != 3 || added[1][0] != "FAN-CLUB-1" || added[2][0] != "PRESALE-A1" || added[2][2] != "1" {
		t.Fatalf("codes add printed %q (%v)", out, err)
	}

	out, err = runCommand(t, addr, "codes", "generate", "concert", "--lane", "presale", "--count", "4", "--max-uses", "2")
	if err != nil {
		t.Fatalf("codes generate: %v\n%s", err, out)
	}
	generated, _ := csv.NewReader(strings.NewReader(out)).ReadAll()
	if len(generated) != 5 || generated[1][1] != "presale" || generated[1][2] != "2" || len(generated[1][0]) != waitingroom.GeneratedCodeLen {
		t.Fatalf("codes generate printed %q", out)
	}

	if _, err := r.Admit(context.Background(), waitingroom.Arrival{Kind: waitingroom.RequestStatus, Code: "fan-club-1"}); err != nil {
		t.Fatal(err)
	}
	out, err = runCommand(t, addr, "codes", "usage", "concert", "--used")
	if err != nil || out != "id,lane,max_uses,used\n"+added[1][3]+",members,3,1\n" {
		t.Fatalf("codes usage --used: %v\n%q", err, out)
	}
	if out, _ := runCommand(t, addr, "codes", "usage", "concert"); strings.Count(out, "\n") != 7 {
		t.Fatalf("codes usage: %q, want the header and six codes", out)
	}

	for _, bad := range [][]string{
		{"codes", "generate", "concert", "--lane", "vip", "--count", "2"},
		{"codes", "generate", "concert", "--lane", "presale"},
		{"codes", "add", "concert", filepath.Join(t.TempDir(), "missing.csv")},
	} {
		if out, err := runCommand(t, addr, bad...); err == nil {
			t.Errorf("%v: no error\n%s", bad, out)
		}
	}
	if _, err := runCommand(t, addr, "codes", "generate", "concert", "--lane", "vip", "--count", "2"); err == nil || !strings.Contains(err.Error(), "unknown_lane") {
		t.Errorf("a lane the room does not have: %v", err)
	}
	if list, _ := r.CodeUses(context.Background()); len(list) != 6 {
		t.Errorf("codes stored: %d, want 6", len(list))
	}
}

func mustLanes(t testing.TB, spec string) waitingroom.Lanes {
	t.Helper()
	l, err := waitingroom.ParseLanes(spec)
	if err != nil {
		t.Fatal(err)
	}
	return l
}
