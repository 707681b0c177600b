package booking

import "slices"

// Validate checks the shape of a hold request before any store sees it, and
// sorts Seats so that every store locks seats in one order (no deadlocks
// between two holds that overlap). It returns the number of places asked for.
func (r *HoldRequest) Validate() (int, error) {
	if r.CustomerID == "" {
		return 0, Errorf(KindUnauthorized, CodeUnauthorized, "no customer")
	}
	if r.MaxPerCustomer <= 0 {
		r.MaxPerCustomer = DefaultMaxPerCustomer
	}
	if r.TTL <= 0 {
		return 0, Errorf(KindInvalid, CodeInvalidRequest, "hold time must be positive")
	}
	forms := 0
	if len(r.Seats) > 0 {
		forms++
	}
	if r.Section != "" {
		forms++
	}
	if r.Zone != "" {
		forms++
	}
	if forms != 1 {
		return 0, Errorf(KindInvalid, CodeInvalidRequest, `give exactly one of "seats", "section" with "quantity", or "zone" with "quantity"`)
	}
	if len(r.Seats) > 0 {
		if r.Quantity != 0 && r.Quantity != len(r.Seats) {
			return 0, Errorf(KindInvalid, CodeInvalidRequest, `"quantity" must be omitted or match "seats"`)
		}
		if len(r.Seats) > r.MaxPerCustomer {
			return 0, Errorf(KindUnprocessable, CodeOverLimit, "at most %d seats per customer", r.MaxPerCustomer)
		}
		r.Seats = slices.Clone(r.Seats)
		slices.Sort(r.Seats)
		for i, id := range r.Seats {
			if i > 0 && r.Seats[i-1] == id {
				return 0, Errorf(KindInvalid, CodeInvalidRequest, "seat %q is listed twice", id)
			}
			if _, _, _, ok := ParseSeatID(id); !ok {
				return 0, &Error{Kind: KindNotFound, Code: CodeSeatNotFound, Message: "no seat " + quote(id), Seats: []string{id}}
			}
		}
		r.Quantity = len(r.Seats)
		return r.Quantity, nil
	}
	if r.Quantity < 1 {
		return 0, Errorf(KindInvalid, CodeInvalidRequest, `"quantity" must be at least 1`)
	}
	if r.Quantity > r.MaxPerCustomer {
		return 0, Errorf(KindUnprocessable, CodeOverLimit, "at most %d seats per customer", r.MaxPerCustomer)
	}
	return r.Quantity, nil
}

func quote(s string) string {
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return `"` + s + `"`
}

// OverLimit is the error for a hold that would take the customer past the cap.
func OverLimit(limit, have int) error {
	return Errorf(KindUnprocessable, CodeOverLimit, "at most %d seats per customer per event; you already have %d", limit, have)
}

// SeatsUnavailable is the error for a seat-list hold that lost a race.
func SeatsUnavailable(seats []string) error {
	return &Error{Kind: KindConflict, Code: CodeSeatUnavailable, Message: "these seats are no longer available", Seats: seats}
}

// SoldOutIn is the error for best available or general admission with too few
// places left.
func SoldOutIn(where string, quantity int) error {
	return Errorf(KindConflict, CodeSoldOut, "fewer than %d places are available in %s", quantity, where)
}
