package rehearsal

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestWhereTimeWentTakesTheSlowestOnePercent(t *testing.T) {
	w := &worker{}
	// 99 quick holds the service answered in 1 ms, and one slow one: 200 ms
	// for the fan, of which the service had 150 ms, waited 100 ms for a
	// connection and spent 30 ms in 3 round trips.
	for range 99 {
		w.recordServed(kindHold, 2*time.Millisecond, `pool;dur=0, db;dur=0.5;desc="1 round trips", total;dur=1`)
	}
	w.recordServed(kindHold, 200*time.Millisecond, `pool;dur=100, db;dur=30;desc="3 round trips", total;dur=150`)
	// Joins and polls are the gateway's: never counted here.
	w.recordServed(kindPoll, time.Second, `pool;dur=1, db;dur=1;desc="1 round trips", total;dur=1`)
	// An answer without the header (the fake provider's pay page) neither.
	w.recordServed(kindPay, time.Second, "")

	lines := whereTimeWent([]*worker{w})
	if len(lines) != 2 || lines[0].name != "shop" || lines[1].name != "  hold" {
		t.Fatalf("lines %+v", lines)
	}
	l := lines[1]
	if l.n != 100 || l.slowest != 1 || l.latency != 200 || l.service != 150 || l.poolWait != 100 || l.db != 30 || l.other != 20 || l.roundTrips != 3 {
		t.Fatalf("hold line %+v", l)
	}
	var out bytes.Buffer
	printWhereTimeWent(&out, lines)
	if !strings.Contains(out.String(), "   hold ") || !strings.Contains(out.String(), "100.0") || !strings.Contains(out.String(), " 50.0") {
		t.Errorf("printed:\n%s", out.String())
	}
	// With no shop request answered, nothing is printed.
	out.Reset()
	printWhereTimeWent(&out, whereTimeWent(nil))
	if out.Len() != 0 {
		t.Errorf("no shop requests, printed:\n%s", out.String())
	}
}
