package waitingroom

import (
	"encoding/hex"
	"errors"
	"fmt"
)

// PlacedBy says what gave an order key its place (docs/PROTOCOL.md, "A fan's
// place, from their draw index").
type PlacedBy int

const (
	// PlacedByPrequeue: the pre-queue's draw, over the order keys 0 to
	// draw_size-1.
	PlacedByPrequeue PlacedBy = iota + 1
	// PlacedByEpoch: a rolling draw of the random method (Verdict.Epoch).
	PlacedByEpoch
	// PlacedByPhase: a phase's own pre-queue draw (Verdict.Phase), with
	// the phase's seed.
	PlacedByPhase
	// PlacedFirstCome: no draw covered the key, and the line got to it
	// first come, first served: the place is the order key.
	PlacedFirstCome
	// NotPlaced: in a random room, the key was waiting for the next rolling
	// draw when the sale ended. It has no place, and the line never reached
	// it.
	NotPlaced
)

// Verdict is what a published document says of one order key.
type Verdict struct {
	Index uint64
	By    PlacedBy
	// Place is the key's place (0 goes first), unless By is NotPlaced.
	Place uint64
	// DrawSize is the pre-queue's draw's size, with PlacedByPrequeue.
	DrawSize uint64
	// Epoch is the rolling draw that placed the key, with PlacedByEpoch.
	Epoch HistoryEntry
	// Phase is the phase's draw that placed the key, with PlacedByPhase.
	Phase PhaseDraw
	// Commitment is the commitment of the seed that was checked: the
	// phase's with PlacedByPhase, else the room's ("" when the room made
	// no draw of its own and no phase's covered the key).
	Commitment string
	// Admission is the report's admission that reached Place, if any.
	Admission *HistoryEntry
	// Reached: Place is below the report's serving, so the line reached it
	// (an incomplete report may have lost the admission that did).
	Reached bool
}

// checkSeed applies a verifier's checks to a published draw: the algorithm
// is this one, and the seed and the commitment are each 64 lowercase
// hexadecimal digits (the only form a room publishes), the seed's 32 bytes
// hashing to the commitment. It returns the seed's bytes.
func checkSeed(algorithm, seedHex, commitment string) ([]byte, error) {
	if algorithm != DrawAlgorithm {
		return nil, fmt.Errorf("the room names the algorithm %q, not %s: this verifier knows no other", algorithm, DrawAlgorithm)
	}
	if !lowerHex64(commitment) {
		return nil, errors.New("the commitment is not 64 lowercase hexadecimal digits")
	}
	if !lowerHex64(seedHex) {
		return nil, errors.New("the seed is not 64 lowercase hexadecimal digits (32 bytes)")
	}
	seed, _ := hex.DecodeString(seedHex)
	if DrawCommitment(seed) != commitment {
		return nil, errors.New("the seed does not match the commitment: SHA-256(seed) differs")
	}
	return seed, nil
}

