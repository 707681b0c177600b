-- The provider create request of each payment, as first sent: every retry,
-- from any process or the reconciler, sends it again unchanged under the
-- payment's idempotency key.
ALTER TABLE payments ADD COLUMN create_request jsonb;
