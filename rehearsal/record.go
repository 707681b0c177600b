package rehearsal

// note counts an unexpected thing a fan met, by message.
func (r *rehearsal) note(msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.notes[msg]; ok || len(r.notes) < 100 {
		r.notes[msg]++
	} else {
		r.notes["(other messages)"]++
	}
}

// notePass checks that no two fans were handed a pass for the same visitor,
// and that every pass is for this room.
func (r *rehearsal) notePass(fan int32, c passClaims) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if prev, ok := r.subs[c.Subject]; ok && prev != fan {
		r.dupSubs++
	}
	r.subs[c.Subject] = fan
	if c.Audience != rehearsalRoom {
		r.badAud++
	}
}

// recordOrder keeps a delivered order's places, to count tickets per seat.
func (r *rehearsal) recordOrder(o orderJSON, revoked, fromWaitlist bool) {
	seen := orderSeen{revoked: revoked, fromWaitlist: fromWaitlist, amount: o.Amount, currency: o.Currency, paymentID: o.Payment.ProviderPaymentID}
	if o.PaidAt != nil {
		seen.paidAt = *o.PaidAt
	}
	for _, t := range o.Tickets {
		if t.Seat != "" {
			seen.seats = append(seen.seats, t.Seat)
		} else {
			seen.zones = append(seen.zones, t.Zone)
		}
	}
	r.mu.Lock()
	_, again := r.orders[o.ID]
	r.orders[o.ID] = seen
	r.mu.Unlock()
	if again {
		return
	}
	r.live.bought.Add(1)
	if n := r.live.places.Add(int64(len(o.Tickets))); n >= int64(r.capacity) {
		r.live.soldAllSeen.CompareAndSwap(0, int64(r.now()))
	}
}

func bookingStore(databaseURL string) string {
	if databaseURL == "" {
		return "memory"
	}
	return "PostgreSQL"
}
