package inventorytest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/foyer-dev/foyer/booking"
)

// testPinPaymentRequest pins different requests for one order from many
// goroutines at once: the first one stored is the one every caller gets
// back, then and afterwards. The order is opened with no request pinned, as
// orders opened before checkouts pinned theirs were.
func testPinPaymentRequest(t *testing.T, f *fixture) {
	e := f.event(SmallVenue())
	h := f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "alice", Section: "A", Quantity: 1}, Epoch)
	o, err := f.s.BeginCheckout(f.ctx, h.ID, "alice", Epoch.Add(HoldTTL), Epoch, nil)
	if err != nil {
		t.Fatal(err)
	}
	if o.Payment.CreateRequest != nil {
		t.Fatalf("order opened without a request carries %q", o.Payment.CreateRequest)
	}
	const callers = 12
	got := make([]string, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			req := fmt.Sprintf(`{"return_url":"http://process-%d/orders/%s"}`, i, o.ID)
			pinned, err := f.s.PinPaymentRequest(f.ctx, o.ID, []byte(req))
			if err != nil {
				t.Errorf("caller %d: %v", i, err)
				return
			}
			var r struct {
				ReturnURL string `json:"return_url"`
			}
			if err := json.Unmarshal(pinned, &r); err != nil {
				t.Errorf("caller %d: pinned %q: %v", i, pinned, err)
			}
			got[i] = r.ReturnURL
		})
	}
	wg.Wait()
	for i := range got {
		if got[i] == "" || got[i] != got[0] {
			t.Fatalf("callers were given %q and %q; want one pinned request", got[0], got[i])
		}
	}
	later, err := f.s.PinPaymentRequest(f.ctx, o.ID, []byte(`{"return_url":"http://late"}`))
	if err != nil || !json.Valid(later) || string(later) == `{"return_url":"http://late"}` {
		t.Fatalf("a later pin = %s, %v; want the first request", later, err)
	}
	// The order carries what was pinned, so that a checkout retried later
	// finds it without pinning again.
	again, err := f.s.BeginCheckout(f.ctx, h.ID, "alice", Epoch.Add(HoldTTL), Epoch, requestOf)
	if err != nil || !json.Valid(again.Payment.CreateRequest) || !jsonEqual(again.Payment.CreateRequest, later) {
		t.Fatalf("checkout after the pin carries %s, %v; want %s", again.Payment.CreateRequest, err, later)
	}
	_, err = f.s.PinPaymentRequest(f.ctx, "ord_nope", []byte(`{}`))
	wantErr(t, err, booking.KindNotFound, booking.CodeOrderNotFound)
}

// jsonEqual reports whether a and b are the same JSON value, however spelt.
func jsonEqual(a, b []byte) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}
