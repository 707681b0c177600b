package booking

import "github.com/foyer-dev/foyer/booking/payments"

// VerifyWebhook checks a webhook's signature and age, nothing else. The API
// calls it before anything is stored for the request (its idempotency
// record included), so unsigned traffic costs the store nothing.
func (s *Service) VerifyWebhook(signature string, body []byte) error {
	if err := payments.Verify(s.cfg.WebhookSecret, signature, body, s.cfg.Clock.Now(), s.cfg.WebhookTolerance); err != nil {
		return &Error{Kind: KindInvalid, Code: CodeInvalidSignature, Message: "the webhook signature is missing, wrong or stale", Err: err}
	}
	return nil
}
