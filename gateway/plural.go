package gateway

import (
	"strconv"

	"golang.org/x/text/feature/plural"
	"golang.org/x/text/language"
)

// count writes n with its noun in the right number for English, by CLDR's
// plural rules (golang.org/x/text/feature/plural): "1 person", "2 people",
// "0 places". Operators' commands and pages are in English; what fans read
// goes through the message catalogs (package i18n) instead.
func count(n uint64, one, many string) string {
	noun := many
	if englishOne(n) {
		noun = one
	}
	return strconv.FormatUint(n, 10) + " " + noun
}

// englishOne reports whether n takes English's singular.
func englishOne(n uint64) bool {
	return plural.Cardinal.MatchPlural(language.English, int(min(n, 1<<30)), 0, 0, 0, 0) == plural.One
}

// aheadOf says how many were ahead of a 0-based place, as a sentence's
// subject and verb: "nobody was ahead", "1 person was ahead", "3 people were
// ahead".
func aheadOf(place uint64) string {
	if place == 0 {
		return "nobody was ahead"
	}
	verb := " were ahead"
	if englishOne(place) {
		verb = " was ahead"
	}
	return count(place, "person", "people") + verb
}
