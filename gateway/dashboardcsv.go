package gateway

import (
	"encoding/csv"
	"net/http"
	"strconv"
	"time"
)

// The whole sale as CSV (?format=csv&room=<id>): one row per sample, the
// minutes before the last hour, then its seconds, each with the span in
// seconds that ends at its time, so a spreadsheet can weigh them. Gauges are
// their value at the row's time; rates are averaged over its span. The room may be left out when the node
// serves one room only. Rates are per second but admissions, per minute as
// on the page; an empty cell is a figure the node could not measure then
// (the admission rate in its first minute, the wait while the line did not
// move).

var csvHeader = []string{
	"time", "span_seconds", "waiting", "active", "pending", "admitted_per_minute",
	"last_in_line_eta_seconds", "store_healthy", "joins_per_second", "polls_per_second",
}

func (d *Dashboard) csv(w http.ResponseWriter, r *http.Request) error {
	room, ok := d.roomOf(r.URL.Query().Get("room"))
	if !ok {
		return writeError(w, http.StatusBadRequest, "room_required", "room: name the room to download, such as ?format=csv&room=concert")
	}
	var minutes, seconds []dashSample
	ok = false
	if d.sampler != nil {
		minutes, seconds, ok = d.sampler.saleOf(room)
	}
	if !ok {
		return writeError(w, http.StatusNotFound, "unknown_room", "room: "+strconv.Quote(room)+" is not a live room with a history on this node")
	}
	hdr := w.Header()
	hdr.Set("Content-Type", "text/csv; charset=utf-8")
	hdr.Set("Cache-Control", "no-store")
	hdr.Set("Content-Disposition", `attachment; filename="`+room+`-`+now().UTC().Format("20060102T150405Z")+`.csv"`)
	cw := csv.NewWriter(w)
	_ = cw.Write(csvHeader)
	row := make([]string, len(csvHeader))
	for i, s := range append(minutes, seconds...) {
		span := "1"
		if i < len(minutes) {
			span = strconv.Itoa(saleEvery)
		}
		row[0] = time.UnixMilli(s.T).UTC().Format(time.RFC3339)
		row[1] = span
		row[2] = strconv.FormatUint(s.Waiting, 10)
		row[3] = strconv.Itoa(s.Active)
		row[4] = strconv.Itoa(s.Pending)
		row[5] = ""
		if s.Admitted != nil {
			row[5] = strconv.FormatFloat(*s.Admitted, 'f', 1, 64)
		}
		row[6] = ""
		if s.ETA >= 0 {
			row[6] = strconv.FormatInt(s.ETA, 10)
		}
		row[7] = "0"
		if s.Healthy {
			row[7] = "1"
		}
		row[8] = strconv.FormatFloat(s.Joins, 'f', 2, 64)
		row[9] = strconv.FormatFloat(s.Polls, 'f', 2, 64)
		_ = cw.Write(row)
	}
	cw.Flush()
	return cw.Error()
}
