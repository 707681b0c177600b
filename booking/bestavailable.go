package booking

// Candidate is a free seat that best-available may choose.
type Candidate struct {
	ID     string
	Row    int
	Number int
}

// ChooseBestAvailable picks quantity seats from candidates sorted by row and
// number: the first run of adjacent seats in one row if there is one, else the
// row holding the most of them, else the first seats in order. It returns nil
// when there are too few candidates. Both stores use it, so best available
// behaves the same whatever the backend.
func ChooseBestAvailable(candidates []Candidate, quantity int) []Candidate {
	if quantity <= 0 || len(candidates) < quantity {
		return nil
	}
	runStart := 0
	for i := range candidates {
		if i > 0 && (candidates[i].Row != candidates[i-1].Row || candidates[i].Number != candidates[i-1].Number+1) {
			runStart = i
		}
		if i-runStart+1 == quantity {
			return candidates[runStart : i+1]
		}
	}
	// No adjacent run: keep the party in one row if any row has room.
	rowStart, bestStart, bestLen := 0, 0, 0
	for i := range candidates {
		if i > 0 && candidates[i].Row != candidates[i-1].Row {
			rowStart = i
		}
		if n := i - rowStart + 1; n > bestLen {
			bestStart, bestLen = rowStart, n
		}
	}
	if bestLen >= quantity {
		return candidates[bestStart : bestStart+quantity]
	}
	return candidates[:quantity]
}
