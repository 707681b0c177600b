package waitingroom_test

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/foyer-dev/foyer/waitingroom"
)

// jsonFields are the names a struct's fields have in JSON.
func jsonFields(v any) []string {
	var out []string
	t := reflect.TypeOf(v)
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

type schemaObject struct {
	Properties map[string]json.RawMessage `json:"properties"`
	Defs       map[string]schemaObject    `json:"$defs"`
}

func (o schemaObject) names() []string {
	var out []string
	for k := range o.Properties {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestProtocolSchemas: the JSON Schemas of docs/PROTOCOL.md name exactly
// the fields the draw endpoint and the fairness report carry, so that no
// field goes undocumented and none is documented that does not exist.
func TestProtocolSchemas(t *testing.T) {
	raw, err := os.ReadFile(protocolDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	schema := func(marker string) schemaObject {
		i := strings.Index(doc, marker)
		if i < 0 {
			t.Fatalf("%s lacks %s", protocolDoc, marker)
		}
		body := doc[i:]
		body = body[strings.Index(body, "```json")+len("```json"):]
		body = body[:strings.Index(body, "```")]
		var o schemaObject
		if err := json.Unmarshal([]byte(body), &o); err != nil {
			t.Fatalf("%s: %v", marker, err)
		}
		return o
	}
	draw, report := schema("<!-- schema:draw -->"), schema("<!-- schema:report -->")
	for _, c := range []struct {
		what   string
		schema schemaObject
		v      any
	}{
		{"draw endpoint", draw, waitingroom.DrawInfo{}},
		{"draw endpoint's epoch", draw.Defs["epoch"], waitingroom.DrawEpoch{}},
		{"draw endpoint's phase draw", draw.Defs["phase_draw"], waitingroom.PhaseDraw{}},
		{"report's phase draw", report.Defs["phase_draw"], waitingroom.PhaseDraw{}},
		{"fairness report", report, waitingroom.FairnessReport{}},
		{"history entry", report.Defs["entry"], waitingroom.HistoryEntry{}},
		{"counts", report.Defs["counts"], waitingroom.FairnessCounts{}},
		{"operator's change", report.Defs["change"], waitingroom.PublicChange{}},
		{"pause", report.Defs["pause"], waitingroom.PauseEffect{}},
		{"supply", report.Defs["supply"], waitingroom.SupplyCalibration{}},
		{"supply estimate", report.Defs["estimate"], waitingroom.SupplyEstimatePoint{}},
		{"outcomes told", report.Defs["told"], waitingroom.SupplyTold{}},
		{"told and served", report.Defs["told_served"], waitingroom.ToldServed{}},
		{"places told", report.Defs["places_told"], waitingroom.PlacesTold{}},
		{"told and let in", report.Defs["told_let_in"], waitingroom.ToldLetIn{}},
		{"lanes", report.Defs["lanes"], waitingroom.LanesReport{}},
		{"lane", report.Defs["lane"], waitingroom.LaneAdmissions{}},
		{"lane check", report.Defs["lane_check"], waitingroom.LaneCheck{}},
		{"lane share", report.Defs["share"], waitingroom.LaneShare{}},
	} {
		if got, want := c.schema.names(), jsonFields(c.v); !slices.Equal(got, want) {
			t.Errorf("%s: the schema names %v, the code writes %v", c.what, got, want)
		}
	}
}
