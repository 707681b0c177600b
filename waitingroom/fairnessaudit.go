package waitingroom

import (
	"context"
	"errors"
	"time"
)

// PublicChange is an entry of the audit trail as the fairness report
// publishes it: what changed, when, and the operator's reason, without the
// author (an operator's address stays on the admin API).
type PublicChange struct {
	At      time.Time     `json:"at"`
	Action  AuditAction   `json:"action"`
	Changes []AuditChange `json:"changes"`
	Note    string        `json:"note,omitempty"`
}

// PauseEffect is one pause of admission and what it cost the line: from the
// pause to the resume (To absent while the room is still paused), and how
// many places the line reached meanwhile, from the admissions history. A
// pause stops the controller, so LetIn is 0 unless fans came back at the
// front or walked in before every node saw the pause (within a refresh).
type PauseEffect struct {
	From  time.Time  `json:"from"`
	To    *time.Time `json:"to,omitempty"`
	LetIn uint64     `json:"let_in"`
}

// addAuditTrail fills the report's trail and pauses from the store's audit
// trail (its newest MaxAudit entries) and the admissions in the report.
func (r *Room) addAuditTrail(ctx context.Context, rep *FairnessReport) error {
	trail, err := r.store.Audit(ctx, r.id, 0, MaxAudit)
	if err != nil && !errors.Is(err, ErrNoRoom) {
		return err
	}
	rep.Operations, rep.Pauses = []PublicChange{}, []PauseEffect{}
	for _, e := range trail {
		rep.Operations = append(rep.Operations, PublicChange{At: e.At, Action: e.Action, Changes: e.Changes, Note: e.Note})
		for _, c := range e.Changes {
			if c.Setting != "paused" {
				continue
			}
			open := len(rep.Pauses) > 0 && rep.Pauses[len(rep.Pauses)-1].To == nil
			switch string(c.New) {
			case "true":
				if !open {
					rep.Pauses = append(rep.Pauses, PauseEffect{From: e.At})
				}
			case "false":
				if open {
					at := e.At
					rep.Pauses[len(rep.Pauses)-1].To = &at
				}
			}
		}
	}
	for i := range rep.Pauses {
		p := &rep.Pauses[i]
		for _, a := range rep.Admissions {
			// An admission stamped the instant of a change came first: the
			// controller's step of that instant ran before it.
			if a.At.After(p.From) && (p.To == nil || !a.At.After(*p.To)) {
				p.LetIn += a.Count
			}
		}
	}
	return nil
}
