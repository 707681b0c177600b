package i18n

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/language"
	xmessage "golang.org/x/text/message"
	"golang.org/x/text/number"
)

// NumberFormat writes whole numbers as a language does: its digits, its
// grouping separator and its group sizes (1,234,567 in English, 1.234.567 in
// German, 12,34,567 in Hindi, ١٬٢٣٤٬٥٦٧ in Arabic). It is learnt once per
// language from golang.org/x/text/number, which has CLDR's patterns, so that
// a page or a poll formats a number without a message.Printer (which allocates on each
// call); the tests hold the two to the same output.
type NumberFormat struct {
	digits    [10]string
	group     string
	primary   int // digits in the rightmost group
	secondary int // digits in each group left of it
}

// NewNumberFormat learns how the language of tag writes whole numbers.
func NewNumberFormat(tag language.Tag) NumberFormat {
	p := xmessage.NewPrinter(tag)
	var f NumberFormat
	for d := range 10 {
		f.digits[d] = p.Sprint(number.Decimal(d))
	}
	// Group sizes and the separator, read off a number long enough to show
	// both sizes.
	s := p.Sprint(number.Decimal(1234567890))
	var groups []int
	run := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if f.digitOf(s[i:i+size]) >= 0 {
			run++
		} else {
			if run > 0 {
				groups = append(groups, run)
			}
			run = 0
			if f.group == "" {
				f.group = string(r)
			}
		}
		i += size
	}
	groups = append(groups, run)
	f.primary, f.secondary = 0, 0
	if n := len(groups); n >= 2 {
		f.primary = groups[n-1]
		f.secondary = groups[n-2]
	}
	return f
}

func (f *NumberFormat) digitOf(s string) int {
	for d, g := range f.digits {
		if g == s {
			return d
		}
	}
	return -1
}

// Format writes n.
func (f *NumberFormat) Format(n uint64) string {
	s := strconv.FormatUint(n, 10)
	if f.primary == 0 && f.digits[0] == "0" {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) * 3)
	for i := range len(s) {
		left := len(s) - i // digits from here to the end
		if i > 0 && f.primary > 0 && left >= f.primary && (left == f.primary || (left-f.primary)%f.secondary == 0) {
			b.WriteString(f.group)
		}
		b.WriteString(f.digits[s[i]-'0'])
	}
	return b.String()
}
