package bench

// roundOrder is the order in which the n contenders of a comparison run in
// round r. Rounds come in twos: the first of the two runs a rotation of the
// contenders (one further along for every two rounds), the second runs the
// same order backwards.
//
// A fixed order would put the candidate last in every round. A machine that
// grows busier or quieter over a run (and a 2-core machine does, by several
// per cent over minutes) then weighs on the candidate more than on its
// baseline in every pair, and the median of the pairs cannot take out a bias
// that every pair shares. Running each order and then its reverse puts any
// two contenders as far apart one way as the other, so a steady drift favours
// each side of a ratio as often as the other, and the median takes it out;
// the rotation has every contender run in every place over 2n rounds.
func roundOrder(r, n int) []int {
	order := make([]int, n)
	for i := range order {
		order[i] = (r/2 + i) % n
	}
	if r%2 == 1 {
		for i, j := 0, n-1; i < j; i, j = i+1, j-1 {
			order[i], order[j] = order[j], order[i]
		}
	}
	return order
}
