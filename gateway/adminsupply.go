package gateway

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// supplyRoute is the admin API's supply of a room (docs/supply.md):
//
//	GET  /waiting-room/<room>/supply   the supply and its estimate
//	POST /waiting-room/<room>/supply   {"units": N, "reason": "..."} sets it
const supplyRoute = "supply"

// supplyView is the answer of the supply endpoint: absent figures while
// nobody reported a supply.
type supplyView struct {
	Room  string `json:"room"`
	Known bool   `json:"known"`
	// Units is the latest supply reported, with when.
	Units *uint64    `json:"units,omitempty"`
	At    *time.Time `json:"at,omitempty"`
	// PerFan is the range of units bought per admitted fan, Measured once
	// it comes from the reports; Ends the range of positions, in people
	// waiting counted from the front, at which the supply is estimated to
	// run out.
	PerFan   *[2]float64 `json:"per_fan,omitempty"`
	Measured bool        `json:"measured,omitempty"`
	Ends     *SupplyEnds `json:"ends,omitempty"`
}

// SupplyEnds is the range of positions at which the supply runs out.
type SupplyEnds = waitingroom.SupplyEnds

func newSupplyView(id string, room *waitingroom.Room) supplyView {
	est, ok := room.Supply()
	v := supplyView{Room: id, Known: ok}
	if !ok {
		return v
	}
	units, at, pf := est.Last.Units, est.Last.At, est.PerFan
	told := room.TellAhead(0)
	v.Units, v.At, v.PerFan, v.Measured = &units, &at, &pf, est.Measured
	v.Ends = &SupplyEnds{Low: told.Ends[0], High: told.Ends[1]}
	return v
}

func (a *AdminAPI) serveSupply(w http.ResponseWriter, r *http.Request, lr liveRoom) error {
	room, _ := lr.lead()
	if r.Method != http.MethodPost {
		return writeJSON(w, http.StatusOK, newSupplyView(lr.id, room))
	}
	units, note, perr := readSupplyBody(r)
	if perr != nil {
		return writeError(w, http.StatusBadRequest, perr.code, perr.message)
	}
	sample, op, err := changeAs(r, note, func(ctx context.Context) (waitingroom.SupplySample, error) { return room.SetSupply(ctx, units) })
	if err != nil {
		return a.patchFailed(w, lr.id, err)
	}
	for _, other := range lr.rooms {
		if other != room {
			other.ShareSupply(sample)
		}
	}
	a.logChange(lr.id, []string{supplyRoute}, op)
	return writeJSON(w, http.StatusOK, newSupplyView(lr.id, room))
}

// readSupplyBody reads {"units": N} with an optional reason: N a whole
// number of units, 0 or more; anything else is refused.
func readSupplyBody(r *http.Request) (uint64, string, *patchError) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxPatchBody+1))
	if err != nil || len(body) > maxPatchBody {
		return 0, "", badBody("invalid_body", `the body must be {"units": N}, with an optional "reason"`)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return 0, "", malformed(err)
	}
	note := ""
	for k, raw := range fields {
		switch k {
		case "units":
		case reasonField:
			var perr *patchError
			if note, perr = checkReason(raw); perr != nil {
				return 0, "", perr
			}
		default:
			return 0, "", badBody("invalid_body", "%q: the supply's body takes only units and a reason", k)
		}
	}
	raw, ok := fields["units"]
	if !ok {
		return 0, "", badBody("invalid_supply", `the body must say how many units are left: {"units": N}`)
	}
	units, err := waitingroom.ParseSupply(string(raw))
	if err != nil {
		return 0, "", badBody("invalid_supply", "units: %s is not a whole number of units, 0 or more (at most %s)",
			string(raw), strconv.FormatUint(waitingroom.MaxSupplyUnits, 10))
	}
	return units, note, nil
}
