package waitingroom

import "time"

// LaneShare is one lane's part of a controller step (docs/fairness.md,
// "Priority lanes"): the places waiting in the lane when the step began, the
// admissions the step gave it, and the lane's round-robin credit before the
// step. With the weights in force at the step, the three let anyone replay the step's
// split (SplitAdmissions) and check it.
type LaneShare struct {
	Waiting  uint64 `json:"waiting"`
	Admitted uint64 `json:"admitted"`
	Credit   int64  `json:"credit"`
}

// LaneStep is the history entry of one step's split between the lanes:
// credit is the round robin's state before it, waiting and got as
// SplitAdmissions took and gave them, weights the weights in force
// (Lanes.String). Count is the step's admissions.
func LaneStep(weights string, credit []int64, waiting, got []uint64, now time.Time) HistoryEntry {
	e := HistoryEntry{Kind: HistoryLanes, At: now, Weights: weights, Shares: make([]LaneShare, len(got))}
	for i := range got {
		e.Shares[i] = LaneShare{Waiting: waiting[i], Admitted: got[i], Credit: credit[i]}
		e.Count += got[i]
	}
	return e
}