// lowerHex64 reports whether s is exactly 64 digits of 0-9 and a-f.
func lowerHex64(s string) bool {
	if len(s) != 2*DrawSeedSize {
		return false
	}
	for _, c := range []byte(s) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// placeByDraw places index with the pre-queue's draw (drawSize, if any) or
// one of epochs; ok is false when none covers it.
func placeByDraw(seed []byte, drawSize *uint64, epochs []HistoryEntry, index uint64) (Verdict, bool) {
	v := Verdict{Index: index}
	if drawSize != nil && index < *drawSize {
		v.By, v.DrawSize, v.Place = PlacedByPrequeue, *drawSize, NewDraw(seed, *drawSize).Place(index)
		return v, true
	}
	for _, e := range epochs {
		if index >= e.Start && index-e.Start < e.Count {
			v.By, v.Epoch = PlacedByEpoch, e
			v.Place = e.Start + NewDraw(EpochSeed(seed, e.Number), e.Count).Place(index-e.Start)
			return v, true
		}
	}
	return v, false
}

// VerifyPlace recomputes, from a published report, what became of the fan
// whose status showed draw_index index (their order key): the place a draw
// gave them (the pre-queue's, or a rolling one of the random method), or the
// first-come place (the key itself) of a key no draw covered, or no place
// for a key still waiting for a rolling draw when the sale ended; and the
// admission that reached the place. It checks the algorithm and the seed
// against the commitment first; it is ErrNoDraw for a report without a draw,
// and an error for a key the room never handed out. docs/PROTOCOL.md is the
// same procedure in words.
func VerifyPlace(rep FairnessReport, index uint64) (Verdict, error) {
	if rep.Seed == "" && rep.Commitment == "" && rep.Algorithm == "" {
		return Verdict{}, ErrNoDraw
	}
	var seed []byte
	if rep.Seed != "" || rep.Commitment != "" || len(rep.PhaseDraws) == 0 {
		var err error
		if seed, err = checkSeed(rep.Algorithm, rep.Seed, rep.Commitment); err != nil {
			return Verdict{}, err
		}
	}
	v, ok, err := placeByPhase(rep.Algorithm, rep.PhaseDraws, index)
	if err != nil {
		return Verdict{}, err
	}
	if !ok {
		v, ok = placeByDraw(seed, rep.DrawSize, rep.Epochs, index)
		v.Commitment = rep.Commitment
	}
	switch {
	case ok:
	case index >= rep.Counts.Issued:
		return Verdict{}, neverIssued(index, rep.Counts.Issued)
	case rep.QueueingMethod == Random && index >= rep.Counts.Serving:
		v.By = NotPlaced
		return v, nil
	default:
		v.By, v.Place = PlacedFirstCome, index
	}
	v.Reached = v.Place < rep.Counts.Serving
	for i := range rep.Admissions {
		if e := &rep.Admissions[i]; v.Place >= e.Start && v.Place-e.Start < e.Count {
			v.Admission = e
			break
		}
	}
	return v, nil
}

// neverIssued is the error for a key at or above the report's issued.
func neverIssued(index, issued uint64) error {
	if issued == 0 {
		return fmt.Errorf("draw_index %d was never handed out: the room handed out no order key", index)
	}
	return fmt.Errorf("draw_index %d was never handed out: the room handed out the order keys 0 to %d", index, issued-1)
}

// VerifyDrawInfo recomputes a place from the draw endpoint's answer alone,
// which is enough for a key that the pre-queue's draw or one of the listed
// epochs covered, once the endpoint shows the seed. It says nothing of
// admissions. It is ErrNotInDrawInfo for any other key.
func VerifyDrawInfo(info DrawInfo, index uint64) (Verdict, error) {
	if !info.Enabled {
		return Verdict{}, ErrNoDraw
	}
	if v, ok, err := placeByPhase(info.Algorithm, info.PhaseDraws, index); err != nil || ok {
		return v, err
	}
	if info.Seed == "" {
		return Verdict{}, errors.New("the draw endpoint does not show the seed yet: it is revealed at the pre-queue's draw, or once the fairness report is published")
	}
	seed, err := checkSeed(info.Algorithm, info.Seed, info.Commitment)
	if err != nil {
		return Verdict{}, err
	}
	size := info.DrawSize
	if size == nil {
		size = info.Size
	}
	epochs := make([]HistoryEntry, len(info.Epochs))
	for i, e := range info.Epochs {
		epochs[i] = HistoryEntry{Kind: HistoryDraw, Start: e.Start, Count: max(e.Count, e.Size), Number: max(e.Epoch, e.Number)}
	}
	v, ok := placeByDraw(seed, size, epochs, index)
	if !ok {
		return Verdict{}, ErrNotInDrawInfo
	}
	v.Commitment = info.Commitment
	return v, nil
}

// placeByPhase places index with the phase draw whose range covers it, if
// any, after checking that phase's seed against its commitment; ok is
// false when no published phase draw covers it.
func placeByPhase(algorithm string, draws []PhaseDraw, index uint64) (Verdict, bool, error) {
	for _, pd := range draws {
		if pd.FirstKey == nil || pd.DrawSize == nil || index < *pd.FirstKey || index-*pd.FirstKey >= *pd.DrawSize {
			continue
		}
		seed, err := checkSeed(algorithm, pd.Seed, pd.Commitment)
		if err != nil {
			return Verdict{}, false, fmt.Errorf("phase %s's draw: %w", pd.Phase, err)
		}
		first, n := *pd.FirstKey, *pd.DrawSize
		return Verdict{
			Index: index, By: PlacedByPhase, Phase: pd, DrawSize: n, Commitment: pd.Commitment,
			Place: first + NewDraw(seed, n).Place(index-first),
		}, true, nil
	}
	return Verdict{}, false, nil
}

// CommittedInTime reports whether a phase's seed was committed before its
// pre-queue opened, as published: false when either time is missing.
func (pd PhaseDraw) CommittedInTime() bool {
	return pd.CommittedAt != nil && pd.PrequeueStart != nil && pd.CommittedAt.Before(*pd.PrequeueStart)
}
