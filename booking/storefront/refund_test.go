package storefront

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/booking"
)

// TestRefundedOrderPage: the order page of a paid order that was refunded
// says it was refunded, not that its places were lost, shows none of its
// cancelled tickets (their codes admit nobody) and is done: it does not
// ask the fan to check again for tickets that will never be issued.
func TestRefundedOrderPage(t *testing.T) {
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	o := booking.Order{
		ID: "ord_1", EventID: 1, Status: booking.OrderRefunded, RefundReason: booking.RefundReturned, RefundedAt: &at,
		Amount: 12000, Currency: "EUR",
		Tickets: []booking.Ticket{
			{ID: "tkt_1", Seat: "A-1-1", CancelledAt: &at, Delivery: &booking.Delivery{Code: "tkt_1.delivered-code", DeliveredAt: at}},
			{ID: "tkt_2", Seat: "A-1-2", CancelledAt: &at},
		},
	}
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(struct {
			booking.Order
			Link string `json:"link"`
		}{o, "/tickets/ord_1.mac"})
	})
	h, err := New(Config{API: api, Files: shopFiles(t)})
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/orders/ord_1", nil))
	page := w.Body.String()
	if w.Code != http.StatusOK {
		t.Fatalf("order page: %d %s", w.Code, page)
	}
	// The page carries every message for its script: look at what it shows.
	for _, bad := range []string{"tkt_1.delivered-code", ">Check again</a>", "<h2>"} {
		if strings.Contains(page, bad) {
			t.Errorf("the refunded order's page shows %q", bad)
		}
	}
	if !strings.Contains(page, `<p class="status refund">This order was refunded. Its tickets have been cancelled.</p>`) {
		t.Error("the refunded order's page does not say it was refunded")
	}
}
