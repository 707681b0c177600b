package waitingroom

import (
	"context"
	"encoding/json"
	"net/netip"
)

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

// CheckAnswer checks an answer without spending its seed or joining.
func (r *Room) CheckAnswer(client netip.Addr, seed, nonce string) error {
	_, _, err := r.checkAnswer(ClientNetwork(client), seed, nonce, r.now())
	return err
}

// JoinAs, PollAs and AnswerAs are Join, Poll and JoinWithAnswer for the facts
// of a, as Admit's request path takes them: tests of accounts and addresses
// drive the path below Admit with tickets they hold opened.
func (r *Room) JoinAs(ctx context.Context, a Arrival) (Visit, error) {
	return r.join(ctx, arrivalOf(a))
}

func (r *Room) PollAs(ctx context.Context, a Arrival, t Ticket) (Visit, error) {
	return r.poll(ctx, arrivalOf(a), t)
}

func (r *Room) AnswerAs(ctx context.Context, a Arrival, seed, nonce string) (Visit, error) {
	return r.answer(ctx, arrivalOf(a), Answer{Seed: seed, Nonce: nonce})
}

func arrivalOf(a Arrival) *arrival {
	return &arrival{client: a.Client, account: a.Account, hasAccount: a.HasAccount}
}

// PhaseLanesOf is the lanes report's phases for s, as the fairness report
// makes them (phaselanes.go), with the commitments r made.
func PhaseLanesOf(r *Room, s Settings, lanes []LaneAdmissions) []PhaseLanes {
	return phaseLanes(s, r.laneCommitTimes(), lanes)
}

// LineOrder is where key k stands in the line as this node's view has it:
// the place a phase's draw gave it, or k itself.
func (r *Room) LineOrder(k uint64) (uint64, bool) {
	if p, ok := r.view.Load().phasePlace(k); ok {
		return p, true
	}
	return k, false
}

// ResignedPasses is how many sessions' passes this node has signed again
// with the waitlist claim and keeps (claimReturns).
func (r *Room) ResignedPasses() int {
	r.resigned.mu.RLock()
	defer r.resigned.mu.RUnlock()
	return len(r.resigned.m)
}
