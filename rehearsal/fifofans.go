package rehearsal

import "fmt"

// fifoOf checks the order of admission over fifoRecords.
func fifoOf(fans []fan) (fifoResult, string) {
	recs, excluded := fifoRecords(fans)
	return checkFIFO(recs), excluded
}

// fifoRecords builds the records of the fans the check applies to: patient
// fans who got a place in line. Leavers are left out (they never claim, by
// design) and so are late returners (the room lets them in at the front
// when they come back, by design).
func fifoRecords(fans []fan) ([]fifoRecord, string) {
	var recs []fifoRecord
	var leavers, returners, placeless int
	for i := range fans {
		f := &fans[i]
		switch {
		case f.behaviour == leaveAtJoin || f.behaviour == leaveInLine:
			leavers++
			continue
		case f.behaviour == lateReturner:
			returners++
			continue
		case f.joinStart < 0:
			placeless++ // arrived after the sale, or never got an answer
			continue
		}
		recs = append(recs, fifoRecord{
			fan: int32(i), joinStart: f.joinStart, joinEnd: f.joinEnd,
			admitted: f.admitted, key: f.key, passAt: f.passAt, lastWait: f.lastWait,
		})
	}
	return recs, fmt.Sprintf("%d leavers, %d late returners, %d without a place (came after the sell-out or got no answer)", leavers, returners, placeless)
}
