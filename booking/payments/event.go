package payments

import "encoding/json"

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
