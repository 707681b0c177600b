package payments

import (
	"encoding/json"
	"time"
)

// Webhook event types the fake provider sends, named as Stripe names them.
const (
	EventPaymentProcessing = "payment_intent.processing"
	EventPaymentSucceeded  = "payment_intent.succeeded"
	EventPaymentFailed     = "payment_intent.payment_failed"
	EventPaymentCanceled   = "payment_intent.canceled"
	EventChargeRefunded    = "charge.refunded"
)

// Event is a webhook body. ID is unique per event (not per delivery): a
// duplicate delivery carries the same ID, which is how receivers dedupe.
type Event struct {
	ID      string `json:"id"`
	Type    string `json:"type"`
	Created int64  `json:"created"`
	Data    struct {
		Object json.RawMessage `json:"object"`
	} `json:"data"`
}

// Payment decodes the event's object as a payment.
func (e Event) Payment() (Payment, error) {
	var p Payment
	err := json.Unmarshal(e.Data.Object, &p)
	return p, err
}

// NewEvent builds the body of a webhook event of type typ about a payment,
// created at t, with a new event id, which it returns too. The body is what
// a provider signs (Sign) and posts.
func NewEvent(typ string, obj Payment, t time.Time) (id string, body []byte) {
	object, _ := json.Marshal(obj)
	ev := Event{ID: "evt_" + randomHex(12), Type: typ, Created: t.Unix()}
	ev.Data.Object = object
	body, _ = json.Marshal(ev)
	return ev.ID, body
}
