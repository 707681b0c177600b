package gateway

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"

	"go.uber.org/zap"

	"github.com/foyer-dev/foyer/waitingroom"
)

// headerSupply is how an origin reports what is left to sell, on any answer
// to an admitted fan (docs/supply.md): a whole number of units. The gateway
// notes it for the room's next step, never waiting on the store, and strips
// it with the other X-Waiting-Room-* headers.
const headerSupply = "X-Waiting-Room-Supply"

// noteSupply reads the origin's supply off an answer's headers. One that is
// not a number of units is ignored, counted and logged.
func (h *Handler) noteSupply(hdr http.Header) {
	v := hdr.Get(headerSupply)
	if v == "" {
		return
	}
	units, err := waitingroom.ParseSupply(v)
	if err != nil {
		h.room.RefuseSupply()
		h.logger.Warn("ignoring the origin's supply", zap.String("room", h.Room), zap.String("value", v), zap.Error(err))
		return
	}
	h.room.NoteSupply(units)
}

// The supply's metrics (docs/supply.md): room-wide figures from the estimate,
// absent while the room knows no supply, and this node's reports.
var (
	descSupplyUnits   = roomDesc("supply_units", "What is left to sell, as last reported (room-wide; absent while unknown).")
	descSupplyPerFan  = prometheus.NewDesc(metricPrefix+"supply_units_per_fan", "Units bought per admitted fan, the estimate's low and high ends (room-wide).", []string{"room", "bound"}, nil)
	descSupplyEnds    = prometheus.NewDesc(metricPrefix+"supply_ends_position", "People waiting, from the front, at which the supply is estimated to run out: low and high ends (room-wide).", []string{"room", "bound"}, nil)
	descSupplyReports = roomDesc("supply_reports_total", "Supply reports this node read from the origin's answers.")
	descSupplyRefused = roomDesc("supply_refused_total", "Supply headers from the origin this node ignored: not a whole number of units.")
	supplyDescs       = []*prometheus.Desc{descSupplyUnits, descSupplyPerFan, descSupplyEnds, descSupplyReports, descSupplyRefused}
)

// collectSupply sends a room's supply metrics.
func collectSupply(ch chan<- prometheus.Metric, lr liveRoom) {
	var reports, refused uint64
	for _, r := range lr.rooms {
		reports += r.Stats().SupplyReports.Load()
		refused += r.Stats().SupplyRefused.Load()
	}
	ch <- prometheus.MustNewConstMetric(descSupplyReports, prometheus.CounterValue, float64(reports), lr.id)
	ch <- prometheus.MustNewConstMetric(descSupplyRefused, prometheus.CounterValue, float64(refused), lr.id)
	room, _ := lr.lead()
	est, ok := room.Supply()
	if !ok {
		return
	}
	told := room.TellAhead(0)
	ch <- prometheus.MustNewConstMetric(descSupplyUnits, prometheus.GaugeValue, float64(est.Last.Units), lr.id)
	for i, bound := range []string{"low", "high"} {
		ch <- prometheus.MustNewConstMetric(descSupplyPerFan, prometheus.GaugeValue, est.PerFan[i], lr.id, bound)
		ch <- prometheus.MustNewConstMetric(descSupplyEnds, prometheus.GaugeValue, float64(told.Ends[i]), lr.id, bound)
	}
}
