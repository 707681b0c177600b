package gateway

import "strconv"

// count writes n with its noun in the right number: "1 person",
// "2 people", "0 places". Every count a person reads goes through it, so no
// page or command says "1 people".
func count(n uint64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.FormatUint(n, 10) + " " + many
}

// aheadOf says how many were ahead of a 0-based place, as a sentence's
// subject and verb: "nobody was ahead", "1 person was ahead", "3 people were
// ahead".
func aheadOf(place uint64) string {
	switch place {
	case 0:
		return "nobody was ahead"
	case 1:
		return "1 person was ahead"
	}
	return count(place, "person", "people") + " were ahead"
}

// placesBelow words the places under serving, the line's first place not
// yet reached: "no place", "place 0", "every place from 0 to 8". Serving
// itself is not among them.
func placesBelow(serving uint64) string {
	switch serving {
	case 0:
		return "no place (nobody was let in)"
	case 1:
		return "place 0"
	}
	return "every place from 0 to " + strconv.FormatUint(serving-1, 10)
}
