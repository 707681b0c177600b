package booking

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Money is an amount in cents. It travels as a decimal string ("120.00") so no
// client ever rounds a price through a float.
type Money int64

// maxPrice bounds a single price so sums over a venue cannot overflow.
const maxPrice Money = 100_000_000 // 1,000,000.00

// ParseMoney reads a non-negative decimal with at most two fraction digits.
func ParseMoney(s string) (Money, error) {
	whole, frac, hasFrac := strings.Cut(s, ".")
	if whole == "" || len(whole) > 7 || (hasFrac && (len(frac) == 0 || len(frac) > 2)) {
		return 0, fmt.Errorf("price %q is not a decimal like \"120.00\"", s)
	}
	for _, r := range whole + frac {
		if r < '0' || r > '9' {
			return 0, fmt.Errorf("price %q is not a decimal like \"120.00\"", s)
		}
	}
	w, _ := strconv.ParseInt(whole, 10, 64)
	for len(frac) < 2 {
		frac += "0"
	}
	f, _ := strconv.ParseInt(frac, 10, 64)
	m := Money(w*100 + f)
	if m > maxPrice {
		return 0, fmt.Errorf("price %q is over %s", s, maxPrice)
	}
	return m, nil
}

func (m Money) String() string {
	sign := ""
	if m < 0 {
		sign, m = "-", -m
	}
	return fmt.Sprintf("%s%d.%02d", sign, m/100, m%100)
}

// MarshalJSON writes the amount as a decimal string.
func (m Money) MarshalJSON() ([]byte, error) { return json.Marshal(m.String()) }

// UnmarshalJSON accepts only the decimal string form.
func (m *Money) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("price must be a string like \"120.00\"")
	}
	v, err := ParseMoney(s)
	if err != nil {
		return err
	}
	*m = v
	return nil
}
